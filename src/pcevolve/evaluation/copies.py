"""Copy check: how close does each synthetic sample come to a private one (a privacy check, shown in the report).

A synthetic set that contains a private sample, or something a few pixels away from
one, leaks that sample whatever the membership attacks say on average. This module
finds, for every candidate (a synthetic sample, or an image about to go into the
report), its nearest private sample in Euclidean distance, on the flattened values
as given: pixels for images, the vector itself for features.

Distances are only meaningful against a scale, so :func:`copy_check` also reports the
leave-one-out nearest-neighbour distances *within* the private set: a synthetic sample
closer to a private one than private samples usually are to each other is suspicious.
:func:`find_near_copies` is the predicate the report uses to prove it embeds no
private image (threshold 0 means exact copies only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pcevolve.evaluation.shipped import shared_distance, shared_rate

#: Rows of the query set handled at once; bounds memory at ``_BLOCK × len(reference)`` floats.
_BLOCK = 1024
#: Near-copy threshold for 8-bit images, as a root-mean-square difference per value (grey levels out of 255).
#: 10 is below what separates two different real images (measured on the demo data in docs/method.md, "Evaluation")
#: yet well above re-encoding noise (PNG round trips are exact; a ±1 rounding everywhere is 1 RMS).
NEAR_COPY_RMS = 10.0


def as_rows(samples: np.ndarray, *, name: str = "samples") -> np.ndarray:
    """(N, ...) array → (N, D) float64, one flattened sample per row."""
    array = np.asarray(samples)
    if array.ndim < 1 or len(array) == 0:
        raise ValueError(f"{name} must hold at least one sample, got shape {array.shape}")
    return array.reshape(len(array), -1).astype(np.float64, copy=False)


def squared_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """All pairwise squared Euclidean distances between rows of ``a`` and ``b`` (clipped at 0)."""
    d2 = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * (a @ b.T)
    return np.maximum(d2, 0.0, out=d2)


def nearest_neighbours(queries: np.ndarray, reference: np.ndarray, *,
                       exclude_self: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """For each query, the index of and Euclidean distance to its nearest reference sample.

    Args:
        queries: (N, ...) samples; flattened per sample.
        reference: (M, ...) samples of the same per-sample size.
        exclude_self: ``queries`` is ``reference``; skip each sample's own row (leave-one-out).

    Returns:
        ``(indices, distances)``: int64 (N,) rows of ``reference`` and float64 (N,) distances.
        Ties go to the lowest index. Exact duplicates give distance 0 exactly.
    """
    q, r = as_rows(queries, name="queries"), as_rows(reference, name="reference")
    if q.shape[1] != r.shape[1]:
        raise ValueError(f"queries have {q.shape[1]} values per sample, reference {r.shape[1]}")
    if exclude_self and (len(q) != len(r) or len(r) < 2):
        raise ValueError("exclude_self needs queries to be the reference itself, with at least 2 samples")
    indices = np.empty(len(q), np.int64)
    distances = np.empty(len(q), np.float64)
    for start in range(0, len(q), _BLOCK):
        block = q[start : start + _BLOCK]
        d2 = squared_distances(block, r)
        if exclude_self:
            rows = np.arange(len(block))
            d2[rows, start + rows] = np.inf
        best = d2.argmin(1)
        indices[start : start + len(block)] = best
        # Recompute the winner's distance directly: the expanded formula above loses the exact 0
        # of a true copy to rounding, and "is it an exact copy" must have an exact answer.
        diff = block - r[best]
        distances[start : start + len(block)] = np.sqrt((diff * diff).sum(1))
    return indices, distances


def distance_summary(distances: np.ndarray) -> dict[str, float]:
    """min, 1st/5th/50th percentiles, mean and max of a distance sample (JSON-ready)."""
    d = np.asarray(distances, dtype=np.float64)
    p1, p5, p50 = np.percentile(d, [1, 5, 50])
    return {"min": float(d.min()), "p1": float(p1), "p5": float(p5), "median": float(p50),
            "mean": float(d.mean()), "max": float(d.max())}


@dataclass(frozen=True)
class CopyCheck:
    """Outcome of :func:`copy_check`.

    Attributes:
        nearest_index: (N,) row of the private set nearest to each candidate.
        nearest_distance: (N,) Euclidean distance to it.
        private_nn_distance: (M,) leave-one-out nearest-neighbour distance within the private set —
            the scale against which ``nearest_distance`` is read.
    """

    nearest_index: np.ndarray
    nearest_distance: np.ndarray
    private_nn_distance: np.ndarray

    def near_copies(self, threshold: float) -> np.ndarray:
        """Indices of the candidates whose nearest private sample is at distance ≤ ``threshold``."""
        return np.flatnonzero(self.nearest_distance <= threshold)

    def closer_than_private_fraction(self) -> float:
        """Fraction of candidates closer to the private set than the 1st percentile of private-to-private NN
        distances — about 0.01 for samples drawn like fresh private data, more for memorised ones."""
        return float((self.nearest_distance < np.percentile(self.private_nn_distance, 1)).mean())

    def to_json(self) -> dict[str, Any]:
        """Every figure, exact: for ``secure/`` (:meth:`to_shared_json` is what a shared report carries)."""
        return {"candidates": int(len(self.nearest_distance)),
                "exact_copies": int((self.nearest_distance == 0).sum()),
                "candidate_to_private": distance_summary(self.nearest_distance),
                "private_to_private": distance_summary(self.private_nn_distance),
                "closer_than_private_p1": self.closer_than_private_fraction()}

    def to_shared_json(self) -> dict[str, Any]:
        """What a shared report carries: whether some candidate is an exact copy, not how many (when every private
        sample was copied, that count is the private set's size); the candidate-to-private distances by
        :func:`~pcevolve.evaluation.shipped.shared_distance` and the share closer than the private set's own 1st
        percentile by :func:`~pcevolve.evaluation.shipped.shared_rate`; no private-to-private distance (a statistic
        of the private samples alone)."""
        return {"candidates": int(len(self.nearest_distance)),
                "any_exact_copy": bool((self.nearest_distance == 0).any()),
                "candidate_to_private": {key: shared_distance(value)
                                         for key, value in distance_summary(self.nearest_distance).items()},
                "closer_than_private_p1": shared_rate(self.closer_than_private_fraction())}


def copy_check(candidates: np.ndarray, private: np.ndarray) -> CopyCheck:
    """Nearest private sample of every candidate, with the private set's own NN distances for scale.

    Args:
        candidates: (N, ...) synthetic samples (or images bound for the report).
        private: (M, ...) private samples, M ≥ 2, same per-sample size.
    """
    index, distance = nearest_neighbours(candidates, private)
    _, private_nn = nearest_neighbours(private, private, exclude_self=True)
    return CopyCheck(nearest_index=index, nearest_distance=distance, private_nn_distance=private_nn)


def near_copy_threshold(sample_shape: tuple[int, ...], *, rms: float = NEAR_COPY_RMS) -> float:
    """Euclidean near-copy threshold for samples of ``sample_shape``: ``rms · √(values per sample)``."""
    return float(rms * np.sqrt(np.prod(sample_shape)))


def find_near_copies(candidates: np.ndarray, private: np.ndarray, threshold: float) -> np.ndarray:
    """Indices (ascending) of the candidates within Euclidean ``threshold`` of some private sample.

    ``threshold=0`` finds exact copies only. An empty result is the proof that none of
    ``candidates`` is (near) a private sample.
    """
    if not threshold >= 0:
        raise ValueError(f"threshold must be >= 0, got {threshold}")
    _, distance = nearest_neighbours(candidates, private)
    return np.flatnonzero(distance <= threshold)
