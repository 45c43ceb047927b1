"""Distribution distance in the reduced feature space: RFF-MMD and sliced Wasserstein-2.

``mmd`` reads the candidate and ``targets.rff`` / ``targets.rff_means`` (the released mean
embeddings). ``wasserstein`` reads the candidate, ``targets.projections`` and the
validation sample (drawn from the DP Gaussians).
"""

from __future__ import annotations

import math

import numpy as np

from pcevolve.fitness.candidate import Candidate
from pcevolve.fitness.targets import FitnessTargets

# Quantile grid of the 1-D W2: exact (lcm of the two sizes) up to this many points, a midpoint grid beyond.
MAX_QUANTILES = 4096


def mmd(candidate: Candidate, targets: FitnessTargets) -> float:
    """Mean over classes (equal weights) of max(‖mean_i ψ(x_i) − targets.rff_means[k]‖² − floor_k, 0)
    over the class-k candidate, with floor_k = ``targets.rff_noise_floor[k]``.

    With the release's RFF map ψ, ‖…‖² is the plug-in estimate of the squared Gaussian-kernel
    MMD (bandwidth ``targets.rff.bandwidth``) between candidate class k and private class k,
    plus the released embedding's own noise, which stays below floor_k 19 times in 20. Only the part
    above the floor says anything about the candidate: below it, getting closer to the released
    embedding means following its noise (on the demo at ε = 1, with the embedding's noise larger
    than its signal, a search that rewarded it moved for its whole run and delivered a set that
    trained the downstream CNN no better than its start: docs/search.md §5).
    Classes are weighted equally, not by released counts: every class matters equally to
    the downstream classifier, and noisy counts would add noise to the weights.

    Range: [0, 4] by construction (‖ψ‖ = 1; noise can push a released mean slightly past norm 1);
    about (1 − ‖μ‖²)/n for a perfect candidate of n points per class without noise, up to ≈ 2 for disjoint
    supports. Lower is better. 0 when the release has no RFF sums (too few private samples for the
    mean embedding to rise above its noise: :mod:`pcevolve.privacy.release_rule`).
    """
    if targets.rff_means is None:
        return 0.0
    embedded = _rff_float32(candidate.features, targets.rff.frequencies)
    per_class = [embedded[g].mean(axis=0, dtype=np.float64) - targets.rff_means[k]
                 for k, g in enumerate(candidate.groups)]
    floor = targets.rff_noise_floor
    return float(np.mean([max(d @ d - floor[k], 0.0) for k, d in enumerate(per_class)]))


def _rff_float32(x: np.ndarray, frequencies: np.ndarray) -> np.ndarray:
    """ψ(x) as ``RandomFourierFeatures.transform`` computes it, with cos/sin in float32.

    NumPy's float32 cos/sin are SIMD-vectorised and far faster than float64 here (timed in
    docs/performance.md, "Smaller choices"), which is most of ``evaluate``'s time; their ~1e-7
    error is far below the term's sampling noise (~1/n). Phases are formed in float64 and are
    O(‖x‖/ℓ), a few units, so rounding them to float32 costs ~1e-6 absolute.
    """
    phase = (x @ frequencies.T).astype(np.float32)
    scale = np.float32(1.0 / math.sqrt(frequencies.shape[0]))
    return np.concatenate([np.cos(phase), np.sin(phase)], axis=1) * scale


def _w2_squared_1d(a_sorted: np.ndarray, b_sorted: np.ndarray) -> np.ndarray:
    """Squared W2 between the empirical distributions of each column of two sorted arrays → (L,)."""
    n, m = a_sorted.shape[0], b_sorted.shape[0]
    grid = min(math.lcm(n, m), MAX_QUANTILES)
    levels = (np.arange(grid) + 0.5) / grid
    diff = a_sorted[(levels * n).astype(np.int64)] - b_sorted[(levels * m).astype(np.int64)]
    return np.mean(diff * diff, axis=0)


def wasserstein(candidate: Candidate, targets: FitnessTargets) -> float:
    """Relative sliced Wasserstein-2 between each candidate class and its DP reference sample.

    Per class k: SW2_k = √(mean over the L fixed directions of W2² of the 1-D projections),
    divided by the reference sample's RMS projected standard deviation σ_k, so it is unitless
    (shifting a matching class by a vector s reads about ‖s‖ / (√P σ_k), the RMS projected
    shift over random directions). Averaged over classes with equal weights. The 1-D W2 is
    exact when lcm(n, V) ≤ 4096 and uses a 4096-point quantile grid otherwise.

    Range [0, ∞); near 0 for a candidate drawn from the DP Gaussians (sampling noise only).
    Lower is better. Logged, not weighted into the total (see :mod:`pcevolve.fitness`).
    """
    reference = targets.reference
    projected = candidate.features @ targets.projections.T
    values = [math.sqrt(float(np.mean(_w2_squared_1d(np.sort(projected[g], axis=0),
                                                     reference.sorted_projections[k]))))
              / reference.projection_scale[k] for k, g in enumerate(candidate.groups)]
    return float(np.mean(values))
