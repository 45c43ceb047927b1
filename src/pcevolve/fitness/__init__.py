"""Fitness of a candidate synthetic set: pure, fast functions of the candidate and the DP targets.

Privacy (for ``docs/privacy.md``). The private data is touched exactly once, by the
ledger-charged ``ClassStatisticsRelease`` of per-class count, clipped sum, full second
moment and random-Fourier-feature sum. :meth:`FitnessTargets.from_release` turns that
:class:`~pcevolve.privacy.NoisyClassStatistics` plus public randomness (the RFF
frequencies, a public ``Generator``) into the targets; everything after is
post-processing. :func:`evaluate` takes only the candidate (features, labels, optional
round-trip features), the targets and the weights — there is no argument through which
private data could arrive. What each term reads besides the candidate:

============  ====================================================  ==========  =========
term          reads from the targets                                range       direction
============  ====================================================  ==========  =========
accuracy      validation sample (drawn from N(μ_k, Σ_k))            [0, 1]      higher
mmd           ``rff`` (public), ``rff_means``, ``rff_noise_floor``  [0, 4]      lower
wasserstein   validation sample, ``projections`` (public)           [0, ∞)      lower, logged only
attack        ``means``, ``covariances``, validation sample         [0, 1]      lower
privacy       ``covariances`` (√(2 tr Σ_k) sets the threshold)      [0, 1]      lower
diversity     validation sample                                     [0, 1]      higher
consistency   ``means``, ``covariances`` (DP-Gaussian LDA)          [0, 1]      higher
shift         nothing: the search's individual, passed in           [0, ∞)      lower
============  ====================================================  ==========  =========

``counts`` (released) only set the denominators and the pooled fallback for classes
whose noisy count is too small. No term reads a raw private feature, label or a
per-record distance; the seed's "nearest real neighbour farther than a threshold" check
becomes near-duplicates within the synthetic set, and checks against individual
real records are left to a ledger-charged count at delivery or to evaluation.

Modules: ``targets`` (the DP targets), ``reference`` (their cached reference statistics),
``candidate`` (a checked candidate and its within-class distances, computed once),
``accuracy``, ``distribution`` (mmd, wasserstein), ``coverage`` (attack, privacy,
diversity), ``consistency``, ``evaluate`` (the weighted total), ``geometry`` (distances).
Each term takes a :class:`Candidate` and the targets and returns a float.
"""

from pcevolve.fitness.accuracy import accuracy, fit_ridge_classifier
from pcevolve.fitness.candidate import Candidate
from pcevolve.fitness.consistency import consistency, dp_gaussian_predict
from pcevolve.fitness.coverage import attack, diversity, privacy_violation
from pcevolve.fitness.distribution import mmd, wasserstein
from pcevolve.fitness.evaluate import (
    TERMS,
    FitnessBreakdown,
    FitnessOptions,
    TermInfo,
    evaluate,
    weighted_total,
)
from pcevolve.fitness.targets import FitnessTargets, repair_covariance, shrink_class_covariances, shrink_covariance

__all__ = [
    "TERMS",
    "Candidate",
    "FitnessBreakdown",
    "FitnessOptions",
    "FitnessTargets",
    "TermInfo",
    "accuracy",
    "attack",
    "consistency",
    "diversity",
    "dp_gaussian_predict",
    "evaluate",
    "fit_ridge_classifier",
    "mmd",
    "privacy_violation",
    "repair_covariance",
    "shrink_class_covariances",
    "shrink_covariance",
    "wasserstein",
    "weighted_total",
]
