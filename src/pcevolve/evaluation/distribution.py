"""Distribution distances between a synthetic and a real sample, in a feature space.

All three are "lower is better" and take (N, D) arrays (any (N, ...) is flattened):

* :func:`mmd_rbf` — unbiased MMD² with a Gaussian kernel. The unbiased estimator can be
  slightly negative when the two samples agree; it is reported as computed, not clipped,
  so that its noise is visible. Default bandwidth: the median heuristic on the pooled
  sample (:func:`median_bandwidth`); pass a fixed ``bandwidth`` to compare several
  candidate sets on one scale.
* :func:`sliced_wasserstein` — the p-Wasserstein distance averaged over random 1-D
  projections, ``(mean_θ W_p(θ·x, θ·y)^p)^{1/p}``, exact in each projection for samples
  of any sizes.
* :func:`frechet_distance` — the Fréchet (2-Wasserstein) distance between Gaussians fitted
  to each sample; FID when the features are Inception's, and the same formula here in
  whatever independent feature space the report uses.

:func:`per_class` evaluates any of them per class and overall.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from pcevolve.evaluation.copies import as_rows, squared_distances
from pcevolve.evaluation.shipped import shared_distance

#: Most points per side used for the median heuristic (its cost is quadratic in the pooled size).
MEDIAN_POINTS = 1000
_BLOCK = 1024


def _paired(x: np.ndarray, y: np.ndarray, *, least: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = as_rows(x, name="x"), as_rows(y, name="y")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"x has {a.shape[1]} values per sample, y has {b.shape[1]}")
    if len(a) < least or len(b) < least:
        raise ValueError(f"need at least {least} samples on each side, got {len(a)} and {len(b)}")
    return a, b


def _strided(rows: np.ndarray, most: int) -> np.ndarray:
    # Evenly spaced rows, not random ones: deterministic without a generator, and spread over
    # class-sorted data.
    if len(rows) <= most:
        return rows
    return rows[np.linspace(0, len(rows) - 1, most).round().astype(np.int64)]


def median_bandwidth(x: np.ndarray, y: np.ndarray) -> float:
    """Median heuristic: the median Euclidean distance between distinct points of the pooled sample.

    Each side is thinned to at most :data:`MEDIAN_POINTS` evenly spaced rows first. Falls back
    to 1.0 when every pooled point is the same.
    """
    a, b = _paired(x, y, least=1)
    pooled = np.concatenate([_strided(a, MEDIAN_POINTS), _strided(b, MEDIAN_POINTS)])
    d2 = squared_distances(pooled, pooled)[np.triu_indices(len(pooled), k=1)]
    median = float(np.sqrt(np.median(d2))) if d2.size else 0.0
    return median if median > 0 else 1.0


def _kernel_sum(a: np.ndarray, b: np.ndarray, gamma: float) -> float:
    total = 0.0
    for start in range(0, len(a), _BLOCK):
        total += float(np.exp(-gamma * squared_distances(a[start : start + _BLOCK], b)).sum())
    return total


def mmd_rbf(x: np.ndarray, y: np.ndarray, bandwidth: float | None = None) -> float:
    """Unbiased MMD² between two samples with the kernel ``exp(-‖a − b‖² / (2·bandwidth²))``.

    Args:
        x: (m, ...) sample, m ≥ 2.
        y: (n, ...) sample, n ≥ 2, same per-sample size.
        bandwidth: Kernel width σ; ``None`` uses :func:`median_bandwidth` of the pooled sample.

    Returns:
        ``mean_{i≠j} k(x_i, x_j) + mean_{i≠j} k(y_i, y_j) − 2·mean_{i,j} k(x_i, y_j)``: 0 in
        expectation when both come from one distribution (so it may be slightly negative).
    """
    a, b = _paired(x, y, least=2)
    sigma = median_bandwidth(a, b) if bandwidth is None else float(bandwidth)
    if not sigma > 0:
        raise ValueError(f"bandwidth must be > 0, got {bandwidth}")
    gamma = 1.0 / (2.0 * sigma * sigma)
    m, n = len(a), len(b)
    # k(z, z) = 1 on the diagonal: drop it from the within-sample sums.
    xx = (_kernel_sum(a, a, gamma) - m) / (m * (m - 1))
    yy = (_kernel_sum(b, b, gamma) - n) / (n * (n - 1))
    xy = _kernel_sum(a, b, gamma) / (m * n)
    return xx + yy - 2.0 * xy


def _wasserstein_1d(xs: np.ndarray, ys: np.ndarray, order: float) -> np.ndarray:
    """W_p^p between the columns of sorted ``xs`` (m, P) and ``ys`` (n, P), via their quantile functions.

    Both quantile functions are step functions on [0, 1] with steps at i/m and j/n; between
    consecutive steps of the union both are constant, so the integral is an exact finite sum.
    """
    m, n = len(xs), len(ys)
    levels = np.union1d(np.arange(1, m + 1) / m, np.arange(1, n + 1) / n)
    widths = np.diff(levels, prepend=0.0)
    middles = levels - widths / 2
    ix = np.minimum((middles * m).astype(np.int64), m - 1)
    iy = np.minimum((middles * n).astype(np.int64), n - 1)
    return (widths[:, None] * np.abs(xs[ix] - ys[iy]) ** order).sum(0)


def sliced_wasserstein(x: np.ndarray, y: np.ndarray, *, projections: int = 128,
                       rng: np.random.Generator, order: float = 2.0) -> float:
    """Sliced p-Wasserstein distance over ``projections`` random unit directions.

    Args:
        x: (m, ...) sample.
        y: (n, ...) sample, same per-sample size; m and n may differ.
        projections: Number of directions, drawn uniformly on the sphere from ``rng``.
        rng: Source of the directions.
        order: p ≥ 1.

    Returns:
        ``(mean_θ W_p(θ·x, θ·y)^p)^{1/p}`` in the units of the data. In one dimension every
        direction is ±1, so this is exactly ``W_p(x, y)`` (a shift by s gives s).
    """
    a, b = _paired(x, y, least=1)
    if projections < 1 or order < 1:
        raise ValueError(f"need projections >= 1 and order >= 1, got {projections}, {order}")
    directions = rng.standard_normal((a.shape[1], projections))
    directions /= np.linalg.norm(directions, axis=0, keepdims=True)
    xs, ys = np.sort(a @ directions, axis=0), np.sort(b @ directions, axis=0)
    return float(_wasserstein_1d(xs, ys, order).mean() ** (1.0 / order))


def _psd_sqrt(matrix: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(matrix)
    return (vectors * np.sqrt(np.clip(values, 0.0, None))) @ vectors.T


def frechet_distance(x: np.ndarray, y: np.ndarray) -> float:
    """Fréchet distance ``‖μx − μy‖² + Tr(Σx + Σy − 2(Σx Σy)^{1/2})`` between Gaussian fits.

    In squared units of the data. Covariances are unbiased (``ddof=1``). The trace of the
    matrix square root is ``Σ √λ`` over the eigenvalues λ of ``Σx Σy``, found from a symmetric
    PSD matrix with the same nonzero spectrum, so it never returns complex values or needs an ε
    on the diagonal when the covariances are singular (fewer samples than dimensions):

    * with at least as many samples on each side as dimensions, ``Σx^{1/2} Σy Σx^{1/2}`` (d × d);
    * otherwise the smaller Gram matrix of ``G = Ax Ayᵀ``, where ``Σx = AxᵀAx`` and ``Σy = AyᵀAy``
      (A = centred rows / √(n − 1)): ``Σx Σy = AxᵀG Ay`` has the nonzero eigenvalues of ``G Gᵀ``,
      so the trace is G's nuclear norm. This costs O(n·m·d) instead of O(d³), so per-class
      distances in a high-dimensional space stay cheap (timed in docs/performance.md, "The evaluation").

    Rounding there is ~√(machine ε)·trace, so identical inputs give ~1e-8 relative, not 0; the
    result is clipped at 0.
    """
    a, b = _paired(x, y, least=2)
    mean_term = float(((a.mean(0) - b.mean(0)) ** 2).sum())
    dims = a.shape[1]
    if min(len(a), len(b)) < dims:
        left = (a - a.mean(0)) / np.sqrt(len(a) - 1)
        right = (b - b.mean(0)) / np.sqrt(len(b) - 1)
        cross_gram = left @ right.T
        small = cross_gram.T @ cross_gram if len(b) <= len(a) else cross_gram @ cross_gram.T
        trace_a, trace_b = float((left * left).sum()), float((right * right).sum())
    else:
        cov_a = np.atleast_2d(np.cov(a, rowvar=False))
        cov_b = np.atleast_2d(np.cov(b, rowvar=False))
        root_a = _psd_sqrt(cov_a)
        small = root_a @ cov_b @ root_a
        trace_a, trace_b = float(np.trace(cov_a)), float(np.trace(cov_b))
    cross = np.sqrt(np.clip(np.linalg.eigvalsh((small + small.T) / 2), 0.0, None)).sum()
    # A distance: rounding near zero eigenvalues (√ of ±1e-16) must not make it negative.
    return max(0.0, mean_term + trace_a + trace_b - 2.0 * float(cross))


@dataclass(frozen=True)
class PerClassValue:
    """One metric overall and for each class.

    Attributes:
        overall: The metric on all samples.
        per_class: Value for each class index in order; NaN where a class has too few samples on a side.
        lower_is_better: Direction, so the worst class can be named.
    """

    overall: float
    per_class: tuple[float, ...]
    lower_is_better: bool = True

    @property
    def worst_class(self) -> int | None:
        """The class with the worst finite value (None if no class has one)."""
        values = np.asarray(self.per_class, dtype=np.float64)
        if not np.isfinite(values).any():
            return None
        masked = np.where(np.isfinite(values), values, -np.inf if self.lower_is_better else np.inf)
        return int(masked.argmax() if self.lower_is_better else masked.argmin())

    def to_json(self) -> dict[str, Any]:
        return {"overall": _json_float(self.overall),
                "per_class": [_json_float(v) for v in self.per_class],
                "worst_class": self.worst_class,
                "direction": "min" if self.lower_is_better else "max"}

    def to_shared_json(self) -> dict[str, Any]:
        """:meth:`to_json` with every value rounded by :func:`~pcevolve.evaluation.shipped.shared_distance`: for a
        distance computed on private samples (a shared report carries no exact one)."""
        return {**self.to_json(), "overall": shared_distance(self.overall),
                "per_class": [shared_distance(v) for v in self.per_class]}


def _json_float(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def per_class(metric: Callable[[np.ndarray, np.ndarray], float], x: np.ndarray, x_labels: np.ndarray,
              y: np.ndarray, y_labels: np.ndarray, *, classes: int, least: int = 2,
              lower_is_better: bool = True) -> PerClassValue:
    """Evaluate ``metric(x_part, y_part)`` on everything and on each class's samples.

    Args:
        metric: E.g. ``mmd_rbf`` or ``functools.partial(sliced_wasserstein, rng=rng)``; a metric with a
            generator draws from it overall first, then class by class in order.
        x, y: (m, ...) and (n, ...) samples.
        x_labels, y_labels: Their integer class labels in ``[0, classes)``.
        classes: Number of classes.
        least: A class with fewer samples on either side gets NaN.
        lower_is_better: The metric's direction.
    """
    x, y, x_labels, y_labels = np.asarray(x), np.asarray(y), np.asarray(x_labels), np.asarray(y_labels)
    if len(x_labels) != len(x) or len(y_labels) != len(y):
        raise ValueError("one label per sample is needed on both sides")
    overall = float(metric(x, y))
    values = []
    for label in range(classes):
        xs, ys = x[x_labels == label], y[y_labels == label]
        values.append(float(metric(xs, ys)) if min(len(xs), len(ys)) >= least else math.nan)
    return PerClassValue(overall=overall, per_class=tuple(values), lower_is_better=lower_is_better)


def distribution_metrics(x: np.ndarray, x_labels: np.ndarray, y: np.ndarray, y_labels: np.ndarray, *,
                         classes: int, rng: np.random.Generator, projections: int = 128,
                         metrics: Sequence[str] = ("mmd_rbf", "sliced_wasserstein", "frechet"),
                         bandwidth: float | None = None) -> dict[str, PerClassValue]:
    """MMD², sliced Wasserstein and Fréchet distance between ``x`` and ``y``, overall and per class.

    MMD uses one bandwidth throughout — ``bandwidth`` if given (to compare several sets on one
    scale), else the median heuristic on all of ``x`` and ``y`` — so the per-class values share a
    scale and the worst class can be named; the sliced Wasserstein directions are drawn from
    ``rng`` overall first, then per class in order.
    """
    known: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
        "mmd_rbf": partial(mmd_rbf, bandwidth=median_bandwidth(x, y) if bandwidth is None else bandwidth),
        "sliced_wasserstein": partial(sliced_wasserstein, projections=projections, rng=rng),
        "frechet": frechet_distance,
    }
    unknown = sorted(set(metrics) - set(known))
    if unknown:
        raise KeyError(f"unknown distribution metric(s) {unknown}; known: {sorted(known)}")
    return {name: per_class(known[name], x, x_labels, y, y_labels, classes=classes) for name in metrics}
