"""A candidate synthetic set, validated once against the targets, with its within-class geometry cached.

Every fitness term takes a :class:`Candidate`, so :func:`pcevolve.fitness.evaluate` checks
the arrays once and computes each class's distance matrix once for all the terms that need it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from pcevolve.fitness.geometry import class_indices, pairwise_distances

if TYPE_CHECKING:
    from pcevolve.fitness.targets import FitnessTargets

MIN_PER_CLASS = 2


def _checked_features(name: str, value: np.ndarray, dim: int, rows: int | None = None) -> np.ndarray:
    x = np.array(value, dtype=np.float64, copy=True)
    if x.ndim != 2 or x.shape[1] != dim or (rows is not None and x.shape[0] != rows):
        raise ValueError(f"{name} must have shape ({'n' if rows is None else rows}, {dim}), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} contain non-finite values")
    x.setflags(write=False)
    return x


@dataclass(frozen=True, eq=False)
class Candidate:
    """Features (n, P), intended labels (n,) and optional round-trip features (n, P) of one synthetic set.

    Build with :meth:`of`, which copies and checks the arrays. Attributes are read-only.
    """

    features: np.ndarray
    labels: np.ndarray
    groups: list[np.ndarray]
    roundtrip: np.ndarray | None = None
    _distances: dict[int, np.ndarray] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, features: np.ndarray, labels: np.ndarray, targets: "FitnessTargets", *,
           roundtrip: np.ndarray | None = None) -> "Candidate":
        """Check a candidate against the targets' class count and dimension.

        Raises:
            ValueError: wrong shapes, non-finite values, labels outside 0 … K−1, or a class
                with fewer than 2 points (the within-class terms need pairs).
        """
        x = _checked_features("features", features, targets.dim)
        y = np.asarray(labels)
        if y.shape != (x.shape[0],):
            raise ValueError(f"labels must have shape ({x.shape[0]},), got {y.shape}")
        if not np.issubdtype(y.dtype, np.integer):
            raise ValueError(f"labels must be integers, got dtype {y.dtype}")
        if y.size and (y.min() < 0 or y.max() >= targets.num_classes):
            raise ValueError(f"labels must lie in 0..{targets.num_classes - 1}")
        y = y.astype(np.int64)
        y.setflags(write=False)
        groups = class_indices(y, targets.num_classes)
        small = [k for k, g in enumerate(groups) if g.size < MIN_PER_CLASS]
        if small:
            raise ValueError(f"every class needs at least {MIN_PER_CLASS} candidate points; classes {small} have "
                             "fewer")
        rt = None if roundtrip is None else _checked_features("roundtrip", roundtrip, targets.dim, x.shape[0])
        return cls(features=x, labels=y, groups=groups, roundtrip=rt)

    @property
    def size(self) -> int:
        return int(self.features.shape[0])

    def class_features(self, k: int) -> np.ndarray:
        return self.features[self.groups[k]]

    def class_distances(self, k: int) -> np.ndarray:
        """Pairwise distances within class k (computed once, read-only)."""
        if k not in self._distances:
            distances = pairwise_distances(self.class_features(k))
            distances.setflags(write=False)
            self._distances[k] = distances
        return self._distances[k]
