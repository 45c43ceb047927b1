"""The search's DP release: one Gaussian event in the fitness stage, refused before noise, saved without pickle."""

import numpy as np
import pytest

from pcevolve.privacy import BudgetExceeded, BudgetLedger
from pcevolve.privacy.noise import GeneratorNoise
from pcevolve.privacy.statistics import RandomFourierFeatures
from pcevolve.search.release import StatisticsRelease, public_bandwidth, release_statistics

SHARES = (0.05, 0.3, 0.4, 0.25)


class CountingNoise(GeneratorNoise):
    draws = 0

    def normal(self, std, shape):
        CountingNoise.draws += 1
        return super().normal(std, shape)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(3), 50)
    z = rng.normal(size=(150, 4)) * 0.3 + labels[:, None] * 0.5
    return z, labels


def _rff():
    return RandomFourierFeatures.draw(4, 16, bandwidth=1.0, rng=np.random.default_rng(9))


def test_release_pays_the_fitness_stage_once_within_its_budget(tmp_path):
    z, labels = _data()
    ledger = BudgetLedger(8.0, 1e-5, {"representation": 3.0, "fitness": 5.0}, reproducible_noise=True)
    release = release_statistics(z, labels, num_classes=3, clip_norm=2.0, rff=_rff(), shares=SHARES,
                                 ledger=ledger, noise=GeneratorNoise(np.random.default_rng(0)))
    assert [e.stage for e in ledger.history] == ["fitness"]
    assert 4.9 < ledger.spent("fitness") <= 5.0 + 1e-9  # calibrated to the stage, never above it
    stats = release.statistics
    assert stats.counts.shape == (3,) and stats.sums.shape == (3, 4) and stats.second_moments.shape == (3, 4, 4)
    assert stats.rff_sums.shape == (3, 32)
    np.testing.assert_allclose(stats.counts, 50, atol=15)  # noisy, but near the truth at ε = 5

    path = release.save(tmp_path / "release.npz")
    loaded = StatisticsRelease.load(path)
    np.testing.assert_array_equal(loaded.statistics.second_moments, stats.second_moments)
    np.testing.assert_array_equal(loaded.rff.frequencies, release.rff.frequencies)
    assert loaded.noise_multiplier == release.noise_multiplier and loaded.clip_norm == 2.0
    assert dict(loaded.statistics.noise_stds) == dict(stats.noise_stds)


@pytest.mark.parametrize("spent_first", [False, True])
def test_release_is_refused_before_any_noise_when_the_stage_is_spent(spent_first):
    z, labels = _data()
    ledger = BudgetLedger(8.0, 1e-5, {"representation": 3.0, "fitness": 0.0 if not spent_first else 5.0},
                          reproducible_noise=True)
    if spent_first:
        release_statistics(z, labels, num_classes=3, clip_norm=2.0, rff=_rff(), shares=SHARES, ledger=ledger,
                           noise=GeneratorNoise(np.random.default_rng(0)))
    CountingNoise.draws = 0
    entries = len(ledger.history)
    with pytest.raises(BudgetExceeded):
        # After a full release even a small second one (σ = 2) does not fit in the stage.
        release_statistics(z, labels, num_classes=3, clip_norm=2.0, rff=_rff(), shares=SHARES, ledger=ledger,
                           noise=CountingNoise(np.random.default_rng(0)), noise_multiplier=2.0 if spent_first else None)
    assert CountingNoise.draws == 0 and len(ledger.history) == entries


def test_public_bandwidth_is_the_median_pair_distance():
    z = np.array([[0.0], [1.0], [3.0]])
    # pair distances 1, 2, 3 → median 2 (sampled pairs, so allow the sampling error)
    assert public_bandwidth(z, rng=np.random.default_rng(0)) == pytest.approx(2.0, abs=1e-9)
