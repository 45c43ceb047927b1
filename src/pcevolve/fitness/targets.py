"""What the fitness knows about the private data: post-processing of one DP class-statistics release.

Rules that must never change:

* :class:`FitnessTargets` is built from a :class:`~pcevolve.privacy.NoisyClassStatistics`
  (the DP release, already paid for in the ledger), public objects (the random
  Fourier features, whose frequencies are public randomness) and a public
  ``numpy.random.Generator``. No private feature, label or count enters any other way.
* Every field is therefore post-processing of the release and free to use any number
  of times (post-processing costs nothing). The fitness terms read only these fields and the candidate.
* Every array is copied on the way in and made read-only, so a target can never
  keep a view into a caller's array or change after it is built.

How the fields are derived from the release (per class k, noisy count n_k, its size estimate
ñ_k = ``NoisyClassStatistics.class_sizes`` — the noisy counts shrunk towards their mean by how
much of their spread the counts' noise explains —, denominator d_k = max(ñ_k, ``min_count``)):

* ``means`` μ_k = noisy sum / d_k; ``rff_means`` = noisy RFF sum / d_k.
* ``covariances``: Σ_k = noisy Σ x xᵀ / d_k − μ_k μ_kᵀ + (s_sum / d_k)² I, then shrunk,
  then repaired. The last term removes the bias the sum's noise (std s_sum per
  coordinate, public) puts into μ_k μ_kᵀ. A diagonal second-moment release gives a
  diagonal Σ_k. Shrinkage (:func:`shrink_class_covariances`) uses the second moment's
  public noise std: each class towards the classes' pooled mean (which has 1/K of the
  noise), and that pool off-diagonals towards 0 and diagonal towards its mean
  (:func:`shrink_covariance`), each step by how much of the observed spread the noise
  explains — at small ε and large P the raw estimate is mostly noise, and this keeps
  its trace honest instead of inflating it several-fold.
  Repair (:func:`repair_covariance`): symmetrise, project onto the PSD cone
  (negative eigenvalues, which only noise can produce, are clipped — the nearest PSD
  matrix in Frobenius norm) and floor every eigenvalue at ``eigenvalue_floor`` times
  the mean clipped eigenvalue, so Σ_k is invertible for the Mahalanobis distances. A
  class whose estimate has no positive eigenvalue at all becomes isotropic with the
  classes' mean variance per direction.
* Statistics the release left out (:mod:`pcevolve.privacy.release_rule`): without second
  moments every class's covariance is the given *public* covariance (repaired); without RFF
  sums ``rff_means`` is ``None`` and the MMD term reads 0.
* ``rff_noise_floor``: per class, the squared distance the noise alone puts between the released
  mean embedding and the true one, 19 times in 20: (s_rff / d_k)² · χ²₀.₉₅(2m) (one noise draw of
  std s_rff on each of the 2m coordinates of the sum, divided by d_k, so the squared norm is
  (s_rff / d_k)² times a χ² with 2m degrees of freedom; a pooled class carries K draws over the
  pooled denominator). A candidate cannot be told to match the private class better than this.
  Where the released embedding's noise is larger than its signal (on the demo at ε = 1), the
  starting point already sits about where the noise alone puts it, and a search that rewarded
  anything below the floor followed that noise for its whole run (measured in docs/search.md §5).
* Classes whose size estimate ñ_k is below ``min_count`` (very noisy, possibly ≤ 0) carry
  no usable signal: their mean, covariance and RFF mean are replaced by the pooled
  statistics of all classes (Σ sums / max(Σ counts, ``min_count``), …) and
  ``fallback[k]`` is set.
* ``validation_features``: V draws per class from N(μ_k, Σ_k) (the accuracy proxy's
  validation set and the reference sample of the coverage terms), then
  ``projections``: unit directions for the sliced Wasserstein distance, both from ``rng``
  in that order.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import chi2

from pcevolve.fitness.reference import ReferenceStatistics
from pcevolve.privacy.statistics import NoisyClassStatistics, RandomFourierFeatures

logger = logging.getLogger(__name__)

ARRAYS_VERSION = 1
DEFAULT_EIGENVALUE_FLOOR = 1e-3
DEFAULT_NUM_PROJECTIONS = 64
#: The noise floor of the MMD term is this quantile of the released embedding's squared noise (module docstring).
RFF_NOISE_QUANTILE = 0.95


def repair_covariance(matrix: np.ndarray, *, relative_floor: float = DEFAULT_EIGENVALUE_FLOOR,
                      fallback_scale: float = 0.0) -> tuple[np.ndarray, int]:
    """A symmetric positive definite version of a noisy covariance estimate.

    Symmetrise, clip negative eigenvalues to zero (nearest PSD matrix in Frobenius
    norm), then raise every eigenvalue to at least ``relative_floor`` × the mean of
    the clipped eigenvalues. When no eigenvalue is positive (noise swamped the whole
    matrix) nothing of its shape is left to keep: the result is ``fallback_scale`` × I
    (1e-12 × I if that is not positive either), with every eigenvalue counted as floored.

    Args:
        matrix: (d, d) estimate.
        relative_floor: Floor as a fraction of the mean clipped eigenvalue, in (0, 1].
        fallback_scale: Variance per direction to use when the matrix has no positive eigenvalue.

    Returns:
        The repaired matrix and the number of eigenvalues that were raised to the floor.
    """
    if not 0.0 < relative_floor <= 1.0:
        raise ValueError(f"relative_floor must be in (0, 1], got {relative_floor!r}")
    symmetric = 0.5 * (matrix + matrix.T)
    eigenvalues, vectors = np.linalg.eigh(symmetric)
    scale = float(np.mean(np.maximum(eigenvalues, 0.0)))
    if scale <= 0.0:
        return max(float(fallback_scale), 1e-12) * np.eye(matrix.shape[0]), matrix.shape[0]
    floor = relative_floor * scale
    floored = int(np.count_nonzero(eigenvalues < floor))
    repaired = (vectors * np.maximum(eigenvalues, floor)) @ vectors.T
    return 0.5 * (repaired + repaired.T), floored


def shrink_covariance(raw: np.ndarray, *, entry_noise_var: float, diagonal_only: bool = False) -> np.ndarray:
    """Noise-aware linear shrinkage of a covariance estimate whose entries carry known noise.

    Each entry of ``raw`` carries independent noise of variance ``entry_noise_var`` (public:
    the release's noise std over the class denominator, squared). Two Ledoit–Wolf-style
    steps with that known noise energy, each keeping what the data can resolve:

    * off-diagonal part O towards 0: O ← (1 − α) O, α = min(1, P(P − 1) σ² / ‖O‖²_F);
    * diagonal d towards its mean d̄ (tr/P, the best-determined number):
      d ← (1 − β) d + β d̄, β = min(1, P σ² / ‖d − d̄‖²).

    When the noise energy exceeds the observed spread (all signal buried), the result is
    (tr/P)·I — the trace is unbiased, so the total variance stays right, where clipping
    negative eigenvalues alone would inflate it. With no noise it returns ``raw`` unchanged.
    ``diagonal_only``: the off-diagonal part is known to be zero (a diagonal release).
    """
    if entry_noise_var <= 0.0:
        return raw
    p = raw.shape[0]
    d = np.diag(raw).copy()
    off = raw - np.diag(d)
    spread = float(np.sum((d - d.mean()) ** 2))
    beta = 1.0 if spread <= 0.0 else min(1.0, p * entry_noise_var / spread)
    d = (1.0 - beta) * d + beta * d.mean()
    if diagonal_only:
        return np.diag(d)
    energy = float(np.sum(off * off))
    alpha = 1.0 if energy <= 0.0 else min(1.0, p * (p - 1) * entry_noise_var / energy)
    return (1.0 - alpha) * off + np.diag(d)


def shrink_class_covariances(raw: np.ndarray, entry_noise_vars: np.ndarray, *, diagonal_only: bool = False,
                             members: np.ndarray | None = None) -> np.ndarray:
    """Shrink noisy class covariances towards their (shrunk) pooled mean, by how much noise explains.

    The classes live in one feature space and usually share much of their shape; their
    average Σ̄ carries 1/m of one class's noise (m pooled classes). So, per class k:
    Σ_k ← T + (1 − γ_k)(raw_k − Σ̄), where T = :func:`shrink_covariance` (Σ̄) and
    γ_k = min(1, E‖noise of raw_k − Σ̄‖² / ‖raw_k − Σ̄‖²) — the share of the class's
    departure from the pool that noise alone would produce. With no noise this returns
    ``raw`` unchanged; with overwhelming noise every class gets T.

    Args:
        raw: (K, P, P) estimates.
        entry_noise_vars: (K,) noise variance of each entry of each estimate (public).
        diagonal_only: The off-diagonal parts are known to be zero (a diagonal release).
        members: (K,) which classes form the pool (default all); the others are shrunk alone.
    """
    k, p, _ = raw.shape
    members = np.ones(k, bool) if members is None else np.asarray(members, bool)
    m = int(members.sum())
    if not np.any(entry_noise_vars > 0):
        return raw.copy()
    if m < 2:
        return np.stack([shrink_covariance(raw[c], entry_noise_var=float(entry_noise_vars[c]),
                                           diagonal_only=diagonal_only) for c in range(k)])
    pooled = raw[members].mean(axis=0)
    member_vars = entry_noise_vars[members]
    target = shrink_covariance(pooled, entry_noise_var=float(member_vars.mean()) / m, diagonal_only=diagonal_only)
    entries = p if diagonal_only else p * p
    out = np.empty_like(raw)
    for c in range(k):
        if not members[c]:
            out[c] = shrink_covariance(raw[c], entry_noise_var=float(entry_noise_vars[c]),
                                       diagonal_only=diagonal_only)
            continue
        departure = raw[c] - pooled
        # Noise of raw_c − Σ̄: raw_c's own with weight (1 − 1/m), every other member's with weight 1/m.
        var = entry_noise_vars[c] * (1 - 1 / m) ** 2 + (member_vars.sum() - entry_noise_vars[c]) / m ** 2
        energy = float(np.sum(departure * departure))
        gamma = 0.0 if var <= 0 else (1.0 if energy <= 0.0 else min(1.0, entries * var / energy))
        out[c] = target + (1.0 - gamma) * departure
    return out


def _frozen(value: Any, dtype: type = np.float64) -> np.ndarray:
    array = np.array(value, dtype=dtype, copy=True)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class FitnessTargets:
    """Everything the fitness may know about the private data (post-processing of one DP release).

    Build with :meth:`from_release`; :meth:`to_arrays` / :meth:`from_arrays` checkpoint it.

    Attributes:
        counts: (K,) released noisy class counts, as released (may be ≤ 0).
        means: (K, P) class means μ_k.
        covariances: (K, P, P) symmetric positive definite class covariances Σ_k.
        rff: The public random Fourier features the release used.
        rff_means: (K, 2m) class mean embeddings, or ``None`` when the release left the RFF sums out
            (then the fitness has no MMD term: it reads 0).
        rff_noise_floor: (K,) expected squared norm of the noise in each ``rff_means`` row (module
            docstring), or ``None`` (no noise known: 0).
        validation_features: (K·V, P) draws from N(μ_k, Σ_k).
        validation_labels: (K·V,) their classes.
        projections: (L, P) unit directions of the sliced Wasserstein distance.
        fallback: (K,) true where a class's statistics were replaced by the pooled ones.
        floored_eigenvalues: (K,) eigenvalues raised to the floor during repair (a diagnostic).
        discriminant_covariance: (P, P) optional *public* covariance for the label discriminant
            (consistency term, delivery check), e.g. the public pool's in the search basis. At
            n ≈ 100 per class the DP covariances are mostly noise: on the demo the public covariance
            put far more in-class public images in their class than the pooled DP one (measured in
            docs/search.md §2). None: the pooled DP covariance.
    """

    counts: np.ndarray
    means: np.ndarray
    covariances: np.ndarray
    rff: RandomFourierFeatures
    rff_means: np.ndarray | None
    validation_features: np.ndarray
    validation_labels: np.ndarray
    projections: np.ndarray
    fallback: np.ndarray | None = None
    floored_eigenvalues: np.ndarray | None = None
    discriminant_covariance: np.ndarray | None = None
    rff_noise_floor: np.ndarray | None = None
    reference: ReferenceStatistics = field(init=False, repr=False)

    def __post_init__(self) -> None:
        means = _frozen(self.means)
        if means.ndim != 2 or means.shape[0] < 1 or means.shape[1] < 1:
            raise ValueError(f"means must be (K, P), got shape {means.shape}")
        k, p = means.shape
        expected = {"counts": (k,), "covariances": (k, p, p), "projections": (None, p),
                    "validation_features": (None, p)}
        if self.rff_means is not None:
            expected["rff_means"] = (k, self.rff.num_features)
        arrays = {"means": means}
        for name, shape in expected.items():
            array = _frozen(getattr(self, name))
            if array.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, array.shape)):
                raise ValueError(f"{name} must have shape {shape} (None = any), got {array.shape}")
            arrays[name] = array
        for name, array in arrays.items():
            if not np.all(np.isfinite(array)):
                raise ValueError(f"{name} contains non-finite values")
        if self.rff.dim != p:
            raise ValueError(f"rff takes {self.rff.dim}-d inputs but the features are {p}-d")
        object.__setattr__(self, "rff", RandomFourierFeatures(frequencies=_frozen(self.rff.frequencies),
                                                              bandwidth=float(self.rff.bandwidth)))
        labels = _frozen(self.validation_labels, np.int64)
        if labels.shape != (arrays["validation_features"].shape[0],):
            raise ValueError(f"validation_labels must have shape ({arrays['validation_features'].shape[0]},), "
                             f"got {labels.shape}")
        if labels.size and (labels.min() < 0 or labels.max() >= k):
            raise ValueError(f"validation_labels must lie in 0..{k - 1}")
        if np.any(np.bincount(labels, minlength=k) < 2):
            raise ValueError("every class needs at least 2 validation samples")
        covariances = arrays["covariances"]
        if not np.allclose(covariances, np.swapaxes(covariances, 1, 2), rtol=1e-10, atol=1e-12):
            raise ValueError("covariances must be symmetric")
        if np.any(np.linalg.eigvalsh(covariances)[:, 0] <= 0.0):
            raise ValueError("covariances must be positive definite (repair them with repair_covariance)")
        norms = np.linalg.norm(arrays["projections"], axis=1)
        if arrays["projections"].shape[0] < 1 or not np.allclose(norms, 1.0):
            raise ValueError("projections must be at least one unit-norm row")
        fallback = _frozen(np.zeros(k, bool) if self.fallback is None else self.fallback, bool)
        floored = _frozen(np.zeros(k) if self.floored_eigenvalues is None else self.floored_eigenvalues, np.int64)
        noise_floor = _frozen(np.zeros(k) if self.rff_noise_floor is None else self.rff_noise_floor)
        for name, array in (("fallback", fallback), ("floored_eigenvalues", floored), ("rff_noise_floor", noise_floor)):
            if array.shape != (k,):
                raise ValueError(f"{name} must have shape ({k},), got {array.shape}")
        if not np.all(np.isfinite(noise_floor)) or np.any(noise_floor < 0):
            raise ValueError("rff_noise_floor must be finite and non-negative")
        for name, array in {**arrays, "validation_labels": labels, "fallback": fallback,
                            "floored_eigenvalues": floored, "rff_noise_floor": noise_floor}.items():
            object.__setattr__(self, name, array)
        if self.discriminant_covariance is not None:
            within = _frozen(self.discriminant_covariance)
            if within.shape != (p, p) or not np.allclose(within, within.T) or np.linalg.eigvalsh(within)[0] <= 0:
                raise ValueError(f"discriminant_covariance must be a symmetric positive definite ({p}, {p}) matrix")
            object.__setattr__(self, "discriminant_covariance", within)
        object.__setattr__(self, "reference", ReferenceStatistics.of(
            means=self.means, covariances=self.covariances, validation_features=self.validation_features,
            validation_labels=self.validation_labels, projections=self.projections,
            discriminant_covariance=self.discriminant_covariance))

    @property
    def num_classes(self) -> int:
        return int(self.means.shape[0])

    @property
    def dim(self) -> int:
        """P, the feature dimension."""
        return int(self.means.shape[1])

    @classmethod
    def from_release(
        cls, noisy: NoisyClassStatistics, rff: RandomFourierFeatures, *, validation_per_class: int,
        rng: np.random.Generator, min_count: float = 2.0, eigenvalue_floor: float = DEFAULT_EIGENVALUE_FLOOR,
        num_projections: int = DEFAULT_NUM_PROJECTIONS, discriminant_covariance: np.ndarray | None = None,
        public_covariance: np.ndarray | None = None,
    ) -> "FitnessTargets":
        """Targets from one DP release of count, sum and, when released, second moment and RFF sum.

        Args:
            noisy: The release; needs counts and sums. Without second moments every class's
                covariance is ``public_covariance``; without RFF sums ``rff_means`` is ``None``.
            rff: The random Fourier features the release was computed with.
            validation_per_class: V, draws per class from N(μ_k, Σ_k); at least 2.
            rng: Public randomness for the validation draws and the projection directions.
            min_count: Denominator floor; classes with a noisy count below it use pooled statistics.
            eigenvalue_floor: Relative eigenvalue floor of :func:`repair_covariance`.
            num_projections: L, directions of the sliced Wasserstein distance.
            discriminant_covariance: Optional public covariance for the label discriminant (attribute doc).
            public_covariance: (P, P) public covariance standing in for every class's covariance when the
                release has no second moments (e.g. the public pool's in the search basis), or (K, P, P), one per
                class (e.g. the spread of each class's territory).

        Raises:
            ValueError: a component is missing or the shapes disagree.
        """
        missing = [name for name, value in (("count", noisy.counts), ("sum", noisy.sums)) if value is None]
        if missing:
            raise ValueError(f"the release lacks the component(s) {missing}; the fitness needs count and sum")
        if noisy.second_moments is None and public_covariance is None:
            raise ValueError("the release has no second moments: give a public_covariance for the classes")
        if validation_per_class < 2 or num_projections < 1:
            raise ValueError(f"validation_per_class must be >= 2 and num_projections >= 1, got "
                             f"{validation_per_class}, {num_projections}")
        if not min_count > 0:
            raise ValueError(f"min_count must be positive, got {min_count!r}")
        counts = np.asarray(noisy.counts, dtype=np.float64)
        sums = np.asarray(noisy.sums, dtype=np.float64)
        k, p = sums.shape
        released_moments = noisy.second_moments is not None
        if not released_moments:  # the public covariance as the second moment about each class mean
            public = np.asarray(public_covariance, dtype=np.float64)
            if public.shape == (p, p):
                public = np.repeat(public[None], k, axis=0)
            if public.shape != (k, p, p):
                raise ValueError(f"public_covariance must be ({p}, {p}) or ({k}, {p}, {p}), got {public.shape}")
        second = np.asarray(noisy.second_moments, dtype=np.float64) if released_moments else np.zeros((k, p, p))
        diagonal = second.shape == (k, p)
        released_rff = noisy.rff_sums is not None
        rff_sums = np.asarray(noisy.rff_sums, dtype=np.float64) if released_rff else np.zeros((k, rff.num_features))
        if counts.shape != (k,) or second.shape[:2] != (k, p) or (not diagonal and second.shape != (k, p, p)) \
                or rff_sums.shape != (k, rff.num_features):
            raise ValueError(f"release shapes disagree: counts {counts.shape}, sums {sums.shape}, second moments "
                             f"{second.shape}, rff sums {rff_sums.shape} (rff has {rff.num_features} features)")
        if rff.dim != p:
            raise ValueError(f"rff takes {rff.dim}-d inputs but the release is {p}-d")

        sizes = noisy.class_sizes(min_count=0.0)
        fallback = sizes < min_count
        denominators = np.maximum(sizes, min_count)
        pooled_denominator = max(float(counts.sum()), float(min_count))
        sum_std = float(noisy.noise_stds.get("sum", 0.0))
        moment_std = float(noisy.noise_stds.get("second_moment", 0.0))
        rff_std = float(noisy.noise_stds.get("rff", 0.0))
        rff_quantile = float(chi2.ppf(RFF_NOISE_QUANTILE, rff.num_features))

        def moments(s: np.ndarray, m2: np.ndarray, psi: np.ndarray, d: float,
                    blocks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
            # ``blocks`` class blocks were summed, so each entry carries ``blocks`` noise draws.
            mean = s / d
            bias = blocks * (sum_std / d) ** 2
            if diagonal:
                raw = np.diag(m2 / d - mean * mean + bias)
            else:
                raw = m2 / d - np.outer(mean, mean) + bias * np.eye(p)
            return mean, raw, psi / d, blocks * (moment_std / d) ** 2, blocks * rff_quantile * (rff_std / d) ** 2

        pooled = moments(sums.sum(0), second.sum(0), rff_sums.sum(0), pooled_denominator, k)
        per_class = [pooled if fallback[c] else moments(sums[c], second[c], rff_sums[c], denominators[c], 1)
                     for c in range(k)]
        if np.any(fallback):
            logger.warning("classes %s have noisy counts below %s; they use the pooled statistics",
                           np.flatnonzero(fallback).tolist(), min_count)
        means = np.stack([mean for mean, _, _, _, _ in per_class])
        if released_moments:
            shrunk = shrink_class_covariances(np.stack([raw for _, raw, _, _, _ in per_class]),
                                              np.array([var for _, _, _, var, _ in per_class]),
                                              diagonal_only=diagonal, members=~fallback)
            # Variance per direction for a class whose estimate has no positive eigenvalue: the classes' mean
            # trace / P (their noise averages out), else the pooled covariance's.
            pooled_scale = float(np.mean(np.trace(shrunk, axis1=1, axis2=2))) / p
            if pooled_scale <= 0.0:
                pooled_scale = max(float(np.trace(pooled[1])) / p, 0.0)
            repaired = [repair_covariance(raw, relative_floor=eigenvalue_floor, fallback_scale=pooled_scale)
                        for raw in shrunk]
            covariances = np.stack([cov for cov, _ in repaired])
        else:
            # A class with no spread of its own (a one-point territory) takes the classes' mean variance.
            scale = float(np.mean(np.trace(public, axis1=1, axis2=2))) / p
            repaired = [repair_covariance(cov, relative_floor=eigenvalue_floor, fallback_scale=scale) for cov in public]
            covariances = np.stack([cov for cov, _ in repaired])

        # Draw order is part of the contract (determinism): validation noise, then directions.
        noise = rng.standard_normal((k, validation_per_class, p))
        eigenvalues, vectors = np.linalg.eigh(covariances)
        factors = vectors * np.sqrt(eigenvalues)[:, None, :]  # Σ = F Fᵀ
        validation = means[:, None, :] + np.einsum("kvp,kqp->kvq", noise, factors)
        directions = rng.standard_normal((num_projections, p))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        return cls(counts=counts, means=means, covariances=covariances, rff=rff,
                   rff_means=np.stack([psi for _, _, psi, _, _ in per_class]) if released_rff else None,
                   validation_features=validation.reshape(k * validation_per_class, p),
                   validation_labels=np.repeat(np.arange(k), validation_per_class), projections=directions,
                   fallback=fallback, floored_eigenvalues=np.array([n for _, n in repaired]),
                   discriminant_covariance=discriminant_covariance,
                   rff_noise_floor=np.array([floor for *_, floor in per_class]) if released_rff else None)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Plain arrays for an ``.npz`` checkpoint (no pickle); :meth:`from_arrays` inverts it exactly."""
        return {"version": np.array(ARRAYS_VERSION), "counts": self.counts, "means": self.means,
                "covariances": self.covariances, "rff_frequencies": self.rff.frequencies,
                "rff_bandwidth": np.array(self.rff.bandwidth),
                **({} if self.rff_means is None else {"rff_means": self.rff_means}),
                "validation_features": self.validation_features, "validation_labels": self.validation_labels,
                "projections": self.projections, "fallback": self.fallback,
                "floored_eigenvalues": self.floored_eigenvalues, "rff_noise_floor": self.rff_noise_floor,
                **({} if self.discriminant_covariance is None
                   else {"discriminant_covariance": self.discriminant_covariance})}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> "FitnessTargets":
        """Rebuild from :meth:`to_arrays` output (e.g. ``np.load(path, allow_pickle=False)``).

        Raises:
            ValueError: a key is missing or the version is unknown.
        """
        names = ("version", "counts", "means", "covariances", "rff_frequencies", "rff_bandwidth",
                 "validation_features", "validation_labels", "projections", "fallback", "floored_eigenvalues")
        missing = [name for name in names if name not in arrays]
        if missing:
            raise ValueError(f"fitness targets arrays lack {missing}")
        if int(arrays["version"]) != ARRAYS_VERSION:
            raise ValueError(f"unknown fitness targets arrays version {int(arrays['version'])}")
        rff = RandomFourierFeatures(frequencies=_frozen(arrays["rff_frequencies"]),
                                    bandwidth=float(arrays["rff_bandwidth"]))
        within = arrays["discriminant_covariance"] if "discriminant_covariance" in arrays else None
        rff_means = np.asarray(arrays["rff_means"]) if "rff_means" in arrays else None
        # Absent from checkpoints written before the floor existed: no floor, as those runs searched.
        noise_floor = np.asarray(arrays["rff_noise_floor"]) if "rff_noise_floor" in arrays else None
        return cls(rff=rff, rff_means=rff_means, rff_noise_floor=noise_floor,
                   discriminant_covariance=None if within is None else np.asarray(within),
                   **{name: np.asarray(arrays[name]) for name in names
                      if name not in ("version", "rff_frequencies", "rff_bandwidth")})
