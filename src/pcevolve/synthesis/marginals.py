"""A table's generator without a public pool: each class's released column marginals, and rows drawn from them.

:class:`MarginalModel` holds only released values and what post-processing makes of them: the columns' bins
(:mod:`~pcevolve.synthesis.bins`), each class's noisy histogram over each column's bins, the noisy class sizes.
:meth:`MarginalModel.from_release` turns the noisy counts into probabilities (post-processing, free):

* a class's size is the inverse-variance weighted mean of its noisy count and of its d histograms' sums (the count
  carries noise σ², a histogram of B bins B·σ²);
* a class's histogram of a column becomes its deviation from the column's marginal over all classes, kept in
  proportion max(0, 1 − s · E_noise / E_observed) — the noise's expected energy in that deviation (B·σ² / n̂²) over
  the energy observed (James–Stein, ``shrinkage`` s): a column whose classes differ by less than the noise gets
  nearly the pooled marginal in every class, so the noise invents no label signal; then negatives are cut to 0 and
  the rest normalised (uniform when nothing is left).

:meth:`MarginalModel.sample` draws rows class by class, every column independently from the class's marginal, a
numeric value at a uniform position in its bin (:meth:`~pcevolve.synthesis.bins.ColumnBins.value`): the delivered
rows are post-processing of the release and public randomness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pcevolve.data.table_schema import TableSchema
from pcevolve.io import atomic_write_npz
from pcevolve.synthesis.bins import ColumnBins


@dataclass(frozen=True)
class MarginalModel:
    """Per class, a probability over every column's bins, and the released class sizes.

    Attributes:
        bins: Each column's bins, in schema order.
        probabilities: Per column, a (K, B) array: row k is class k's distribution over the column's bins.
        class_sizes: The released (noisy, post-processed) class sizes n̂, at least 1 each.
    """

    bins: tuple[ColumnBins, ...]
    probabilities: tuple[np.ndarray, ...]
    class_sizes: np.ndarray = field(repr=False)

    @property
    def classes(self) -> int:
        return len(self.class_sizes)

    @classmethod
    def from_release(cls, bins: Sequence[ColumnBins], counts: np.ndarray, histograms: Sequence[np.ndarray], *,
                     noise_std: float, shrinkage: float) -> MarginalModel:
        """The model from the released class ``counts`` (K) and per-column class ``histograms`` ((K, B) each) whose
        every cell carries Gaussian noise of ``noise_std`` (module docstring; post-processing only)."""
        counts = np.asarray(counts, dtype=np.float64)
        weights = np.array([1.0] + [1.0 / b.size for b in bins])
        estimates = np.stack([counts, *(np.asarray(h).sum(axis=1) for h in histograms)])
        sizes = np.maximum((weights[:, None] * estimates).sum(axis=0) / weights.sum(), 1.0)
        probabilities = tuple(_shrunk(np.asarray(h, dtype=np.float64), sizes, noise_std, shrinkage)
                              for h in histograms)
        return cls(tuple(bins), probabilities, sizes)

    def sample(self, counts: Sequence[int], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``counts[k]`` rows of each class k: every column drawn independently from the class's marginal.

        Returns:
            Rows (float64 (N, d), stored values in schema order) and their labels (int64 (N,)).
        """
        rows, labels = [], []
        for k, n in enumerate(counts):
            if n <= 0:
                continue
            x = np.empty((int(n), len(self.bins)))
            for j, (bins, probabilities) in enumerate(zip(self.bins, self.probabilities, strict=True)):
                chosen = rng.choice(bins.size, size=int(n), p=probabilities[k])
                x[:, j] = bins.value(chosen, rng.random(int(n)))
            rows.append(x)
            labels.append(np.full(int(n), k, dtype=np.int64))
        if not rows:
            return np.zeros((0, len(self.bins))), np.zeros(0, np.int64)
        return np.concatenate(rows), np.concatenate(labels)

    def save(self, path: Path, **released: np.ndarray) -> None:
        """The model's arrays (and the raw ``released`` values beside them) as an ``.npz``: DP outputs only."""
        arrays: dict[str, np.ndarray] = {"class_sizes": self.class_sizes, **released}
        for j, (bins, probabilities) in enumerate(zip(self.bins, self.probabilities, strict=True)):
            arrays[f"probabilities_{j}"] = probabilities
            if bins.edges is not None:
                arrays[f"edges_{j}"] = bins.edges
            if bins.fine_edges is not None and bins.fine_weights is not None:
                arrays[f"fine_edges_{j}"], arrays[f"fine_weights_{j}"] = bins.fine_edges, bins.fine_weights
        atomic_write_npz(path, **arrays)

    @classmethod
    def load(cls, path: Path, schema: TableSchema) -> MarginalModel:
        """A model :meth:`save` wrote, for the columns of ``schema``."""
        with np.load(path, allow_pickle=False) as arrays:
            bins, probabilities = [], []
            for j, column in enumerate(schema.columns):
                fine = f"fine_edges_{j}" in arrays
                bins.append(ColumnBins(column, arrays[f"edges_{j}"] if f"edges_{j}" in arrays else None,
                                       arrays[f"fine_edges_{j}"] if fine else None,
                                       arrays[f"fine_weights_{j}"] if fine else None))
                probabilities.append(arrays[f"probabilities_{j}"])
            return cls(tuple(bins), tuple(probabilities), arrays["class_sizes"])


def _shrunk(histograms: np.ndarray, sizes: np.ndarray, noise_std: float, shrinkage: float) -> np.ndarray:
    """Each class's distribution over one column's bins from its noisy histogram (module docstring)."""
    bins = histograms.shape[1]
    pooled = np.maximum(histograms.sum(axis=0), 0.0)
    pooled = pooled / pooled.sum() if pooled.sum() > 0 else np.full(bins, 1.0 / bins)
    out = np.empty_like(histograms)
    for k in range(histograms.shape[0]):
        deviation = histograms[k] / sizes[k] - pooled
        if shrinkage > 0:
            energy = float((deviation ** 2).sum())
            noise = bins * (noise_std / sizes[k]) ** 2
            deviation = deviation * (max(0.0, 1.0 - shrinkage * noise / energy) if energy > 0 else 0.0)
        q = np.maximum(pooled + deviation, 0.0)
        out[k] = q / q.sum() if q.sum() > 0 else pooled
    return out
