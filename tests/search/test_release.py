"""The search's DP release: two Gaussian events in the fitness stage (counts, then what the class sizes can pay
for), composing to the stage's budget, refused before noise, saved without pickle."""

import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

from pcevolve.privacy import BudgetExceeded, BudgetLedger
from pcevolve.privacy.noise import GeneratorNoise
from pcevolve.privacy.statistics import RandomFourierFeatures
from pcevolve.search.release import ReleaseSettings, StatisticsRelease, public_bandwidth, release_statistics
from pcevolve.search.release_rule import choose_components

SHARES = (0.05, 0.3, 0.4, 0.25)


class CountingNoise(GeneratorNoise):
    draws = 0

    def normal(self, std, shape):
        CountingNoise.draws += 1
        return super().normal(std, shape)


def _data(seed=0, per_class=50):
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(3), per_class)
    z = rng.normal(size=(3 * per_class, 4)) * 0.3 + labels[:, None] * 0.5
    return z, labels


def _settings(min_snr=0.0, shares=SHARES):
    rff = RandomFourierFeatures.draw(4, 16, bandwidth=1.0, rng=np.random.default_rng(9))
    return ReleaseSettings(num_classes=3, clip_norm=2.0, rff=rff, shares=shares,
                           public_variances=np.array([0.4, 0.1, 0.09, 0.05]), min_snr=min_snr)


def _release(z, labels, ledger, settings=None, noise=None, **kwargs):
    return release_statistics(z, labels, settings=settings or _settings(), ledger=ledger,
                              noise=noise or GeneratorNoise(np.random.default_rng(0)), **kwargs)


def test_release_pays_the_fitness_stage_in_two_events_that_compose_to_its_budget(tmp_path):
    z, labels = _data()
    ledger = BudgetLedger(8.0, 1e-5, {"representation": 3.0, "release": 5.0}, reproducible_noise=True)
    release, choice = _release(z, labels, ledger)
    assert [e.stage for e in ledger.history] == ["release", "release"]
    assert 4.99 < ledger.spent("release") <= 5.0  # calibrated to the stage, never above it
    # An independent PLD composition of the two recorded Gaussians gives the same ε.
    accountant = pld_privacy_accountant.PLDAccountant()
    for entry in ledger.history:
        accountant.compose(dp_event.GaussianDpEvent(entry.event.noise_multiplier))
    assert accountant.get_epsilon(1e-5) == pytest.approx(ledger.spent("release"), rel=2e-3)
    # Together they are one Gaussian at the combined noise multiplier.
    z1, z2 = (entry.event.noise_multiplier for entry in ledger.history)
    assert release.noise_multiplier == pytest.approx((z1**-2 + z2**-2) ** -0.5)
    assert choice.components == ("sum", "second_moment", "rff")  # min_snr 0 keeps everything
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


def test_small_classes_release_only_counts_and_sums_and_the_sums_get_the_whole_rest():
    z, labels = _data(per_class=5)
    every, _ = _release(z, labels, BudgetLedger(2.0, 1e-5, {"release": 2.0}, reproducible_noise=True))
    ledger = BudgetLedger(2.0, 1e-5, {"release": 2.0}, reproducible_noise=True)
    lean, choice = _release(z, labels, ledger, _settings(min_snr=2.0))
    assert choice.dropped == ("second_moment", "rff") and choice.components == ("sum",)
    assert lean.statistics.second_moments is None and lean.statistics.rff_sums is None
    assert set(lean.statistics.noise_stds) == {"count", "sum"}
    # Same budget, same counts' noise; the sums' noise shrinks by √(share of the sums among the rest).
    assert 1.99 < ledger.spent("release") <= 2.0
    assert lean.statistics.noise_stds["count"] == pytest.approx(every.statistics.noise_stds["count"])
    ratio = lean.statistics.noise_stds["sum"] / every.statistics.noise_stds["sum"]
    assert ratio == pytest.approx(math.sqrt(SHARES[1] / sum(SHARES[1:])), rel=1e-3)


def test_rule_keeps_a_statistic_once_the_class_size_pays_for_it():
    common = dict(noise_multiplier=0.6, shares={"sum": 0.6, "second_moment": 0.15, "rff": 0.2}, clip_norm=1.0,
                  public_variances=np.array([0.14, 0.05]), rff_features=256, neighbouring="add_remove", min_snr=2.0)
    assert choose_components(np.full(5, 10.0), **common).components == ("sum",)
    assert choose_components(np.full(5, 30.0), **common).components == ("sum", "second_moment")
    chosen = choose_components(np.array([95.0, 101.0, 99.0, 103.0, 100.0]), **common)
    assert chosen.components == ("sum", "second_moment", "rff") and chosen.typical_count == 100.0
    assert sum(chosen.shares.values()) == pytest.approx(1.0)
    assert choose_components(np.full(5, -3.0), **common).typical_count == 1.0  # noise below zero reads as 1
    with pytest.raises(ValueError, match="min_snr"):
        choose_components(np.full(5, 10.0), **{**common, "min_snr": -1.0})


@pytest.mark.parametrize("spent_first", [False, True])
def test_release_is_refused_before_any_noise_when_the_stage_is_spent(spent_first):
    z, labels = _data()
    ledger = BudgetLedger(8.0, 1e-5, {"representation": 3.0, "release": 0.0 if not spent_first else 5.0},
                          reproducible_noise=True)
    if spent_first:
        _release(z, labels, ledger)
    CountingNoise.draws = 0
    entries = len(ledger.history)
    with pytest.raises(BudgetExceeded):
        # After a full release even a small second one (σ = 2) does not fit in the stage.
        _release(z, labels, ledger, noise=CountingNoise(np.random.default_rng(0)),
                 noise_multiplier=2.0 if spent_first else None)
    assert CountingNoise.draws == 0 and len(ledger.history) == entries


def test_public_bandwidth_is_the_median_pair_distance():
    z = np.array([[0.0], [1.0], [3.0]])
    # pair distances 1, 2, 3 → median 2 (sampled pairs, so allow the sampling error)
    assert public_bandwidth(z, rng=np.random.default_rng(0)) == pytest.approx(2.0, abs=1e-9)
