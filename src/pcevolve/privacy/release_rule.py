"""Which class statistics the release spends its budget on, decided from the DP counts and public quantities.

The release (:mod:`pcevolve.privacy.class_release`) is made in two Gaussian events of the ``release`` stage:
first the per-class counts, then the rest. The rest is only worth its budget when the class's
*mean* of each statistic — the released sum divided by the class size — rises above its noise,
and that depends on the class size n: the mean's noise is s_c / n. With ten private samples per
class at ε = 8, the full second moment and the random-Fourier-feature mean embedding are mostly
noise, and the budget they take is missing from the sums that label every delivered sample.

So, after the counts are out, the rule reads the typical class size n̂ (the mean noisy count, at
least 1) and makes two choices.

**How many basis directions the sums cover.** Along basis direction j the public features spread by
√v_j (public variance); a class mean released in the leading d directions, clipped to the public
radius C(d) of those d coordinates, carries noise of std t·C(d)/n̂ on every coordinate (t: the
sums' noise multiplier). Past the direction where the noise outgrows the spread, a coordinate
adds noise and no class signal, and it also widens C(d), the noise of *every* coordinate. So the
sums cover the leading d̂ directions, the largest d (at least :data:`MIN_RELEASE_DIMS`) with

    v_d ≥ :data:`DIRECTION_SNR` · (t · C(d) / n̂)²,

computed with the sums alone taking the second event (C(d) grows with d and v_d falls, so the
directions that pass are always a leading run). The directions beyond d̂ are not released: a
class there is described by the public pool (mean 0, the spread of its territory). Small classes at
small ε get the floor, large classes the whole basis; the directions this gives on the demo's
features, and what it did end to end for small classes, are measured in docs/search.md §6.1.

**Which statistics.** Only when the sums cover the whole basis are the second moment and the
random-Fourier-feature sum considered; for each, the rule takes a public signal scale and keeps
the statistic only when

    signal · n̂ / s_c ≥ ``min_snr``,

with s_c the noise std it would get if every statistic were kept with the configured shares
(``search.release_shares``). The kept statistics share the second event's budget in the
configured proportions; those dropped are not released at all. Signal scales (all public):

* ``sum``: always kept (the class model and the search's means need it); its ratio is reported.
  Signal √v₁, the standard deviation of the public features along the first basis direction.
* ``second_moment``: v₁, the largest public variance — about the size of the class second
  moment's leading entry.
* ``rff``: √(e^{−1/2} / 2m), the size of one coordinate of a class's mean embedding when its
  members are no farther apart than the public median distance (the kernel's bandwidth ℓ, so
  the mean kernel value is at least e^{−1/2}); 2m is the number of features.

**Why this costs nothing extra.** The counts' event is a Gaussian mechanism with a fixed noise
multiplier, chosen before any data is read. The second event's noise multiplier is fixed too
(calibrated so that the two compose to the stage's ε); only *which vector* it releases depends
on the first event's output — the dimension and the clip radius C(d̂) included.
Composition theorems for Gaussian mechanisms (and the accountant's
composition of the two events) hold for such adaptively chosen mechanisms: each step's privacy
loss is that of a Gaussian with the given noise multiplier, whatever vector it is applied to, as
long as the vector's L2 sensitivity is 1 after scaling — which
:class:`~pcevolve.privacy.statistics.ClassStatisticsRelease` guarantees for any subset of
statistics. The choice itself is post-processing of the DP counts and public data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pcevolve.privacy.events import Neighbouring
from pcevolve.privacy.statistics import component_noise_stds

#: The statistics the second event may release, in release order.
REST: tuple[str, ...] = ("sum", "second_moment", "rff")
#: A direction is released when its public variance is at least this multiple of a typical class mean's noise
#: variance along it. Read off the demo's features at 10 per class: it labels better than keeping more directions
#: at small ε and as well at large ε, where the labels are flat over a wide range (measured in docs/search.md §6.1).
DIRECTION_SNR = 1.0
#: Never fewer released directions than this (or than the basis has).
MIN_RELEASE_DIMS = 4


@dataclass(frozen=True)
class ReleaseChoice:
    """What the second event releases, and why.

    Attributes:
        components: The statistics released (``sum`` first, always).
        shares: Their privacy shares within the second event (summing to 1).
        signal_to_noise: For every statistic of :data:`REST`, signal · n̂ / s_c as the rule read it (in the
            whole basis; the second moment and RFF ratios are only acted on when ``dim`` is the whole basis).
        typical_count: n̂, the mean noisy count (at least 1) the rule used.
        dim: d̂, the leading basis directions the sums cover.
        basis_dim: P, the whole basis.
    """

    components: tuple[str, ...]
    shares: Mapping[str, float]
    signal_to_noise: Mapping[str, float]
    typical_count: float
    dim: int
    basis_dim: int

    @property
    def dropped(self) -> tuple[str, ...]:
        return tuple(c for c in REST if c not in self.components)

    def summary(self) -> dict[str, object]:
        """Public description for the run's records (a function of the DP counts and public data)."""
        return {"components": list(self.components), "dropped": list(self.dropped),
                "shares": dict(self.shares), "signal_to_noise": dict(self.signal_to_noise),
                "typical_count": self.typical_count, "dim": self.dim, "basis_dim": self.basis_dim}


