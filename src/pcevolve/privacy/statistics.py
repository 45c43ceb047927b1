"""Per-class statistics of private features, each release one Gaussian mechanism (fitness stage).

What can be released, per class k (any subset, together):

=================  ==================================  =======  ======================
component          exact value                         a_c      r_c
=================  ==================================  =======  ======================
``count``          n_k                                 1        0
``sum``            Σ clip_C(φ_i)                       C        2C
``second_moment``  Σ x_i ∘ x_i (diagonal) or the       C²       √2·C²
                   upper triangle of Σ x_i x_iᵀ,
                   with x_i = clip_C(φ_i)
``rff``            Σ ψ(φ_i), random Fourier features   1        2
=================  ==================================  =======  ======================

a_c bounds the L2 norm of one record's contribution to component c; r_c bounds
the L2 change of component c when a record of class k is replaced by another
record of the same class k. Why they hold:

* count: a record adds 1 to its class's count; replacing within a class changes nothing.
* sum: contributions are clipped to norm ≤ C (``clip_rows``); a replacement
  swaps two vectors of norm ≤ C, distance ≤ 2C.
* second moment: ‖x xᵀ‖_F = ‖x‖² ≤ C² and ‖x ∘ x‖₂ ≤ ‖x‖² ≤ C²; the upper triangle
  is a subset of the entries, so its norm is no larger. For a replacement
  ‖x xᵀ − y yᵀ‖²_F = ‖x‖⁴ + ‖y‖⁴ − 2(xᵀy)² ≤ 2C⁴, and for the diagonal form
  ‖x∘x − y∘y‖² ≤ ‖x∘x‖² + ‖y∘y‖² (entries are non-negative) ≤ 2C⁴.
* rff: ψ(x) = m^{-1/2}[cos(Wx), sin(Wx)] has ‖ψ(x)‖ = 1 for every x (cos² + sin² = 1),
  so no clipping of φ is needed; two unit vectors are at most 2 apart. W is drawn
  from public randomness, independent of the private data **and of the noise**: W is
  published with the release, so a W drawn from the noise's generator would let anyone
  regenerate the noise and subtract it (``pcevolve.randomness`` keeps the streams apart).

Every contribution row is clipped to its a_c right before summing, so the bound
holds by construction, not only on paper.

Noise: component c gets N(0, s_c²) on each coordinate. Divide every coordinate by
its s_c: the release becomes a Gaussian mechanism with unit noise on a vector
whose L2 sensitivity Δ̃ is

* add/remove-one: one class block changes by one contribution,
  Δ̃² = Σ_c a_c² / s_c²;
* replace-one: either the record keeps its class (one block changes,
  Δ̃² = Σ_c r_c² / s_c²) or it moves from class k to class k' (block k loses one
  contribution and block k' gains one, Δ̃² ≤ 2 Σ_c a_c² / s_c²), so
  Δ̃² = max of the two.

The release is therefore **one** ``GaussianRelease(noise_multiplier = 1/Δ̃)`` event
covering all classes: the classes partition the data, so per-class blocks cost
one release (parallel composition), not K. With s_c = t · a_c / √w_c, where the
shares w_c > 0 sum to 1 (default equal), Δ̃² = κ / t² with κ = 1 (add/remove) or
κ = max(2, Σ_c w_c (r_c/a_c)²) (replace-one); :class:`ClassStatisticsRelease`
picks t = noise_multiplier · √κ.

The class set (0 … K−1) and the feature dimension are treated as public.
Everything computed from the noisy result is post-processing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

import numpy as np
from scipy.stats import chi2

from pcevolve.privacy.calibration import gaussian_noise_multiplier
from pcevolve.privacy.clipping import clip_rows
from pcevolve.privacy.events import GaussianRelease, Neighbouring, check_neighbouring
from pcevolve.privacy.noise import NoiseSource, as_noise_source

if TYPE_CHECKING:
    from pcevolve.privacy.ledger import BudgetLedger

Component = Literal["count", "sum", "second_moment", "rff"]
COMPONENTS: tuple[Component, ...] = ("count", "sum", "second_moment", "rff")


@dataclass(frozen=True, eq=False)
class RandomFourierFeatures:
    """Random Fourier features of the Gaussian kernel exp(−‖x − y‖² / (2ℓ²)) (DP-MERF style).

    ψ(x) = m^{-1/2} [cos(W x), sin(W x)] with rows of W drawn from N(0, I/ℓ²), so
    ψ(x)·ψ(y) estimates the kernel and ‖ψ(x)‖ = 1 exactly. Draw W from a generator
    that does not depend on the private data, and choose ℓ without looking at it.

    Attributes:
        frequencies: W, shape (m, d).
        bandwidth: ℓ.
    """

    frequencies: np.ndarray
    bandwidth: float

    @classmethod
    def draw(cls, dim: int, num_frequencies: int, *, bandwidth: float,
             rng: np.random.Generator) -> "RandomFourierFeatures":
        """Draw ``num_frequencies`` frequencies for ``dim``-dimensional inputs."""
        if dim < 1 or num_frequencies < 1:
            raise ValueError(f"dim and num_frequencies must be >= 1, got {dim}, {num_frequencies}")
        if not (math.isfinite(bandwidth) and bandwidth > 0):
            raise ValueError(f"bandwidth must be positive and finite, got {bandwidth!r}")
        frequencies = rng.normal(0.0, 1.0 / bandwidth, size=(num_frequencies, dim))
        return cls(frequencies=frequencies, bandwidth=float(bandwidth))

    @property
    def dim(self) -> int:
        return int(self.frequencies.shape[1])

    @property
    def num_features(self) -> int:
        """Output dimension 2m."""
        return 2 * int(self.frequencies.shape[0])

    def transform(self, x: np.ndarray) -> np.ndarray:
        """ψ(x) for each row of ``x`` (n, d) → (n, 2m); every row has unit norm."""
        rows = np.asarray(x, dtype=np.float64)
        if rows.ndim != 2 or rows.shape[1] != self.dim:
            raise ValueError(f"expected shape (n, {self.dim}), got {rows.shape}")
        projection = rows @ self.frequencies.T
        scale = 1.0 / math.sqrt(self.frequencies.shape[0])
        return scale * np.concatenate([np.cos(projection), np.sin(projection)], axis=1)


def component_bounds(component: Component, clip_norm: float) -> tuple[float, float]:
    """(a_c, r_c) of the module table: add/remove bound and same-class replace bound."""
    c = float(clip_norm)
    bounds = {"count": (1.0, 0.0), "sum": (c, 2.0 * c), "second_moment": (c * c, math.sqrt(2.0) * c * c),
              "rff": (1.0, 2.0)}
    if component not in bounds:
        raise ValueError(f"unknown component {component!r}; expected one of {COMPONENTS}")
    return bounds[component]


def equal_shares(components: tuple[Component, ...]) -> dict[str, float]:
    """Equal privacy shares w_c = 1 / (number of components)."""
    return {c: 1.0 / len(components) for c in components}


def release_kappa(shares: Mapping[str, float], *, neighbouring: Neighbouring) -> float:
    """κ of the module docstring: 1 for add/remove, max(2, Σ_c w_c (r_c/a_c)²) for replace-one.

    The ratio r_c / a_c does not depend on C, so neither does κ.
    """
    if check_neighbouring(neighbouring) == "add_remove":
        return 1.0
    ratios = {c: component_bounds(c, 1.0)[1] / component_bounds(c, 1.0)[0] for c in shares}  # type: ignore[arg-type]
    return max(2.0, math.fsum(w * ratios[c] ** 2 for c, w in shares.items()))


def component_noise_stds(noise_multiplier: float, shares: Mapping[str, float], *, clip_norm: float,
                         neighbouring: Neighbouring) -> dict[str, float]:
    """Noise std s_c = t · a_c / √w_c with t = noise_multiplier · √κ, for each component."""
    t = noise_multiplier * math.sqrt(release_kappa(shares, neighbouring=neighbouring))
    return {c: t * component_bounds(c, clip_norm)[0] / math.sqrt(w) for c, w in shares.items()}  # type: ignore[arg-type]


@dataclass(frozen=True, eq=False)
class NoisyClassStatistics:
    """The noisy per-class statistics. Every field is DP; anything computed from them is free.

    Attributes:
        counts: (K,) noisy class sizes, or ``None``.
        sums: (K, d) noisy sums of clipped features, or ``None``.
        second_moments: (K, d) diagonal or (K, d, d) symmetric noisy Σ x xᵀ, or ``None``.
        rff_sums: (K, 2m) noisy sums of random Fourier features, or ``None``.
        noise_stds: Noise std of each released component.
    """

    counts: np.ndarray | None
    sums: np.ndarray | None
    second_moments: np.ndarray | None
    rff_sums: np.ndarray | None
    noise_stds: Mapping[str, float] = field(default_factory=dict)

    def class_sizes(self, *, min_count: float = 1.0) -> np.ndarray:
        """Each class's size, estimated from the noisy counts by shrinking them towards their mean
        (empirical Bayes, post-processing): n̄ + (1 − α)(n̂_k − n̄), α = s² / (s² + τ²), with s the
        counts' noise std and τ² = max(var(n̂) − s², 0) the spread the noise does not explain; at
        least ``min_count``. Without a recorded count noise the noisy counts themselves.

        With ten private samples per class at ε = 1 the counts' noise is larger than the counts: raw
        noisy counts would make a class's mean several times too long and give that class a small share
        of the delivered set (measured in docs/search.md §6). Balanced classes whose counts differ by
        noise alone get n̄ each.

        With few classes var(n̂) is itself noisy: five equal classes with count noise s have var(n̂) above s²
        about one time in three, and the estimate above would then split the delivered set unevenly (as it did
        on small classes at ε = 1: docs/search.md §8). So the classes are taken as
        equal (α = 1) unless the counts spread more than noise alone would make them 19 times in 20:
        Σ (n̂_k − n̄)² / s² above the 95% quantile of χ² with K − 1 degrees of freedom.
        """
        if self.counts is None:
            raise ValueError("class sizes need the released counts; release the 'count' component too")
        counts = np.asarray(self.counts, dtype=np.float64)
        noise = float(self.noise_stds.get("count", 0.0)) ** 2
        mean = float(np.mean(counts))
        spread = max(float(np.var(counts)) - noise, 0.0) if len(counts) > 1 else 0.0
        alpha = noise / (noise + spread) if noise + spread > 0 else 0.0
        if noise > 0 and len(counts) > 1 and \
                float(np.sum((counts - mean) ** 2)) / noise <= float(chi2.ppf(0.95, len(counts) - 1)):
            alpha = 1.0
        return np.maximum(mean + (1.0 - alpha) * (counts - mean), min_count)

    def _denominators(self, min_count: float) -> np.ndarray:
        if self.counts is None:
            raise ValueError("means need the released counts; release the 'count' component too")
        return np.maximum(self.counts, min_count)

    def means(self, *, min_count: float = 1.0) -> np.ndarray:
        """Per-class mean of clipped features: noisy sum / max(noisy count, ``min_count``)."""
        if self.sums is None:
            raise ValueError("the 'sum' component was not released")
        return self.sums / self._denominators(min_count)[:, None]

    def rff_means(self, *, min_count: float = 1.0) -> np.ndarray:
        """Per-class mean embedding: noisy RFF sum / max(noisy count, ``min_count``)."""
        if self.rff_sums is None:
            raise ValueError("the 'rff' component was not released")
        return self.rff_sums / self._denominators(min_count)[:, None]

    def second_moment_means(self, *, min_count: float = 1.0) -> np.ndarray:
        """Per-class mean second moment: noisy Σ x xᵀ (or its diagonal) / max(noisy count, ``min_count``)."""
        if self.second_moments is None:
            raise ValueError("the 'second_moment' component was not released")
        denominators = self._denominators(min_count)
        return self.second_moments / denominators.reshape((-1,) + (1,) * (self.second_moments.ndim - 1))


@dataclass(frozen=True, eq=False, kw_only=True)
class ClassStatisticsRelease:
    """A one-shot Gaussian release of per-class count / clipped sum / second moment / RFF sum.

    Neighbouring relation: ``neighbouring`` (add/remove-one by default, replace-one
    supported). Sensitivity and its proof: see the module docstring. The whole
    release is one ``GaussianRelease(noise_multiplier)`` event.

    Attributes:
        num_classes: K; labels must lie in 0 … K−1.
        clip_norm: C, the L2 bound applied to every feature vector.
        noise_multiplier: Of the whole release (1 / Δ̃ in the module docstring).
        components: Which statistics to release.
        second_moment: ``"diagonal"`` (d numbers per class) or ``"full"`` (upper triangle).
        rff: Random Fourier features, required for the ``rff`` component.
        shares: Share w_c of the privacy given to each component (positive, summing to 1);
            default equal.
        neighbouring: The relation the guarantee refers to.
    """

    num_classes: int
    clip_norm: float
    noise_multiplier: float
    components: tuple[Component, ...] = ("count", "sum")
    second_moment: Literal["diagonal", "full"] = "diagonal"
    rff: RandomFourierFeatures | None = None
    shares: Mapping[str, float] | None = None
    neighbouring: Neighbouring = "add_remove"

    def __post_init__(self) -> None:
        if self.num_classes < 1:
            raise ValueError(f"num_classes must be >= 1, got {self.num_classes}")
        for name in ("clip_norm", "noise_multiplier"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be positive and finite, got {value!r}")
        components = tuple(self.components)
        if not components or len(set(components)) != len(components):
            raise ValueError(f"components must be non-empty and distinct, got {components}")
        for component in components:
            component_bounds(component, 1.0)
        if "rff" in components and self.rff is None:
            raise ValueError("the 'rff' component needs RandomFourierFeatures")
        if self.second_moment not in ("diagonal", "full"):
            raise ValueError(f"second_moment must be 'diagonal' or 'full', got {self.second_moment!r}")
        check_neighbouring(self.neighbouring)
        object.__setattr__(self, "components", components)
        object.__setattr__(self, "shares", MappingProxyType(self._normalised_shares()))

    def _normalised_shares(self) -> dict[str, float]:
        if self.shares is None:
            return equal_shares(self.components)
        shares = {str(k): float(v) for k, v in self.shares.items()}
        if set(shares) != set(self.components):
            raise ValueError(f"shares must name exactly the components {self.components}, got {sorted(shares)}")
        if any(not (math.isfinite(v) and v > 0) for v in shares.values()):
            raise ValueError(f"shares must be positive, got {shares}")
        total = math.fsum(shares.values())
        if not math.isclose(total, 1.0, rel_tol=1e-9):
            raise ValueError(f"shares must sum to 1, got {total}")
        return {c: shares[c] / total for c in self.components}

    @classmethod
    def calibrated(cls, target_epsilon: float, delta: float, **kwargs: object) -> "ClassStatisticsRelease":
        """The release whose single event costs at most ``target_epsilon`` at ``delta`` (smallest noise)."""
        neighbouring = kwargs.get("neighbouring", "add_remove")
        z = gaussian_noise_multiplier(target_epsilon, delta, neighbouring=neighbouring)  # type: ignore[arg-type]
        return cls(noise_multiplier=z, **kwargs)  # type: ignore[arg-type]

    @property
    def event(self) -> GaussianRelease:
        """The ledger event of one release."""
        return GaussianRelease(self.noise_multiplier)

    def noise_stds(self) -> dict[str, float]:
        """Noise std s_c on each coordinate of each component."""
        return component_noise_stds(self.noise_multiplier, self.shares, clip_norm=self.clip_norm,  # type: ignore[arg-type]
                                    neighbouring=self.neighbouring)

    def release(
        self, features: np.ndarray, labels: np.ndarray, *, ledger: "BudgetLedger", stage: str,
        noise: NoiseSource | np.random.Generator, description: str = "",
    ) -> NoisyClassStatistics:
        """Compute the exact statistics, charge the ledger, add noise.

        Args:
            features: (n, d) private feature vectors (clipped here to ``clip_norm``).
            labels: (n,) integer class labels in 0 … K−1.
            ledger: Charged with one ``GaussianRelease`` before any noise is drawn.
            stage: The ledger stage to charge.
            noise: Noise source (or a ``numpy.random.Generator``).
            description: Recorded in the ledger.

        Raises:
            BudgetExceeded: the ledger refused; no noise was drawn.
            ValueError: bad shapes, non-finite features, labels out of range, or a ledger
                with another neighbouring relation.
        """
        exact = self._exact(features, labels)
        dim = int(np.shape(features)[1])
        source = as_noise_source(noise)
        if ledger.neighbouring != self.neighbouring:
            raise ValueError(f"release is calibrated for {self.neighbouring!r} but the ledger accounts for "
                             f"{ledger.neighbouring!r}")
        ledger.charge(stage, self.event, noise=source,
                      description=description or f"class statistics {'+'.join(self.components)}")
        stds = self.noise_stds()
        noisy = {c: exact[c] + source.normal(stds[c], exact[c].shape) for c in self.components}
        second = noisy.get("second_moment")
        if second is not None and self.second_moment == "full":
            second = _symmetric_from_upper(second, dim)
        return NoisyClassStatistics(counts=noisy.get("count"), sums=noisy.get("sum"), second_moments=second,
                                    rff_sums=noisy.get("rff"), noise_stds=stds)

    def _exact(self, features: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
        x = np.asarray(features, dtype=np.float64)
        y = np.asarray(labels)
        if x.ndim != 2:
            raise ValueError(f"features must be 2-D (samples × features), got shape {x.shape}")
        if y.ndim != 1 or y.shape[0] != x.shape[0]:
            raise ValueError(f"labels must be 1-D with {x.shape[0]} entries, got shape {y.shape}")
        if y.size and (not np.issubdtype(y.dtype, np.integer) or y.min() < 0 or y.max() >= self.num_classes):
            raise ValueError(f"labels must be integers in 0..{self.num_classes - 1}")
        clipped = clip_rows(x, self.clip_norm)
        classes = y.astype(np.int64)
        exact: dict[str, np.ndarray] = {}
        for component in self.components:
            if component == "second_moment" and self.second_moment == "full":
                # Σ x xᵀ per class by matrix product (n·d² memory avoided). ‖x xᵀ‖_F = ‖x‖² ≤ C² holds
                # because clip_rows leaves a margin far above rounding error.
                upper = np.triu_indices(x.shape[1])
                exact[component] = np.stack(
                    [(clipped[classes == k].T @ clipped[classes == k])[upper] for k in range(self.num_classes)]
                )
                continue
            if component == "count":
                rows = np.ones((x.shape[0], 1))
            elif component == "sum":
                rows = clipped
            elif component == "second_moment":
                rows = clipped * clipped
            else:
                assert self.rff is not None
                rows = self.rff.transform(x)
            # Enforce each record's bound a_c by construction (guards rounding and future edits).
            rows = clip_rows(rows, component_bounds(component, self.clip_norm)[0])
            per_class = np.zeros((self.num_classes, rows.shape[1]))
            np.add.at(per_class, classes, rows)
            exact[component] = per_class[:, 0] if component == "count" else per_class
        return exact


def _symmetric_from_upper(upper_values: np.ndarray, dim: int) -> np.ndarray:
    rows, cols = np.triu_indices(dim)
    matrices = np.zeros((upper_values.shape[0], dim, dim))
    matrices[:, rows, cols] = upper_values
    matrices[:, cols, rows] = upper_values
    return matrices
