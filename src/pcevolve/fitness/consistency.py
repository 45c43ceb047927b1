"""Label consistency: do decoded, re-encoded samples still read as their class?

The judge is a linear discriminant of the released class means with equal priors, whose
covariance is the targets' public ``discriminant_covariance`` when given (the run passes the
public pool's), else the pooled DP covariance Σ̄ = mean_k Σ_k. Linear and pooled rather than
quadratic because noisy per-class covariances make QDA's log-determinants unstable.

Reads: the round-trip features (or the candidate features), the intended labels and
``targets.means`` / ``targets.covariances`` (or the public covariance).
"""

from __future__ import annotations

import numpy as np

from pcevolve.fitness.candidate import Candidate
from pcevolve.fitness.targets import FitnessTargets


def dp_gaussian_predict(features: np.ndarray, targets: FitnessTargets) -> np.ndarray:
    """Class predicted by the targets' linear discriminant for each row of ``features``."""
    reference = targets.reference
    return np.argmax(np.asarray(features, dtype=np.float64) @ reference.lda_weights + reference.lda_bias, axis=1)


def consistency(candidate: Candidate, targets: FitnessTargets) -> float:
    """Share of samples the DP-Gaussian discriminant assigns to their intended label; in [0, 1], higher better.

    ``candidate.roundtrip`` holds what each sample's features become after decode →
    re-encode; it is what gets classified. Without it the candidate features are
    classified themselves: the term then checks only that the search placed each class's
    points where the DP statistics say that class lives.
    """
    judged = candidate.features if candidate.roundtrip is None else candidate.roundtrip
    return float(np.mean(dp_gaussian_predict(judged, targets) == candidate.labels))
