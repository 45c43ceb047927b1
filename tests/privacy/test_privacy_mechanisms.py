"""A refused release draws no noise; mechanisms validate before they charge."""

import numpy as np
import pytest
from privacy_helpers import SEED_STAGES

from pcevolve.privacy import (
    BudgetExceeded,
    BudgetLedger,
    ClassStatisticsRelease,
    ExponentialMechanism,
    GaussianMechanism,
    GaussianRelease,
    LaplaceMechanism,
    SecureNoise,
)

RELEASES = {
    "gaussian": lambda ledger, stage, rng: GaussianMechanism(1.0, 1.0).release(
        np.zeros(3), ledger=ledger, stage=stage, noise=rng),
    "laplace": lambda ledger, stage, rng: LaplaceMechanism(1.0, 1.0).release(
        np.zeros(3), ledger=ledger, stage=stage, noise=rng),
    "exponential": lambda ledger, stage, rng: ExponentialMechanism(1.0).release(
        np.array([0.1, 0.9]), ledger=ledger, stage=stage, noise=rng),
    "class_statistics": lambda ledger, stage, rng: ClassStatisticsRelease(
        num_classes=2, clip_norm=1.0, noise_multiplier=1.0).release(
        np.ones((4, 3)), np.array([0, 1, 1, 0]), ledger=ledger, stage=stage, noise=rng),
}


@pytest.mark.parametrize("name", RELEASES)
@pytest.mark.parametrize("stage", ["delivery", "representation"])
def test_refused_release_leaves_the_generator_untouched(name, stage):
    ledger = BudgetLedger(8.0, 1e-5, SEED_STAGES, reproducible_noise=True)
    if stage == "representation":  # spend the stage first, so the release overspends it
        ledger.charge("representation", GaussianRelease(1.6))
    rng = np.random.default_rng(7)
    state = rng.bit_generator.state
    history = ledger.history
    with pytest.raises(BudgetExceeded):
        RELEASES[name](ledger, stage, rng)
    assert rng.bit_generator.state == state
    assert ledger.history == history


@pytest.mark.parametrize("name", RELEASES)
def test_accepted_release_advances_the_generator_and_records_one_entry(name):
    ledger = BudgetLedger(8.0, 1e-5, SEED_STAGES, reproducible_noise=True)
    rng = np.random.default_rng(7)
    state = rng.bit_generator.state
    RELEASES[name](ledger, "release", rng)
    assert rng.bit_generator.state != state
    assert len(ledger.history) == 1 and ledger.history[0].stage == "release"


def test_refused_secure_release_draws_nothing(monkeypatch):
    ledger = BudgetLedger(8.0, 1e-5, SEED_STAGES, reproducible_noise=True)
    calls = []
    monkeypatch.setattr("pcevolve.privacy.noise.os.urandom", lambda n: calls.append(n) or b"\0" * n)
    with pytest.raises(BudgetExceeded):
        GaussianMechanism(1.0, 1.0).release(np.zeros(3), ledger=ledger, stage="delivery", noise=SecureNoise())
    assert calls == []


@pytest.mark.parametrize("value", [np.array([1.0, np.nan]), np.array([np.inf])])
def test_non_finite_values_are_refused_before_charging(value):
    ledger = BudgetLedger(8.0, 1e-5, SEED_STAGES, reproducible_noise=True)
    with pytest.raises(ValueError, match="NaN or inf"):
        GaussianMechanism(1.0, 1.0).release(value, ledger=ledger, stage="release", noise=np.random.default_rng(0))
    assert ledger.history == ()


def test_relation_mismatch_is_refused_before_charging():
    ledger = BudgetLedger(8.0, 1e-5, SEED_STAGES, neighbouring="replace_one", reproducible_noise=True)
    with pytest.raises(ValueError, match="add_remove"):
        GaussianMechanism(1.0, 1.0).release(np.zeros(2), ledger=ledger, stage="release",
                                            noise=np.random.default_rng(0))
    GaussianMechanism(2.0, 1.0, neighbouring="replace_one").release(
        np.zeros(2), ledger=ledger, stage="release", noise=np.random.default_rng(0))
    assert len(ledger.history) == 1


@pytest.mark.parametrize(
    "build",
    [
        lambda: GaussianMechanism(0.0, 1.0),
        lambda: GaussianMechanism(1.0, -1.0),
        lambda: LaplaceMechanism(1.0, float("inf")),
        lambda: ExponentialMechanism(0.0),
        lambda: ExponentialMechanism(1.0, utility_sensitivity=0.0),
        lambda: GaussianMechanism(1.0, 1.0, neighbouring="swap"),
    ],
)
def test_invalid_mechanisms_are_refused(build):
    with pytest.raises(ValueError):
        build()


def test_exponential_mechanism_needs_candidates():
    with pytest.raises(ValueError):
        ExponentialMechanism(1.0).probabilities(np.array([]))


def test_noise_must_be_explicit():
    ledger = BudgetLedger(8.0, 1e-5, SEED_STAGES, reproducible_noise=True)
    with pytest.raises(TypeError):
        GaussianMechanism(1.0, 1.0).release(np.zeros(2), ledger=ledger, stage="release", noise=None)
    assert ledger.history == ()
