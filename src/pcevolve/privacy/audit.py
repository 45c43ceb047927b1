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
from typing import Any, Literal, TypeVar

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
    _check_finite(scores_d, scores_p)
    half = trials // 2
    # Only a test whose bound beats −1 is chosen; otherwise the median of D's scores, as before μ bounds existed.
    threshold, direction = _best_cut(scores_d[:half], scores_p[:half], alpha=alpha,
                                     bound_of=lambda fpr, fnr: _pure_bounds(fpr, fnr, delta), floor=-1.0)
    rates = _measure(scores_d[half:], scores_p[half:], threshold, direction, alpha=alpha)
    return AuditResult(
        epsilon_lower_bound=epsilon_from_rates(rates.fpr_upper, rates.fnr_upper, delta),
        threshold=float(threshold), direction=direction,
        false_positive_rate=rates.false_positive_rate, false_negative_rate=rates.false_negative_rate,
        fpr_upper=rates.fpr_upper, fnr_upper=rates.fnr_upper, trials=trials, alpha=alpha, delta=delta,
    )


@dataclass(frozen=True)
class _Rates:
    """One test's rates on the evaluation half, and their Clopper–Pearson upper bounds (α/2 each)."""

    false_positive_rate: float
    false_negative_rate: float
    fpr_upper: float
    fnr_upper: float


def _measure(scores_d: np.ndarray, scores_p: np.ndarray, threshold: float, direction: int, *,
             alpha: float) -> _Rates:
    """The rates of the test "D′ when direction · score ≥ direction · threshold" on the evaluation half."""
    eval_d, eval_p = direction * scores_d, direction * scores_p
    cut = direction * threshold
    false_pos = int(np.count_nonzero(eval_d >= cut))
    false_neg = int(np.count_nonzero(eval_p < cut))
    return _Rates(false_pos / eval_d.size, false_neg / eval_p.size,
                  clopper_pearson_upper(false_pos, eval_d.size, alpha / 2),
                  clopper_pearson_upper(false_neg, eval_p.size, alpha / 2))


def _check_finite(scores_d: np.ndarray, scores_p: np.ndarray) -> None:
    if not (np.all(np.isfinite(scores_d)) and np.all(np.isfinite(scores_p))):
        raise ValueError("scores must be finite")


def _cp_upper_vector(successes: np.ndarray, trials: int, alpha: float) -> np.ndarray:
    upper = stats.beta.ppf(1.0 - alpha, successes + 1, np.maximum(trials - successes, 1))
    return np.where(successes >= trials, 1.0, upper)


# --------------------------------------------------------------------------- trade-off audits against a claim
#
# A Gaussian mechanism's whole privacy is one number, μ (μ-GDP; Dong, Roth & Su 2022): every test between
# neighbours has FNR ≥ Φ(Φ⁻¹(1 − FPR) − μ). One test at moderate rates therefore bounds μ from below,
# μ ≥ Φ⁻¹(1 − FPR) − Φ⁻¹(FNR), and μ fixes ε at every δ — so a few thousand runs audit ε = 8, where the
# (ε, δ) bound above would need rates near e⁻⁸. A pure-ε claim (an exponential mechanism) is audited with
# the (ε, 0) bound of :func:`epsilon_from_rates`, which its ratios reach at moderate rates.

Model = Literal["gdp", "pure"]


#: What a Gaussian mechanism's "bound ε" is, in the words every output of the audit uses.
GDP_BOUND_NOTE = ("For a Gaussian mechanism (a claimed μ) the test's error rates are checked against the trade-off "
                  "curve of μ-GDP: a point below it refutes μ-GDP, the claim the accountant composes, and its bound "
                  "ε is the ε of a μ-GDP mechanism at δ — it refutes μ-GDP, not (ε, δ)-DP in general.")


@dataclass(frozen=True)
class TradeOffBound:
    """A lower bound on a mechanism's privacy from a distinguishing test, beside the mechanism's claim.

    Attributes:
        model: ``"gdp"``: the claim is μ-GDP (a Gaussian mechanism; ``claimed_mu``), the bound is on μ and
            turned into ε at ``delta``. ``"pure"``: the claim is pure ε-DP, the bound is on ε directly.
        mu_lower_bound: μ that the mechanism provably exceeds with confidence 1 − ``alpha`` (``"gdp"`` only).
        epsilon_lower_bound: For ``"pure"``, the ε the mechanism provably exceeds with confidence 1 − ``alpha`` (at
            δ = 0). For ``"gdp"``, the ε at ``delta`` of a μ_lower-GDP mechanism: a bound that refutes the μ-GDP
            claim, not (ε, δ)-DP in general (:data:`GDP_BOUND_NOTE`).
        claimed_epsilon: The ledger's ε for the audited events.
        claimed_mu: The μ the accountant's events amount to (``"gdp"``), else ``None``.
        false_positive_rate / false_negative_rate: Measured on the evaluation half.
        fpr_upper / fnr_upper: Their Clopper–Pearson upper bounds (α/2 each).
        trials: Runs per dataset (half choose the test, half measure it).
    """

    model: Model
    mu_lower_bound: float | None
    epsilon_lower_bound: float
    claimed_epsilon: float
    claimed_mu: float | None
    false_positive_rate: float
    false_negative_rate: float
    fpr_upper: float
    fnr_upper: float
    trials: int
    alpha: float
    delta: float

    @property
    def passed(self) -> bool:
        """The bound stays at or below the claim (a bound above it means the implementation is broken)."""
        if self.model == "gdp":
            return self.mu_lower_bound is not None and self.mu_lower_bound <= float(self.claimed_mu)
        return self.epsilon_lower_bound <= self.claimed_epsilon

    def to_json(self) -> dict[str, Any]:
        """Plain numbers (no private data: the audit's datasets are synthetic worst cases)."""
        return {"model": self.model, "mu_lower_bound": self.mu_lower_bound,
                "epsilon_lower_bound": self.epsilon_lower_bound, "claimed_epsilon": self.claimed_epsilon,
                "claimed_mu": self.claimed_mu, "passed": self.passed,
                "false_positive_rate": self.false_positive_rate, "false_negative_rate": self.false_negative_rate,
                "fpr_upper": self.fpr_upper, "fnr_upper": self.fnr_upper, "trials": self.trials,
                "confidence": 1.0 - self.alpha, "delta": self.delta}