def signal_scales(public_variances: np.ndarray, rff_features: int) -> dict[str, float]:
    """The public signal scale of each statistic of :data:`REST` (module docstring)."""
    top = float(np.max(np.asarray(public_variances, dtype=np.float64)))
    return {"sum": math.sqrt(top), "second_moment": top, "rff": math.sqrt(math.exp(-0.5) / (2 * int(rff_features)))}


def typical_class_size(noisy_counts: np.ndarray) -> float:
    """n̂: the mean noisy count, at least 1 (the mean has the least noise of the counts' summaries)."""
    return max(float(np.mean(np.asarray(noisy_counts, dtype=np.float64))), 1.0)


def release_dimension(typical_count: float, *, noise_multiplier: float, clip_radii: np.ndarray,
                      public_variances: np.ndarray, neighbouring: Neighbouring) -> int:
    """d̂ of the module docstring: the leading directions where a class mean of ``typical_count`` samples,
    released by the sums alone at ``noise_multiplier``, rises above its noise.

    Args:
        clip_radii: C(d) for d = 1 … P: the public radius of the leading d coordinates (non-decreasing).
        public_variances: v_1 … v_P, largest first.
    """
    radii = np.asarray(clip_radii, dtype=np.float64)
    variances = np.asarray(public_variances, dtype=np.float64)
    if radii.shape != variances.shape or radii.ndim != 1 or np.any(radii <= 0) or np.any(np.diff(radii) < -1e-12):
        raise ValueError("clip_radii must be P positive, non-decreasing radii, one per basis direction")
    per_coordinate = component_noise_stds(noise_multiplier, {"sum": 1.0}, clip_norm=1.0,
                                          neighbouring=neighbouring)["sum"] / max(float(typical_count), 1.0)
    passes = variances >= DIRECTION_SNR * (per_coordinate * radii) ** 2
    leading = len(passes) if passes.all() else int(np.argmin(passes))
    return min(len(variances), max(leading, MIN_RELEASE_DIMS))


def choose_components(noisy_counts: np.ndarray, *, noise_multiplier: float, shares: Mapping[str, float],
                      clip_norm: float, public_variances: np.ndarray, rff_features: int,
                      neighbouring: Neighbouring, min_snr: float, clip_radii: np.ndarray | None = None,
                      dim: int | None = None) -> ReleaseChoice:
    """The rule of the module docstring.

    Args:
        noisy_counts: The first event's released counts.
        noise_multiplier: The second event's noise multiplier (fixed before this call).
        shares: Configured shares of ``sum``, ``second_moment`` and ``rff`` (any positive scale).
        clip_norm: C, the radius of the whole basis.
        public_variances: Public variances along the basis directions.
        rff_features: m (the mean embedding has 2m features).
        neighbouring: The ledger's relation (it sets the noise of each statistic).
        min_snr: Keep a statistic when its ratio reaches this; 0 keeps all of them.
        clip_radii: C(d) per leading dimension, for the dimension rule; ``None``: the sums cover the whole basis.
        dim: A fixed number of directions instead of the rule (``search.release_dim``).
    """
    if min_snr < 0 or not math.isfinite(min_snr):
        raise ValueError(f"min_snr must be a non-negative number, got {min_snr!r}")
    if set(shares) != set(REST) or any(not (w > 0) for w in shares.values()):
        raise ValueError(f"shares must give a positive share to each of {REST}, got {dict(shares)}")
    basis_dim = len(public_variances)
    typical = typical_class_size(noisy_counts)
    if dim is None:
        dim = basis_dim if clip_radii is None else release_dimension(
            typical, noise_multiplier=noise_multiplier, clip_radii=clip_radii, public_variances=public_variances,
            neighbouring=neighbouring)
    if not 1 <= dim <= basis_dim:
        raise ValueError(f"the release dimension must lie in 1..{basis_dim}, got {dim}")
    total = math.fsum(shares.values())
    all_shares = {c: shares[c] / total for c in REST}
    stds = component_noise_stds(noise_multiplier, all_shares, clip_norm=clip_norm, neighbouring=neighbouring)
    scales = signal_scales(public_variances, rff_features)
    ratio = {c: scales[c] * typical / stds[c] for c in REST}
    # Second moments and mean embeddings are only ever released over the whole basis, where they were measured.
    kept = tuple(c for c in REST if c == "sum" or (dim == basis_dim and ratio[c] >= min_snr))
    kept_total = math.fsum(all_shares[c] for c in kept)
    return ReleaseChoice(components=kept, shares={c: all_shares[c] / kept_total for c in kept},
                         signal_to_noise=ratio, typical_count=typical, dim=int(dim), basis_dim=basis_dim)
