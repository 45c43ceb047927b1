"""Empirical privacy audit: a statistical lower bound on ε from a distinguishing attack.

Run a release many times on two neighbouring datasets D and D′, score each output,
and test "was it D′?" by thresholding the score. If the release is (ε, δ)-DP,
every test's false-positive rate α and false-negative rate β satisfy

    1 − δ − β ≤ e^ε α   and   1 − δ − α ≤ e^ε β,

so ε ≥ max(log((1 − δ − β)/α), log((1 − δ − α)/β)). Replacing α and β by
Clopper–Pearson upper confidence bounds (one-sided, α/2 each: jointly valid with
probability ≥ 1 − ``alpha``) keeps the bound valid with that probability.

The threshold and direction are chosen on one half of the trials and the rates
are measured on the other half, so choosing the best test does not bias the
bound. A lower bound above the claimed ε means the implementation is broken; a
lower bound below it proves nothing about the claim beyond "not caught".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from scipy import stats

DatasetT = TypeVar("DatasetT")


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_lower_bound`.

    Attributes:
        epsilon_lower_bound: ε that the release provably exceeds with confidence 1 − ``alpha`` (≥ 0).
        threshold: Score threshold of the chosen test.
        direction: +1 if the test says "D′" for score ≥ threshold, −1 for score ≤ threshold.
        false_positive_rate: Measured on the evaluation half (D runs flagged as D′).
        false_negative_rate: Measured on the evaluation half (D′ runs not flagged).
        fpr_upper: Clopper–Pearson upper bound on the false-positive rate.
        fnr_upper: Clopper–Pearson upper bound on the false-negative rate.
        trials: Runs per dataset (half selection, half evaluation).
        alpha: 1 − confidence.
        delta: δ used in the bound.
    """

    epsilon_lower_bound: float
    threshold: float
    direction: int
    false_positive_rate: float
    false_negative_rate: float
    fpr_upper: float
    fnr_upper: float
    trials: int
    alpha: float
    delta: float


def clopper_pearson_upper(successes: int, trials: int, alpha: float) -> float:
    """One-sided (1 − alpha) Clopper–Pearson upper confidence bound on a binomial rate."""
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, trials >= 1; got {successes}, {trials}")
    if successes == trials:
        return 1.0
    return float(stats.beta.ppf(1.0 - alpha, successes + 1, trials - successes))


def epsilon_from_rates(fpr: float, fnr: float, delta: float = 0.0) -> float:
    """The ε lower bound implied by a test with these error rates (0 if none is implied)."""
    best = 0.0
    for a, b in ((fpr, fnr), (fnr, fpr)):
        numerator = 1.0 - delta - b
        if numerator <= 0:
            continue
        best = max(best, math.inf if a <= 0 else math.log(numerator / a))
    return best


def audit_lower_bound(
    release_fn: Callable[[DatasetT, np.random.Generator], Any],
    dataset_d: DatasetT,
    dataset_d_prime: DatasetT,
    *,
    trials: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
    delta: float = 0.0,
    score_fn: Callable[[Any], float] = float,
) -> AuditResult:
    """Lower-bound the ε of ``release_fn`` with a threshold attack on two neighbouring datasets.

    Args:
        release_fn: ``release_fn(dataset, rng)`` runs the whole release once with fresh
            randomness drawn from ``rng`` (it should charge its own throw-away ledger).
        dataset_d: D.
        dataset_d_prime: D′, differing from D in one (ideally worst-case) record.
        trials: Runs on each dataset; half choose the test, half measure it.
        rng: The generator every run draws from.
        alpha: 1 − confidence of the bound.
        delta: The δ the release claims (the bound is for that δ).
        score_fn: Maps one output to a real score (e.g. its projection on the direction
            in which D′ moves the output).

    Returns:
        The bound and the test that produced it.
    """
    if trials < 20:
        raise ValueError(f"need at least 20 trials per dataset, got {trials}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    scores_d = np.array([score_fn(release_fn(dataset_d, rng)) for _ in range(trials)], dtype=np.float64)
    scores_p = np.array([score_fn(release_fn(dataset_d_prime, rng)) for _ in range(trials)], dtype=np.float64)
    if not (np.all(np.isfinite(scores_d)) and np.all(np.isfinite(scores_p))):
        raise ValueError("scores must be finite")
    half = trials // 2
    threshold, direction = _best_test(scores_d[:half], scores_p[:half], alpha=alpha, delta=delta)
    eval_d, eval_p = direction * scores_d[half:], direction * scores_p[half:]
    cut = direction * threshold
    false_pos = int(np.count_nonzero(eval_d >= cut))
    false_neg = int(np.count_nonzero(eval_p < cut))
    fpr_upper = clopper_pearson_upper(false_pos, eval_d.size, alpha / 2)
    fnr_upper = clopper_pearson_upper(false_neg, eval_p.size, alpha / 2)
    return AuditResult(
        epsilon_lower_bound=epsilon_from_rates(fpr_upper, fnr_upper, delta),
        threshold=float(threshold), direction=direction,
        false_positive_rate=false_pos / eval_d.size, false_negative_rate=false_neg / eval_p.size,
        fpr_upper=fpr_upper, fnr_upper=fnr_upper, trials=trials, alpha=alpha, delta=delta,
    )


def _best_test(scores_d: np.ndarray, scores_p: np.ndarray, *, alpha: float, delta: float) -> tuple[float, int]:
    """Threshold and direction maximising the confidence-bounded ε on the selection half."""
    best = (-1.0, float(np.median(scores_d)), 1)
    candidates = np.unique(np.concatenate([scores_d, scores_p]))
    for direction in (1, -1):
        d_sorted = np.sort(direction * scores_d)
        p_sorted = np.sort(direction * scores_p)
        signed = np.unique(direction * candidates)
        false_pos = d_sorted.size - np.searchsorted(d_sorted, signed, side="left")  # D scores >= cut
        false_neg = np.searchsorted(p_sorted, signed, side="left")  # D′ scores < cut
        fpr_upper = _cp_upper_vector(false_pos, d_sorted.size, alpha / 2)
        fnr_upper = _cp_upper_vector(false_neg, p_sorted.size, alpha / 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            eps = np.maximum(np.log((1 - delta - fnr_upper) / fpr_upper), np.log((1 - delta - fpr_upper) / fnr_upper))
        eps = np.where(np.isfinite(eps), eps, -1.0)
        index = int(np.argmax(eps))
        if eps[index] > best[0]:
            best = (float(eps[index]), float(direction * signed[index]), direction)
    return best[1], best[2]


def _cp_upper_vector(successes: np.ndarray, trials: int, alpha: float) -> np.ndarray:
    upper = stats.beta.ppf(1.0 - alpha, successes + 1, np.maximum(trials - successes, 1))
    return np.where(successes >= trials, 1.0, upper)
