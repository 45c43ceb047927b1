"""Which part of a retrieval decoder's pool belongs to the task at all, and how much of it: from the release alone.

A public pool is rarely made of the task's classes only: an open dataset of the same kind holds every garment, every
outlet's posts, every loan. The class model (:mod:`pcevolve.search.class_model`) is a discriminant among the task's
K classes with no "none of these", so every pool sample is given one of them. This module says, for each pool
sample, how likely it is to be of the task at all, and how much of the pool is.

**Score** s(x), high where the task's classes put more mass than the pool does, low where the pool holds kinds the
private samples never show:

* with the class covariances released: log Σ_k w_k N(x; μ̂_k, Σ̂_k) − log p_pool(x), the released class Gaussians
  (weights from the noisy counts) over a Gaussian mixture fitted to the pool (public), in the leading
  :data:`GAUSSIAN_DIMS` directions;
* else the release's kernel mean embeddings (its noisy sums of random Fourier features ψ) over the pool's own:
  ψ(x) · Σ_k R_k / Σ_k n_k, the private classes' density smoothed by the release's kernel, over ψ(x) · ψ̄_pool, the
  pool's smoothed by the same kernel (or the kernel at the released class means, when no features were released).

**Split.** A mixture of two Gaussians fitted to the pool's scores (EM from a split at the median; deterministic):
the upper component is "looks like the task's classes", its weight the in-task share, its posterior each sample's
in-task probability. The split is believed only when the two components stand apart — Ashman's separation
D = √2 |m₁ − m₀| / √(v₀ + v₁) at least :data:`MIN_SEPARATION`, and (kernel score) a gap between their means of at
least :data:`MIN_GAP_NOISE` times the score's own noise from the release — and the outside part holds at least
:data:`MIN_OUTSIDE_SHARE` of a pool of at least :data:`MIN_POOL` samples; otherwise the whole pool is taken as in
task (share 1), as before this estimate existed.

**Use.** Territories are cut from the in-task part only, and class k is delivered at most
``search.in_task_fraction`` × its in-task mass (:func:`in_task_counts`, :mod:`pcevolve.search.assembly`).
``InTask.mass`` says how many pool samples look like each class: Σ_x p_in(x) · P(k | x), with the class
model's posterior.

Everything here reads the release and public data: post-processing, no ε. Its limits: kinds of samples that lie
among the private classes (the demo's shirts among its T-shirts, pullovers and coats) score as in task, and classes
told apart by style rather than content (posts by outlet) give no split at all (docs/search.md §12).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pcevolve.io import atomic_write_npz
from pcevolve.privacy.statistics import NoisyClassStatistics, RandomFourierFeatures

#: The two components must stand apart by at least this Ashman's D: between the separations of pools holding only
#: the task's classes, or posts the release cannot tell by outlet, and those of pools with kinds outside the task
#: (measured in docs/search.md §12).
MIN_SEPARATION = 1.6
#: ... and their means by at least this many standard deviations of the score's noise from the release.
MIN_GAP_NOISE = 3.0
#: A split whose outside part is smaller than this share of the pool is not believed (nothing worth setting aside).
MIN_OUTSIDE_SHARE = 0.05
#: The class Gaussians' score reads the leading directions only: ~100 noisy samples per class pin down no more.
GAUSSIAN_DIMS = 32
#: Each class covariance's eigenvalues are floored at this share of the pool's mean variance ...
COVARIANCE_FLOOR = 0.02
#: ... and shrunk by this much towards half the pool's variances.
SHRINKAGE = 0.1
#: Components of the Gaussian mixture that models the pool's own density, and the most pool rows it is fitted on (a
#: seeded draw; every row is scored).
POOL_COMPONENTS = 20
POOL_FIT_ROWS = 5000
#: A pool smaller than this is taken whole: on a few hundred samples the split is noise (docs/search.md §12).
MIN_POOL = 2000
#: EM iterations of the two-component fit (a margin: the fit converges long before on every pool tried).
EM_ITERATIONS = 300


@dataclass(frozen=True, eq=False)
class InTask:
    """Per pool sample, ``probability`` (N,) of being of the task at all; ``share``, the estimated share of the pool
    that is; ``separated``: whether the scores split at all (if not, every probability is 1 and the share 1);
    ``mass`` (K,), each class's in-task mass in the pool: Σ_x p_in(x) · P(k | x) with the class model's posterior."""

    probability: np.ndarray
    share: float
    separated: bool
    mass: np.ndarray

    @classmethod
    def everything(cls, posterior: np.ndarray) -> InTask:
        """The whole pool taken as in task (no split believed, or the estimate switched off)."""
        probability = np.ones(len(posterior))
        return cls(probability=probability, share=1.0, separated=False,
                   mass=probability @ np.asarray(posterior, dtype=np.float64))

    @property
    def inside(self) -> np.ndarray:
        """(N,) bool: the pool samples more likely in the task than not; the others are set aside."""
        return self.probability >= 0.5

    @property
    def set_aside(self) -> int:
        """How many pool samples are set aside as outside the task (public: a function of the release and pool)."""
        return int(np.sum(~self.inside))

    def line(self, noun: str) -> str:
        """What a run says of it: the share and how many pool ``noun``s were set aside."""
        if not self.separated:
            return ("public pool: no part of it stands apart from your classes, so nothing is set aside; each class "
                    f"is delivered from the {noun}s that look most like it")
        return (f"public pool: about {self.share:.0%} of it looks like your classes; {self.set_aside:,} public {noun}s "
                "set aside as outside the task (estimated from the DP release, free)")

    def save(self, path: str | os.PathLike[str]) -> Path:
        return atomic_write_npz(path, probability=self.probability, share=np.array(self.share),
                                separated=np.array(self.separated), mass=self.mass)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> InTask:
        with np.load(path, allow_pickle=False) as arrays:
            return cls(probability=arrays["probability"], share=float(arrays["share"]),
                       separated=bool(arrays["separated"]), mass=arrays["mass"])

    def summary(self) -> dict[str, float | int | bool]:
        """What the run records and the report shows (post-processing of the release and the public pool)."""
        return {"share": round(self.share, 4), "set_aside": self.set_aside, "pool": len(self.probability),
                "separated": self.separated}


def in_task_scores(statistics: NoisyClassStatistics, rff: RandomFourierFeatures, coordinates: np.ndarray,
                   ) -> tuple[np.ndarray, float]:
    """s(x) for every pool row of ``coordinates`` (N, P), and the standard deviation of its noise from the release
    at a typical point (0 where it is not known in closed form): :func:`gaussian_scores` when the release carries the
    class covariances, else :func:`kernel_scores` (the module docstring)."""
    if statistics.second_moments is not None and np.ndim(statistics.second_moments) == 3:
        return gaussian_scores(statistics, coordinates), 0.0
    return kernel_scores(statistics, rff, coordinates)


def gaussian_scores(statistics: NoisyClassStatistics, coordinates: np.ndarray) -> np.ndarray:
    """log Σ_k w_k N(x; μ̂_k, Σ̂_k) − log p_pool(x) in the leading :data:`GAUSSIAN_DIMS` directions: the released
    class Gaussians (weights from the noisy counts; covariances floored and shrunk towards the pool's spread, as
    ~100 noisy samples per class cannot pin down more) over a Gaussian mixture of the pool (public, seeded)."""
    from sklearn.mixture import GaussianMixture  # scikit-learn loads only where a run has a pool to judge

    assert statistics.second_moments is not None and statistics.sums is not None
    dims = min(GAUSSIAN_DIMS, statistics.second_moments.shape[1], np.shape(coordinates)[1])
    x = np.asarray(coordinates, dtype=np.float64)[:, :dims]
    pool_variances = np.var(x, axis=0)
    counts = np.maximum(np.asarray(statistics.counts, dtype=np.float64), 2.0)
    terms = []
    for k, count in enumerate(counts):
        mean = statistics.sums[k, :dims] / count
        covariance = statistics.second_moments[k][:dims, :dims] / count - np.outer(mean, mean)
        values, vectors = np.linalg.eigh((covariance + covariance.T) / 2)
        values = np.maximum(values, COVARIANCE_FLOOR * float(pool_variances.mean()))
        covariance = (1 - SHRINKAGE) * (vectors * values) @ vectors.T + SHRINKAGE * np.diag(pool_variances) / 2
        terms.append(math.log(count / counts.sum()) + _gaussian_log_density(x, mean, covariance))
    fitted = x if len(x) <= POOL_FIT_ROWS else x[np.random.default_rng(0).choice(len(x), POOL_FIT_ROWS, replace=False)]
    pool = GaussianMixture(POOL_COMPONENTS, covariance_type="full", reg_covar=1e-4, random_state=0,
                           max_iter=100).fit(fitted)
    return np.logaddexp.reduce(np.stack(terms, axis=1), axis=1) - pool.score_samples(x)


def _gaussian_log_density(x: np.ndarray, mean: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(covariance)
    projected = (x - mean) @ vectors
    return -0.5 * (np.sum(projected**2 / values, axis=1) + np.sum(np.log(values)) + x.shape[1] * math.log(2 * math.pi))


def kernel_scores(statistics: NoisyClassStatistics, rff: RandomFourierFeatures, coordinates: np.ndarray,
                  ) -> tuple[np.ndarray, float]:
    """The release's kernel density of the private classes over the pool's own at every pool point, and the
    standard deviation of the ratio's noise at a typical point (the module docstring)."""
    z = np.asarray(coordinates, dtype=np.float64)[:, :rff.dim]
    features = rff.transform(z)
    pool_density = features @ features.mean(axis=0)
    counts = np.maximum(np.asarray(statistics.counts, dtype=np.float64), 1.0)
    total = float(counts.sum())
    if statistics.rff_sums is not None:
        task_density = features @ np.asarray(statistics.rff_sums, dtype=np.float64).sum(axis=0) / total
        # ‖ψ(x)‖ = 1: the noise of ψ(x)·ΣR_k is the K sums' noise, √K σ, over the total count.
        noise = math.sqrt(len(counts)) * float(statistics.noise_stds.get("rff", 0.0)) / total
    else:
        means = statistics.means(min_count=1.0)[:, :rff.dim]
        task_density = features @ (rff.transform(means).T @ (counts / total))
        noise = 0.0
    # The ratio itself, not its log: where the task's estimated density is nil or below it by noise (far from every
    # private sample) the ratio is 0, a value next to the other low ones, where a log would pile them far away.
    pool_density = np.maximum(pool_density, 1e-12)
    return np.maximum(task_density, 0.0) / pool_density, noise / float(np.median(pool_density))


