"""Which class statistics the release spends its budget on, decided from the DP counts and public quantities.

The release (:mod:`pcevolve.search.release`) is made in two Gaussian events of the ``fitness`` stage:
first the per-class counts, then the rest. The rest is only worth its budget when the class's
*mean* of each statistic — the released sum divided by the class size — rises above its noise,
and that depends on the class size n: the mean's noise is s_c / n. With ten private samples per
class at ε = 8, the full second moment and the random-Fourier-feature mean embedding are mostly
noise, and the budget they take is missing from the sums that label every delivered sample.

So, after the counts are out, the rule reads the typical class size n̂ (the median noisy count,
at least 1) and, for each statistic, a public signal scale, and keeps a statistic only when

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
on the first event's output. Composition theorems for Gaussian mechanisms (and the accountant's
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


@dataclass(frozen=True)
class ReleaseChoice:
    """What the second event releases, and why.

    Attributes:
        components: The statistics released (``sum`` first, always).
        shares: Their privacy shares within the second event (summing to 1).
        signal_to_noise: For every statistic of :data:`REST`, signal · n̂ / s_c as the rule read it.
        typical_count: n̂, the median noisy count (at least 1) the rule used.
    """

    components: tuple[str, ...]
    shares: Mapping[str, float]
    signal_to_noise: Mapping[str, float]
    typical_count: float

    @property
    def dropped(self) -> tuple[str, ...]:
        return tuple(c for c in REST if c not in self.components)

    def summary(self) -> dict[str, object]:
        """Public description for the run's records (a function of the DP counts and public data)."""
        return {"components": list(self.components), "dropped": list(self.dropped),
                "shares": dict(self.shares), "signal_to_noise": dict(self.signal_to_noise),
                "typical_count": self.typical_count}


def signal_scales(public_variances: np.ndarray, rff_features: int) -> dict[str, float]:
    """The public signal scale of each statistic of :data:`REST` (module docstring)."""
    top = float(np.max(np.asarray(public_variances, dtype=np.float64)))
    return {"sum": math.sqrt(top), "second_moment": top, "rff": math.sqrt(math.exp(-0.5) / (2 * int(rff_features)))}


def choose_components(noisy_counts: np.ndarray, *, noise_multiplier: float, shares: Mapping[str, float],
                      clip_norm: float, public_variances: np.ndarray, rff_features: int,
                      neighbouring: Neighbouring, min_snr: float) -> ReleaseChoice:
    """The rule of the module docstring.

    Args:
        noisy_counts: The first event's released counts.
        noise_multiplier: The second event's noise multiplier (fixed before this call).
        shares: Configured shares of ``sum``, ``second_moment`` and ``rff`` (any positive scale).
        clip_norm: C, the radius features are clipped to.
        public_variances: Public variances along the basis directions.
        rff_features: m (the mean embedding has 2m features).
        neighbouring: The ledger's relation (it sets the noise of each statistic).
        min_snr: Keep a statistic when its ratio reaches this; 0 keeps all of them.
    """
    if min_snr < 0 or not math.isfinite(min_snr):
        raise ValueError(f"min_snr must be a non-negative number, got {min_snr!r}")
    if set(shares) != set(REST) or any(not (w > 0) for w in shares.values()):
        raise ValueError(f"shares must give a positive share to each of {REST}, got {dict(shares)}")
    typical = max(float(np.median(np.asarray(noisy_counts, dtype=np.float64))), 1.0)
    total = math.fsum(shares.values())
    all_shares = {c: shares[c] / total for c in REST}
    stds = component_noise_stds(noise_multiplier, all_shares, clip_norm=clip_norm, neighbouring=neighbouring)
    scales = signal_scales(public_variances, rff_features)
    ratio = {c: scales[c] * typical / stds[c] for c in REST}
    kept = tuple(c for c in REST if c == "sum" or ratio[c] >= min_snr)
    kept_total = math.fsum(all_shares[c] for c in kept)
    return ReleaseChoice(components=kept, shares={c: all_shares[c] / kept_total for c in kept},
                         signal_to_noise=ratio, typical_count=typical)
