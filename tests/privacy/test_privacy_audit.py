"""The empirical audit stays below a correct claim and catches a mechanism with 10x too little noise."""

import math
from dataclasses import dataclass

import numpy as np
import pytest
from privacy_helpers import ScaledNoise

from pcevolve.privacy import (
    BudgetLedger,
    ClassStatisticsRelease,
    GeneratorNoise,
    audit_lower_bound,
    clopper_pearson_upper,
    epsilon_from_rates,
)

CLAIMED_EPSILON, DELTA, CLIP = 1.0, 1e-5, 1.0
TRIALS = 6000


@dataclass(frozen=True)
class Dataset:
    features: np.ndarray
    labels: np.ndarray


# D: 20 records at the origin. D′: D plus the worst-case record (norm C along one axis).
D = Dataset(np.zeros((20, 2)), np.zeros(20, dtype=int))
D_PRIME = Dataset(np.vstack([D.features, [[5.0, 0.0]]]), np.zeros(21, dtype=int))

# The Gaussian mean release: noisy per-class count and clipped sum (mean = sum / count), claimed ε = 1.
RELEASE = ClassStatisticsRelease.calibrated(CLAIMED_EPSILON, DELTA, num_classes=1, clip_norm=CLIP,
                                            components=("count", "sum"))
STDS = RELEASE.noise_stds()


def run_release(noise_factor: float):
    def release(dataset: Dataset, rng: np.random.Generator):
        # The claim is enforced; seeded noise so that the audit repeats.
        ledger = BudgetLedger(CLAIMED_EPSILON, DELTA, {"audit": CLAIMED_EPSILON}, reproducible_noise=True)
        noise = ScaledNoise(GeneratorNoise(rng), noise_factor)
        return RELEASE.release(dataset.features, dataset.labels, ledger=ledger, stage="audit", noise=noise)

    return release


def likelihood_ratio_score(output) -> float:
    # D′ shifts the count by 1 and the sum by C along x; in noise units the optimal test projects on that shift.
    return float(output.counts[0] / STDS["count"] ** 2 + output.sums[0, 0] * CLIP / STDS["sum"] ** 2)


def test_correct_gaussian_mean_release_is_not_caught():
    result = audit_lower_bound(run_release(1.0), D, D_PRIME, trials=TRIALS, rng=np.random.default_rng(11),
                               delta=DELTA, score_fn=likelihood_ratio_score)
    assert result.epsilon_lower_bound <= CLAIMED_EPSILON
    assert 0.0 <= result.fpr_upper <= 1.0 and 0.0 <= result.fnr_upper <= 1.0


def test_broken_release_with_ten_times_less_noise_is_caught():
    result = audit_lower_bound(run_release(0.1), D, D_PRIME, trials=TRIALS, rng=np.random.default_rng(12),
                               delta=DELTA, score_fn=likelihood_ratio_score)
    assert result.epsilon_lower_bound > CLAIMED_EPSILON
    assert result.direction == 1  # D′ pushes the score up


def test_audit_bound_is_valid_for_a_mechanism_with_a_known_epsilon():
    # Randomized response with ε = 2: report the bit truthfully with probability e²/(1+e²).
    p = math.exp(2.0) / (1 + math.exp(2.0))

    def release(bit: int, rng: np.random.Generator) -> float:
        return float(bit if rng.random() < p else 1 - bit)

    result = audit_lower_bound(release, 0, 1, trials=20_000, rng=np.random.default_rng(13))
    assert 1.5 < result.epsilon_lower_bound <= 2.0  # near-tight, never above the truth


def test_clopper_pearson_and_rate_conversion():
    assert clopper_pearson_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100))
    assert clopper_pearson_upper(100, 100, 0.05) == 1.0
    assert clopper_pearson_upper(10, 100, 0.05) > 0.1
    assert epsilon_from_rates(0.1, 0.1) == pytest.approx(math.log(0.9 / 0.1))
    assert epsilon_from_rates(0.5, 0.5) == 0.0
    assert epsilon_from_rates(0.0, 0.5) == math.inf
    with pytest.raises(ValueError):
        audit_lower_bound(lambda d, r: 0.0, 0, 1, trials=5, rng=np.random.default_rng(0))


