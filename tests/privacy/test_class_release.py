"""The search's DP release: two Gaussian events in the fitness stage (counts, then what the class sizes can pay
for), composing to the stage's budget, refused before noise, saved without pickle."""

import math
from dataclasses import replace

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

from pcevolve.privacy import BudgetExceeded, BudgetLedger, ExponentialSelection
from pcevolve.privacy.noise import GeneratorNoise
from pcevolve.privacy.released_statistics import StatisticsRelease
from pcevolve.privacy.statistics import RandomFourierFeatures
from pcevolve.privacy.class_release import CLASS_STATISTICS, ReleaseSettings
from pcevolve.privacy.release_rule import (
    DIRECTION_SNR,
    MIN_RELEASE_DIMS,
    choose_components,
    release_dimension,
)

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
    return CLASS_STATISTICS.release(z, labels, settings=settings or _settings(), ledger=ledger,
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
    assert chosen.components == ("sum", "second_moment", "rff") and chosen.typical_count == pytest.approx(99.6)
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


def _dimension(count, noise_multiplier=0.5, variances=(0.1, 0.05, 0.04, 0.03, 0.02, 0.01), radii=None):
    variances = np.asarray(variances)
    radii = np.sqrt(np.cumsum(variances)) if radii is None else np.asarray(radii)
    return release_dimension(count, noise_multiplier=noise_multiplier, clip_radii=radii, public_variances=variances,
                             neighbouring="add_remove")


def test_release_dimension_is_the_leading_run_where_a_class_mean_rises_above_its_noise():
    variances = np.array([0.1, 0.05, 0.04, 0.03, 0.02, 0.01])
    radii = np.sqrt(np.cumsum(variances))
    for count in (3.0, 10.0, 30.0, 300.0):
        dim = _dimension(count)
        # By hand: direction d passes when v_d ≥ τ (t C(d) / n)², t the sums' noise multiplier (add/remove: z).
        passes = variances >= DIRECTION_SNR * (0.5 * radii / count) ** 2
        expected = len(passes) if passes.all() else int(np.argmin(passes))
        assert dim == min(6, max(expected, MIN_RELEASE_DIMS))
    assert [_dimension(n) for n in (3.0, 10.0, 300.0)] == sorted(_dimension(n) for n in (3.0, 10.0, 300.0))
    assert _dimension(1e6) == 6 and _dimension(0.01) == MIN_RELEASE_DIMS  # all of it / never fewer than the floor
    assert _dimension(10.0, noise_multiplier=5.0) < _dimension(10.0, noise_multiplier=0.5)  # more noise, fewer
    with pytest.raises(ValueError, match="clip_radii"):
        _dimension(10.0, radii=radii[::-1])


def test_small_classes_release_their_sums_in_fewer_directions_clipped_to_those_directions(tmp_path):
    rng = np.random.default_rng(3)
    labels = np.repeat(np.arange(3), 6)
    z = rng.normal(size=(18, 6)) * np.sqrt([0.1, 0.05, 0.04, 0.03, 0.02, 0.01]) + labels[:, None] * 0.1
    variances = np.array([0.1, 0.05, 0.04, 0.03, 0.02, 0.01])
    radii = np.quantile(np.sqrt(np.cumsum(z**2, axis=1)), 0.5, axis=0)
    rff = RandomFourierFeatures.draw(6, 8, bandwidth=1.0, rng=np.random.default_rng(9))
    settings = ReleaseSettings(num_classes=3, clip_norm=float(radii[-1]), rff=rff, shares=SHARES,
                               public_variances=variances, min_snr=0.0, clip_radii=radii)
    ledger = BudgetLedger(1.0, 1e-5, {"release": 1.0}, reproducible_noise=True)
    release, choice = CLASS_STATISTICS.release(z, labels, settings=settings, ledger=ledger,
                                         noise=GeneratorNoise(np.random.default_rng(0)))
    assert choice.dim < 6 and choice.components == ("sum",) and release.dim == choice.dim
    assert release.clip_norm == pytest.approx(radii[choice.dim - 1])
    sums = release.statistics.sums
    assert sums.shape == (3, 6) and np.all(sums[:, choice.dim:] == 0)  # unreleased coordinates: the public centre
    assert release.statistics.second_moments is None and release.statistics.rff_sums is None
    assert 0.99 < ledger.spent("release") <= 1.0  # fewer directions, same budget
    loaded = StatisticsRelease.load(release.save(tmp_path / "release.npz"))
    assert loaded.dim == choice.dim
    np.testing.assert_array_equal(loaded.statistics.sums, sums)
    with np.load(tmp_path / "release.npz") as saved:
        assert saved["sums"].shape == (3, choice.dim)  # the file holds what was released, nothing padded
    fixed, fixed_choice = CLASS_STATISTICS.release(z, labels, settings=ReleaseSettings(
        **{**settings.__dict__, "dim": 6}), ledger=BudgetLedger(1.0, 1e-5, {"release": 1.0}, reproducible_noise=True),
        noise=GeneratorNoise(np.random.default_rng(0)))
    assert fixed_choice.dim == 6 and fixed.clip_norm == pytest.approx(radii[-1])


def test_a_vote_release_pays_counts_then_one_selection_composing_to_the_stage_and_saves_choices_not_sums(tmp_path):
    z, labels = _data(per_class=10)
    centres = np.array([[0.0] * 4, [0.5] * 4, [1.0] * 4, [3.0] * 4])
    ledger = BudgetLedger(8.0, 1e-5, {"representation": 7.0, "release": 1.0}, reproducible_noise=True)
    settings = replace(_settings(), vote_centres=centres)
    release, choice = _release(z, labels, ledger, settings=settings)
    counts, vote = (entry.event for entry in ledger.history)
    assert isinstance(vote, ExponentialSelection) and choice.components == ("vote",)
    # The counts' own ε is their share (5%) of the stage; the vote takes exactly what is left (PLD + basic).
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_event.GaussianDpEvent(counts.noise_multiplier))
    assert accountant.get_epsilon(1e-5) == pytest.approx(0.05, rel=1e-2)
    assert accountant.get_epsilon(1e-5) + vote.epsilon == pytest.approx(ledger.spent("release"), rel=1e-3)
    assert 0.999 < ledger.spent("release") <= 1.0
    assert len(set(release.vote.chosen.tolist())) == 3
    # The classes' means are their chosen public centres, whatever the noisy counts are.
    sizes = release.statistics.class_sizes()
    assert np.all(sizes >= 2.0)
    assert np.allclose(release.statistics.sums / sizes[:, None], centres[release.vote.chosen])
    path = release.save(tmp_path / "release.npz")
    with np.load(path) as saved:
        assert "sums" not in saved and saved["vote_chosen"].tolist() == release.vote.chosen.tolist()
        assert np.allclose(saved["counts"], release.vote.counts)
    loaded = StatisticsRelease.load(path)
    assert np.allclose(loaded.statistics.sums, release.statistics.sums)
    assert loaded.vote.count_noise_std == pytest.approx(counts.noise_multiplier)