def two_gaussians(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """EM for a two-component Gaussian mixture of 1-D ``scores``, started from a split at the median.

    Returns (weights, means, variances, posterior of the upper component per score); component 1 is the upper.
    """
    x = np.asarray(scores, dtype=np.float64)
    spread = max(float(np.var(x)), 1e-12)
    lower = x < np.median(x)
    if lower.all() or not lower.any():
        return np.array([0.0, 1.0]), np.array([x.mean()] * 2), np.array([spread] * 2), np.ones(len(x))
    means = np.array([x[lower].mean(), x[~lower].mean()])
    variances = np.array([x[lower].var(), x[~lower].var()]) + 1e-6 * spread
    weights = np.array([0.5, 0.5])
    for _ in range(EM_ITERATIONS):
        log_p = np.log(np.maximum(weights, 1e-300)) - 0.5 * np.log(2 * np.pi * variances) \
            - 0.5 * (x[:, None] - means) ** 2 / variances
        log_p -= log_p.max(axis=1, keepdims=True)
        responsibility = np.exp(log_p)
        responsibility /= responsibility.sum(axis=1, keepdims=True)
        mass = np.maximum(responsibility.sum(axis=0), 1e-12)
        weights = mass / len(x)
        means = responsibility.T @ x / mass
        variances = np.einsum("nk,nk->k", responsibility, (x[:, None] - means) ** 2) / mass + 1e-6 * spread
    upper = int(np.argmax(means))
    order = [1 - upper, upper]
    return weights[order], means[order], variances[order], responsibility[:, upper]


def estimate_in_task(statistics: NoisyClassStatistics, rff: RandomFourierFeatures, coordinates: np.ndarray,
                     posterior: np.ndarray) -> InTask:
    """The in-task estimate of a pool (module docstring) from its search coordinates (N, P) and the class model's
    posterior (N, K) over the task's classes: pure post-processing of the release and the pool; deterministic."""
    posterior = np.asarray(posterior, dtype=np.float64)
    if posterior.ndim != 2 or len(posterior) != len(coordinates):
        raise ValueError(f"posterior must be ({len(coordinates)}, K), got {posterior.shape}")
    if len(coordinates) < MIN_POOL:
        return InTask.everything(posterior)
    scores, noise = in_task_scores(statistics, rff, coordinates)
    weights, means, variances, upper = two_gaussians(scores)
    gap = float(means[1] - means[0])
    separation = math.sqrt(2.0) * gap / math.sqrt(float(variances.sum()))
    if separation < MIN_SEPARATION or gap < MIN_GAP_NOISE * noise or weights[0] < MIN_OUTSIDE_SHARE:
        return InTask.everything(posterior)
    return InTask(probability=upper, share=float(weights[1]), separated=True, mass=upper @ posterior)


def eligible(in_task: InTask | None) -> np.ndarray | None:
    """The pool samples territories may take: the in-task part, or None (every sample) without an estimate."""
    return None if in_task is None else in_task.inside


def in_task_counts(configured: np.ndarray, mass: np.ndarray, *, fraction: float) -> np.ndarray:
    """Delivered samples per class: the ``configured`` count (``search.synthetic_per_class`` split by the noisy
    counts), but never more than ``fraction`` of the class's in-task ``mass`` in the pool; at least one."""
    configured = np.asarray(configured, dtype=np.int64)
    cap = np.floor(fraction * np.asarray(mass, dtype=np.float64)).astype(np.int64)
    return np.maximum(np.minimum(configured, cap), 1)
