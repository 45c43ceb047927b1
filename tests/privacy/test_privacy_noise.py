"""Noise sources and mechanisms draw noise of the stated scale and shape (tolerances from the sample size)."""

import math

import numpy as np
import pytest
from privacy_helpers import roomy_ledger
from scipy import stats

from pcevolve.privacy import (
    BudgetLedger,
    ExponentialMechanism,
    GaussianMechanism,
    GeneratorNoise,
    LaplaceMechanism,
    SecureNoise,
)

N = 200_000


def sources():
    return [GeneratorNoise(np.random.default_rng(20240601)), SecureNoise()]


def assert_gaussian(samples: np.ndarray, std: float) -> None:
    n = samples.size
    assert abs(samples.mean()) < 5 * std / math.sqrt(n)
    # The sample std of n normals has std ≈ σ / √(2n).
    assert abs(samples.std() - std) < 5 * std / math.sqrt(2 * n)
    assert stats.kstest(samples / std, "norm").pvalue > 1e-5


def assert_laplace(samples: np.ndarray, scale: float) -> None:
    n = samples.size
    std = math.sqrt(2) * scale
    assert abs(samples.mean()) < 5 * std / math.sqrt(n)
    # Laplace(b): Var(s²) ≈ 20 b⁴ / n, so the sample std has std ≈ b √(2.5 / n).
    assert abs(samples.std() - std) < 5 * scale * math.sqrt(2.5 / n)
    # E|X| = b with Var|X| = b²: separates Laplace from a Gaussian of the same variance.
    assert abs(np.abs(samples).mean() - scale) < 5 * scale / math.sqrt(n)
    assert stats.kstest(samples / scale, "laplace").pvalue > 1e-5


@pytest.mark.parametrize("source", sources(), ids=["seeded", "secure"])
def test_source_normal_scale(source):
    assert_gaussian(source.normal(2.5, N), 2.5)


@pytest.mark.parametrize("source", sources(), ids=["seeded", "secure"])
def test_source_laplace_scale(source):
    assert_laplace(source.laplace(0.7, N), 0.7)


@pytest.mark.parametrize("source", sources(), ids=["seeded", "secure"])
def test_source_uniform_is_open_and_flat(source):
    u = source.uniform((400, 500))
    assert u.shape == (400, 500)
    assert u.min() > 0.0 and u.max() < 1.0
    assert stats.kstest(u.ravel(), "uniform").pvalue > 1e-5


def test_odd_sizes_and_shapes_from_the_secure_source():
    source = SecureNoise()
    assert source.normal(1.0, 7).shape == (7,)
    assert source.normal(1.0, (3, 5)).shape == (3, 5)
    assert source.laplace(1.0, (2, 2)).shape == (2, 2)
    assert not np.array_equal(source.normal(1.0, 8), source.normal(1.0, 8))


@pytest.mark.parametrize("source", sources(), ids=["seeded", "secure"])
def test_gaussian_mechanism_noise_std_is_multiplier_times_sensitivity(source):
    mechanism = GaussianMechanism(sensitivity=2.0, noise_multiplier=1.5)
    released = mechanism.release(np.full(N, 4.0), ledger=roomy_ledger(), stage="test", noise=source)
    assert_gaussian(released - 4.0, 3.0)


@pytest.mark.parametrize("source", sources(), ids=["seeded", "secure"])
def test_laplace_mechanism_noise_scale_is_multiplier_times_sensitivity(source):
    mechanism = LaplaceMechanism(sensitivity=0.5, noise_multiplier=4.0)
    released = mechanism.release(np.full(N, -1.0), ledger=roomy_ledger(), stage="test", noise=source)
    assert_laplace(released + 1.0, 2.0)


@pytest.mark.parametrize("source", sources(), ids=["seeded", "secure"])
def test_exponential_mechanism_selects_with_the_stated_probabilities(source):
    mechanism = ExponentialMechanism(epsilon=2.0, utility_sensitivity=1.0)
    utilities = np.array([0.0, 0.5, 1.0, 1.0])
    expected = np.exp(2.0 * utilities / 2.0)
    expected /= expected.sum()
    assert np.allclose(mechanism.probabilities(utilities), expected)
    n = 6000
    picks = [mechanism.release(utilities, ledger=roomy_ledger(), stage="test", noise=source) for _ in range(n)]
    frequencies = np.bincount(picks, minlength=4) / n
    assert np.all(np.abs(frequencies - expected) < 5 * np.sqrt(expected * (1 - expected) / n))


def test_exponential_mechanism_with_a_larger_utility_sensitivity_is_flatter():
    utilities = np.array([0.0, 10.0])
    sharp = ExponentialMechanism(epsilon=1.0, utility_sensitivity=1.0).probabilities(utilities)
    flat = ExponentialMechanism(epsilon=1.0, utility_sensitivity=10.0).probabilities(utilities)
    assert sharp[1] == pytest.approx(1 / (1 + math.exp(-5.0)))
    assert flat[1] == pytest.approx(1 / (1 + math.exp(-0.5)))


def test_scalar_release_returns_a_float():
    value = GaussianMechanism(1.0, 1.0).release(3.0, ledger=roomy_ledger(), stage="test",
                                                noise=np.random.default_rng(0))
    assert isinstance(value, float)


def test_mechanism_charges_exactly_its_event():
    ledger = BudgetLedger(8.0, 1e-5, {"release": 8.0}, reproducible_noise=True)
    GaussianMechanism(1.0, 3.0).release(np.zeros(4), ledger=ledger, stage="release", noise=np.random.default_rng(0))
    LaplaceMechanism(1.0, 5.0).release(np.zeros(4), ledger=ledger, stage="release", noise=np.random.default_rng(0))
    ExponentialMechanism(0.5).release(np.zeros(4), ledger=ledger, stage="release", noise=np.random.default_rng(0))
    assert [e.event.describe() for e in ledger.history] == [
        "gaussian_release(noise_multiplier=3, count=1)",
        "laplace_release(noise_multiplier=5, count=1)",
        "exponential_selection(epsilon=0.5, count=1)",
    ]