# --------------------------------------------------------------------------- bounds against a claim (μ-GDP, pure ε)

from scipy import stats  # noqa: E402

from pcevolve.privacy.accounting import account  # noqa: E402
from pcevolve.privacy.audit import (  # noqa: E402
    audit_trade_off,
    epsilon_of_mu,
    mu_from_rates,
    one_run_ceiling,
    one_run_epsilon,
    one_run_p_value,
)
from pcevolve.privacy.events import GaussianRelease  # noqa: E402


def test_mu_from_the_rates_of_the_symmetric_test_of_a_gaussian_is_its_mu():
    for mu in (0.5, 1.0, 1.666, 3.0):
        rate = float(stats.norm.cdf(-mu / 2))
        assert mu_from_rates(rate, rate) == pytest.approx(mu, rel=1e-9)
    assert mu_from_rates(0.6, 0.6) == 0.0  # a test worse than a coin proves nothing


def test_epsilon_of_mu_agrees_with_the_ledgers_accountant():
    for z in (0.6, 1.0, 2.7):
        claimed = account([GaussianRelease(z)], delta=DELTA).epsilon
        assert epsilon_of_mu(1 / z, DELTA) == pytest.approx(claimed, abs=0.02)
        assert epsilon_of_mu(1 / z, DELTA) <= claimed + 1e-9  # optimistic: a lower bound is never rounded up
    assert epsilon_of_mu(0.0, DELTA) == 0.0


def test_gdp_audit_of_gaussian_scores_is_tight_and_catches_twice_the_mu():
    rng = np.random.default_rng(5)
    mu = 1.666  # the demo's release at ε = 8
    correct = audit_trade_off(rng.normal(0, 1, 6000), rng.normal(mu, 1, 6000), model="gdp", claimed_epsilon=8.0,
                              claimed_mu=mu, delta=DELTA)
    assert correct.passed and 0.85 * mu < correct.mu_lower_bound <= mu
    assert 6.5 < correct.epsilon_lower_bound <= 8.0
    broken = audit_trade_off(rng.normal(0, 1, 6000), rng.normal(2 * mu, 1, 6000), model="gdp", claimed_epsilon=8.0,
                             claimed_mu=mu, delta=DELTA)
    assert not broken.passed and broken.epsilon_lower_bound > 8.0


def test_pure_audit_of_a_biased_coin():
    rng = np.random.default_rng(6)
    # P[1] = 0.1 on D and 0.1·e / (1 + 0.1(e − 1)) on D′: the ratio of a 1-DP exponential mechanism's rare outcome.
    p, epsilon = 0.1, 1.0
    q = p * math.e / (1 + p * (math.e - 1))
    result = audit_trade_off((rng.random(40000) < p).astype(float), (rng.random(40000) < q).astype(float),
                             model="pure", claimed_epsilon=epsilon)
    assert result.passed and 0.5 < result.epsilon_lower_bound <= epsilon and result.mu_lower_bound is None


def test_one_run_bound_is_zero_for_coin_flips_and_the_ceiling_for_perfect_guesses():
    rng = np.random.default_rng(7)
    guesses = 100
    right = int(np.sum(rng.random(guesses) < 0.5))
    assert one_run_epsilon(1000, guesses, right, delta=DELTA) == 0.0
    ceiling = one_run_ceiling(1000, guesses, delta=DELTA)
    assert one_run_epsilon(1000, guesses, guesses, delta=DELTA) == ceiling
    assert 2.5 < ceiling < 5.0  # one run with 100 guesses can never refute ε = 8
    assert one_run_ceiling(1000, 1000, delta=0.0) > ceiling
    # the bound is the ε at which the p-value crosses 5 %
    epsilon = one_run_epsilon(1000, guesses, 90, delta=DELTA)
    assert one_run_p_value(1000, guesses, 90, epsilon - 1e-3, DELTA) < 0.05 <= one_run_p_value(1000, guesses, 90,
                                                                                                epsilon + 1e-3, DELTA)
    # δ only adds to the p-value, so it can only lower the bound
    assert one_run_epsilon(1000, guesses, 90, delta=1e-3) <= one_run_epsilon(1000, guesses, 90, delta=0.0)