def mu_from_rates(fpr: float, fnr: float) -> float:
    """The smallest μ for which a μ-GDP mechanism allows a test with these error rates (0 if any μ does)."""
    if not (0.0 < fpr <= 1.0 and 0.0 < fnr <= 1.0):
        raise ValueError(f"rates must lie in (0, 1], got {fpr!r}, {fnr!r}")
    return max(0.0, float(stats.norm.isf(fpr) - stats.norm.ppf(fnr)))


def epsilon_of_mu(mu: float, delta: float) -> float:
    """ε at ``delta`` of a μ-GDP mechanism (a Gaussian of sensitivity 1 and std 1/μ), by dp-accounting's PLD.

    The estimate is the library's optimistic one: a lower bound turned into ε must not be rounded up.
    """
    if mu <= 0:
        return 0.0
    if not math.isfinite(mu):
        return math.inf
    from dp_accounting.pld import privacy_loss_distribution

    pld = privacy_loss_distribution.from_gaussian_mechanism(
        1.0 / mu, pessimistic_estimate=False, use_connect_dots=False, value_discretization_interval=1e-3)
    return max(0.0, float(pld.get_epsilon_for_delta(delta)))


def audit_trade_off(
    scores_d: np.ndarray, scores_p: np.ndarray, *, model: Model, claimed_epsilon: float,
    claimed_mu: float | None = None, alpha: float = 0.05, delta: float = 0.0,
) -> TradeOffBound:
    """Bound a mechanism's μ (``"gdp"``) or pure ε (``"pure"``) from scores of runs on D and on D′.

    The first half of each array chooses the threshold and direction that maximise the bound; the second half
    measures that test's rates, whose Clopper–Pearson upper bounds (α/2 each) give the bound with confidence
    1 − ``alpha``.

    Args:
        scores_d / scores_p: One score per run on D / D′ (equal lengths, at least 20).
        model: See :class:`TradeOffBound`.
        claimed_epsilon: The ledger's ε for what was run.
        claimed_mu: The μ of the accountant's events (required for ``"gdp"``).
        delta: The δ at which a μ bound is turned into ε (``"gdp"``); a pure claim is audited at δ = 0.
    """
    scores_d = np.asarray(scores_d, dtype=np.float64)
    scores_p = np.asarray(scores_p, dtype=np.float64)
    if scores_d.shape != scores_p.shape or scores_d.ndim != 1 or scores_d.size < 20:
        raise ValueError(f"need two 1-D score arrays of one length >= 20, got {scores_d.shape} and {scores_p.shape}")
    _check_finite(scores_d, scores_p)
    if model == "gdp" and (claimed_mu is None or not claimed_mu > 0):
        raise ValueError("a GDP audit needs the claimed μ")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    half = scores_d.size // 2
    bound_of = _mu_bounds if model == "gdp" else _pure_bounds
    threshold, direction = _best_cut(scores_d[:half], scores_p[:half], alpha=alpha, bound_of=bound_of)
    rates = _measure(scores_d[half:], scores_p[half:], threshold, direction, alpha=alpha)
    if model == "gdp":
        mu = mu_from_rates(rates.fpr_upper, rates.fnr_upper)
        epsilon = epsilon_of_mu(mu, delta)
    else:
        mu, epsilon = None, epsilon_from_rates(rates.fpr_upper, rates.fnr_upper, 0.0)
    return TradeOffBound(model=model, mu_lower_bound=mu, epsilon_lower_bound=epsilon,
                         claimed_epsilon=float(claimed_epsilon), claimed_mu=claimed_mu,
                         false_positive_rate=rates.false_positive_rate, false_negative_rate=rates.false_negative_rate,
                         fpr_upper=rates.fpr_upper, fnr_upper=rates.fnr_upper, trials=int(scores_d.size), alpha=alpha,
                         delta=delta if model == "gdp" else 0.0)


