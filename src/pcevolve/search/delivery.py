"""Delivery: decode the best candidate at full size, class sizes from the DP counts, and the delivered arrays.

The samples themselves are written by the modality (``pcevolve.data.writers``) in the input's own format."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pcevolve.fitness import FitnessTargets, dp_gaussian_predict
from pcevolve.io import atomic_write_npz
from pcevolve.search.basis import PublicBasis, unit_rows
from pcevolve.search.space import SearchSpace

if TYPE_CHECKING:
    from pcevolve.config import SearchConfig
    from pcevolve.decoders import Decoder
    from pcevolve.encoders import ImageEncoder
    from pcevolve.privacy import NoisyClassStatistics
    from pcevolve.decoders.territories import ClassTerritories


@dataclass(frozen=True, eq=False)
class DecodedSet:
    """A decoded synthetic set: search coordinates, feature directions, samples, labels and the re-encode check."""

    coordinates: np.ndarray
    features: np.ndarray
    samples: np.ndarray
    labels: np.ndarray
    reencoded_classes: np.ndarray
    cosine: np.ndarray
    drawn_agreement: float

    @property
    def agreement(self) -> float:
        """Share of delivered samples re-encoded into their own class."""
        return float(np.mean(self.reencoded_classes == self.labels)) if len(self.labels) else float("nan")


def largest_remainder(total: int, weights: np.ndarray) -> np.ndarray:
    """``total`` split into integers in proportion to positive ``weights``: floors first, then one more to the
    largest remainders (ties in class order), so the parts sum to ``total`` exactly."""
    weights = np.asarray(weights, dtype=np.float64)
    quotas = total * weights / weights.sum()
    sizes = np.floor(quotas).astype(np.int64)
    sizes[np.argsort(-(quotas - sizes), kind="stable")[: total - int(sizes.sum())]] += 1
    return sizes


def delivery_counts(noisy_counts: np.ndarray, *, per_class: int | None, multiplier: int | None = None) -> np.ndarray:
    """Per-class delivered size from the *noisy* counts (post-processing of the release).

    ``multiplier`` given: that many times each class's noisy count (rounded, at least 1).
    Otherwise ``per_class × K`` samples in all, split in proportion to the noisy counts
    (negative or tiny counts read as 1) by largest remainder, so the total is exact and
    every class gets at least one.
    """
    counts = np.maximum(np.asarray(noisy_counts, dtype=np.float64), 1.0)
    if multiplier is not None:
        return np.round(counts).astype(np.int64) * int(multiplier)
    if per_class is None or per_class < 1:
        raise ValueError(f"per_class must be at least 1, got {per_class}")
    total = int(per_class) * len(counts)
    # One per class first, the rest in proportion: no class is left empty whatever its noisy count.
    return largest_remainder(total - len(counts), counts) + 1


def configured_delivery_counts(search: "SearchConfig", statistics: "NoisyClassStatistics") -> np.ndarray:
    """:func:`delivery_counts` with a run's ``search`` settings, from the release's class sizes
    (:meth:`~pcevolve.privacy.NoisyClassStatistics.class_sizes`)."""
    return delivery_counts(statistics.class_sizes(), per_class=search.synthetic_per_class,
                           multiplier=search.synthetic_multiplier)


def decode_candidate(space: SearchSpace, individual: np.ndarray, counts: np.ndarray, *, oversample: float,
                     rng: np.random.Generator, basis: PublicBasis, encoder: ImageEncoder, decoder: Decoder,
                     targets: FitnessTargets, territories: ClassTerritories | None = None) -> DecodedSet:
    """Sample ``oversample × counts`` per class, decode, re-encode every sample, keep ``counts`` (consistent first).

    The decoder owns the round trip (``decode_and_encode``): a retrieval decoder returns the stored
    encodings with the samples and no sample twice while its pool (or, with ``territories``, the
    class's territory) lasts; a generator's samples are re-encoded.

    Post-processing of the release: reads the DP targets, the released encoder and decoder, and
    synthetic samples only.
    """
    counts = np.asarray(counts, dtype=np.int64)
    drawn = np.ceil(counts * oversample).astype(np.int64)
    z, labels = space.sample_counts(individual, drawn, rng)
    features = basis.expand(z).astype(np.float32)
    samples, encodings = decoder.decode_and_encode(features, labels, encoder=encoder, territories=territories)
    cosine = np.sum(unit_rows(encodings) * unit_rows(features), axis=1)
    reencoded = dp_gaussian_predict(basis.reduce(encodings), targets)
    keep = select_consistent(labels, reencoded, counts)
    return DecodedSet(coordinates=z[keep], features=features[keep], samples=samples[keep], labels=labels[keep],
                      reencoded_classes=reencoded[keep], cosine=cosine[keep],
                      drawn_agreement=float(np.mean(reencoded == labels)))


def write_synthetic_arrays(path: str | os.PathLike[str], *, features: np.ndarray, coordinates: np.ndarray,
                           labels: np.ndarray, class_names: Sequence[str], reencoded_classes: np.ndarray) -> Path:
    """``synthetic.npz``: requested features, search coordinates, labels, class names, re-encoded class."""
    return atomic_write_npz(path, features=np.asarray(features, np.float32),
                            coordinates=np.asarray(coordinates, np.float32), labels=np.asarray(labels, np.int64),
                            class_names=np.array(list(class_names)),
                            reencoded_classes=np.asarray(reencoded_classes, np.int64))


def select_consistent(labels: np.ndarray, reencoded_classes: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Indices of ``counts[k]`` samples per class k, those re-encoded into their own class first.

    Within each class, samples keep their drawing order: first the consistent ones, then (only if
    too few are consistent) the others, so every class gets exactly its count whenever it has
    enough samples. Pure post-processing of synthetic data.

    Raises:
        ValueError: A class has fewer samples than its count.
    """
    labels = np.asarray(labels)
    consistent = np.asarray(reencoded_classes) == labels
    chosen = []
    for k, count in enumerate(np.asarray(counts, dtype=np.int64)):
        rows = np.flatnonzero(labels == k)
        if len(rows) < count:
            raise ValueError(f"class {k} has {len(rows)} samples, fewer than the {count} to deliver")
        ordered = np.concatenate([rows[consistent[rows]], rows[~consistent[rows]]])
        chosen.append(np.sort(ordered[:count]))
    return np.concatenate(chosen) if chosen else np.zeros(0, dtype=np.int64)
