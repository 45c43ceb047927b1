"""Density, near-duplicate and spread terms of the fitness, against the DP reference only.

No fitness term may look at real records (only at DP releases), so "synthetic mass piled on dense real
regions" and "synthetic copies of real records" are judged the only way that is free:
against the DP Gaussians N(μ_k, Σ_k) and the reference sample drawn from them
(``targets.validation_*``), and against the candidate itself. A candidate that copies a
few modes (a prototype of the class, or a handful of points) is exactly what would
mirror real records, and it shows up as excess local density, mass at the centre of the
DP Gaussian, near-duplicates and lost spread.

Reads: the candidate and ``targets.means``, ``targets.covariances`` (via the whitening
matrices and √(2 tr Σ_k)) and the validation sample.
"""

from __future__ import annotations

import numpy as np

from pcevolve.fitness.candidate import Candidate
from pcevolve.fitness.geometry import even_subsample, knn_radii, mean_pairwise_distance
from pcevolve.fitness.targets import FitnessTargets

DEFAULT_KNN = 5
DEFAULT_DENSE_RATIO = 0.5
DEFAULT_DUPLICATE_FRACTION = 0.1


def _excess(share: float, reference_share: float) -> float:
    """How far the candidate's share of too-dense points exceeds the reference's, rescaled to [0, 1]."""
    return float(np.clip((share - reference_share) / (1.0 - reference_share), 0.0, 1.0))


def attack(candidate: Candidate, targets: FitnessTargets, *, knn: int = DEFAULT_KNN,
           ratio: float = DEFAULT_DENSE_RATIO) -> float:
    """Density/coverage attack surface: the mean of two excess-density shares; in [0, 1], lower better.

    Per class k, with n candidate points:

    * local density (on at most V of the n points, evenly subsampled): r_i = distance from candidate point i to its
      k-th nearest candidate neighbour (k = min(``knn``, n − 1)); the reference radii are the same statistic in
      equally sized chunks of the reference sample. A point is far denser than the
      reference when r_i < ``ratio`` × their median (with ratio ½ in P dimensions, a local
      density ~2^P times higher).
    * core mass: m_i = Mahalanobis radius of x_i under N(μ_k, Σ_k); too central when
      m_i < ``ratio`` × the reference sample's median radius — points piled on the centre
      of the DP density, where real records are densest.

    Each share s becomes (s − s_ref)/(1 − s_ref) clipped to [0, 1], where s_ref is the
    reference sample's own share (≈ 0 in high dimension): ≈ 0 for a sample from the DP
    Gaussian, 1 when every point is that dense. The class value is the mean of the two;
    classes are weighted by their candidate point counts. A relative margin (not a low
    quantile) keeps the term quiet under the mild shape mismatch between real data and its
    DP Gaussian, where k-NN radii shift by tens of percent but collapsed mass shifts them by
    orders of magnitude.
    """
    if not 0.0 < ratio < 1.0 or knn < 1:
        raise ValueError(f"ratio must be in (0, 1) and knn >= 1, got {ratio!r}, {knn!r}")
    reference = targets.reference
    total = 0.0
    for k, g in enumerate(candidate.groups):
        keep = even_subsample(g.size, reference.validation_size(k))
        n = keep.size
        neighbours = min(knn, n - 1)
        radii = knn_radii(candidate.class_distances(k)[np.ix_(keep, keep)], neighbours)
        tau_local, share_local = reference.knn_threshold(k, k=neighbours, size=n, ratio=ratio)
        maha = np.linalg.norm((candidate.class_features(k) - targets.means[k]) @ reference.whitening[k], axis=1)
        tau_core, share_core = reference.mahalanobis_threshold(k, ratio=ratio)
        value = 0.5 * (_excess(float(np.mean(radii < tau_local)), share_local)
                       + _excess(float(np.mean(maha < tau_core)), share_core))
        total += value * g.size
    return total / candidate.size


def privacy_violation(candidate: Candidate, targets: FitnessTargets, *,
                      duplicate_fraction: float = DEFAULT_DUPLICATE_FRACTION) -> float:
    """Share of candidate points with a near-duplicate in their own class; in [0, 1], lower better.

    Point i of class k is a near-duplicate when another class-k candidate point lies within
    ``duplicate_fraction`` × √(2 tr Σ_k) (the RMS distance between two independent draws of
    the DP Gaussian of class k). Copies of one point are what would mirror a real record; a
    sample from a P-dimensional Gaussian essentially never has pairs that close.
    """
    if not duplicate_fraction > 0:
        raise ValueError(f"duplicate_fraction must be positive, got {duplicate_fraction!r}")
    threshold = duplicate_fraction * targets.reference.typical_distance
    duplicates = 0
    for k in range(targets.num_classes):
        nearest = knn_radii(candidate.class_distances(k), 1)
        duplicates += int(np.count_nonzero(nearest < threshold[k]))
    return duplicates / candidate.size


def diversity(candidate: Candidate, targets: FitnessTargets) -> float:
    """Mean over classes of min(1, candidate mean pairwise distance / reference mean pairwise distance).

    The reference is the class's validation sample (mean pairwise distance is unbiased
    for any sample size, so n and V may differ). Capped at 1 because spreading wider
    than the data is not more useful: beyond the data's own spread, extra spread is
    distribution mismatch, which the MMD term already prices. In [0, 1], higher better.
    """
    reference = targets.reference.mean_distance
    ratios = [min(1.0, mean_pairwise_distance(candidate.class_distances(k)) / reference[k])
              for k in range(targets.num_classes)]
    return float(np.mean(ratios))
