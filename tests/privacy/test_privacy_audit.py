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