def _mu_bounds(fpr_upper: np.ndarray, fnr_upper: np.ndarray) -> np.ndarray:
    return stats.norm.isf(fpr_upper) - stats.norm.ppf(fnr_upper)


def _pure_bounds(fpr_upper: np.ndarray, fnr_upper: np.ndarray, delta: float = 0.0) -> np.ndarray:
    """ε ≥ max(log((1 − δ − FNR⁺)/FPR⁺), log((1 − δ − FPR⁺)/FNR⁺)) for every candidate test at once."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.maximum(np.log((1 - delta - fnr_upper) / fpr_upper), np.log((1 - delta - fpr_upper) / fnr_upper))


#: False-positive rates at which a GDP audit places its candidate thresholds. A few moderate rates, not every score:
#: the best of thousands of thresholds on the selection half is mostly that half's luck, which the evaluation
#: half then takes back (a μ = 1 step's bound came out lower that way than with these: docs/privacy.md §10.1).
GDP_CUT_RATES = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)


def _best_cut(scores_d: np.ndarray, scores_p: np.ndarray, *, alpha: float,
              bound_of: Callable[[np.ndarray, np.ndarray], np.ndarray],
              floor: float = -math.inf) -> tuple[float, int]:
    """Threshold and direction whose confidence-bounded test maximises ``bound_of`` on the selection half (the
    median of D's scores, direction +1, when no test's bound passes ``floor``).

    A μ bound tries the thresholds at :data:`GDP_CUT_RATES` of D's scores; an ε bound (discrete outcomes of an
    exponential mechanism) every distinct score.
    """
    best = (floor, float(np.median(scores_d)), 1)
    candidates = np.unique(np.concatenate([scores_d, scores_p]))
    for direction in (1, -1):
        d_sorted, p_sorted = np.sort(direction * scores_d), np.sort(direction * scores_p)
        if bound_of is _mu_bounds:
            signed = np.unique(np.quantile(d_sorted, 1.0 - np.asarray(GDP_CUT_RATES)))
        else:
            signed = np.unique(direction * candidates)
        false_pos = d_sorted.size - np.searchsorted(d_sorted, signed, side="left")
        false_neg = np.searchsorted(p_sorted, signed, side="left")
        bounds = bound_of(_cp_upper_vector(false_pos, d_sorted.size, alpha / 2),
                          _cp_upper_vector(false_neg, p_sorted.size, alpha / 2))
        bounds = np.where(np.isfinite(bounds), bounds, -math.inf)
        index = int(np.argmax(bounds))
        if bounds[index] > best[0]:
            best = (float(bounds[index]), float(direction * signed[index]), direction)
    return best[1], best[2]


# --------------------------------------------------------------------------- one run, many canaries
#
# Steinke, Nasr & Jagielski (2023), "Privacy auditing with one (1) training run": m canaries each join the
# private set with probability ½, independently; after one run the auditor guesses in/out for r of them and is
# right v times. An (ε, δ)-DP run makes v at most as large as Binomial(r, e^ε/(1 + e^ε)) in distribution, up to
# a δ term (their Theorem 5.2). The bound is the largest ε whose p-value for v is below 1 − confidence.


def one_run_p_value(canaries: int, guesses: int, correct: int, epsilon: float, delta: float) -> float:
    """P[v ≥ ``correct``] under an (ε, δ)-DP run: the binomial tail plus the theorem's δ term."""
    if not 0 <= correct <= guesses <= canaries:
        raise ValueError(f"need 0 <= correct <= guesses <= canaries, got {correct}, {guesses}, {canaries}")
    q = 1.0 / (1.0 + math.exp(-epsilon))
    tail = float(stats.binom.sf(correct - 1, guesses, q))
    # max over i of P[correct − i ≤ Bin(r, q) < correct] / i, the theorem's factor on 2mδ.
    below = stats.binom.pmf(np.arange(correct - 1, -1, -1), guesses, q)
    factor = float(np.max(np.cumsum(below) / np.arange(1, correct + 1))) if correct > 0 else 0.0
    return min(1.0, tail + factor * 2.0 * canaries * delta)


def one_run_epsilon(canaries: int, guesses: int, correct: int, *, delta: float, alpha: float = 0.05) -> float:
    """The largest ε (to 1e-4) at which ``correct`` of ``guesses`` right has p-value < ``alpha`` (0 if none)."""
    if one_run_p_value(canaries, guesses, correct, 0.0, delta) >= alpha:
        return 0.0
    low, high = 0.0, 1.0
    while one_run_p_value(canaries, guesses, correct, high, delta) < alpha:
        low, high = high, 2.0 * high
        if high > 200:
            return math.inf
    while high - low > 1e-4:
        middle = 0.5 * (low + high)
        if one_run_p_value(canaries, guesses, correct, middle, delta) < alpha:
            low = middle
        else:
            high = middle
    return low


def one_run_ceiling(canaries: int, guesses: int, *, delta: float, alpha: float = 0.05) -> float:
    """The largest bound ``guesses`` guesses can give: every one of them right."""
    return one_run_epsilon(canaries, guesses, guesses, delta=delta, alpha=alpha)
