"""Small distance helpers shared by the fitness terms and the targets' reference statistics.

Everything here is plain NumPy on arrays already in memory; nothing reads data of its own.
"""

from __future__ import annotations

import numpy as np


def pairwise_distances(x: np.ndarray) -> np.ndarray:
    """Euclidean distances between the rows of ``x`` (n, d) → (n, n), zero diagonal.

    Rows are centred first: ‖a‖² + ‖b‖² − 2aᵀb loses precision when the points sit
    far from the origin compared with their spread, and the near-duplicate test
    needs small distances to be accurate.
    """
    centred = x - x.mean(axis=0)
    squared = np.einsum("ij,ij->i", centred, centred)
    d2 = squared[:, None] + squared[None, :] - 2.0 * (centred @ centred.T)
    np.maximum(d2, 0.0, out=d2)
    np.fill_diagonal(d2, 0.0)
    return np.sqrt(d2, out=d2)


def knn_radii(distances: np.ndarray, k: int) -> np.ndarray:
    """Distance from each point to its k-th nearest *other* point, from a square distance matrix."""
    n = distances.shape[0]
    if not 1 <= k <= n - 1:
        raise ValueError(f"k must be in 1..{n - 1} for {n} points, got {k}")
    masked = distances.copy()
    np.fill_diagonal(masked, np.inf)
    return np.partition(masked, k - 1, axis=1)[:, k - 1]


def mean_pairwise_distance(distances: np.ndarray) -> float:
    """Mean distance over distinct pairs (the diagonal is zero and excluded); 0 for fewer than 2 points."""
    n = distances.shape[0]
    if n < 2:
        return 0.0
    return float(distances.sum() / (n * (n - 1)))


def class_indices(labels: np.ndarray, num_classes: int) -> list[np.ndarray]:
    """Row indices of each class 0 … K−1 (stable order)."""
    order = np.argsort(labels, kind="stable")
    bounds = np.searchsorted(labels[order], np.arange(num_classes + 1))
    return [order[bounds[k]:bounds[k + 1]] for k in range(num_classes)]


def even_subsample(n: int, size: int) -> np.ndarray:
    """``size`` evenly spaced indices into 0 … n−1 (all of them when ``size >= n``); deterministic."""
    if size >= n:
        return np.arange(n)
    return np.round(np.linspace(0, n - 1, size)).astype(np.int64)
