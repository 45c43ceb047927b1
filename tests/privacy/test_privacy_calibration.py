"""Calibration never overshoots its target and is close to the smallest noise that meets it."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcevolve.privacy import (
    BudgetLedger,
    CalibrationError,
    GaussianRelease,
    SubsampledGaussianSteps,
    account,
    affordable_steps,
    calibrate_noise_multiplier,
    dpsgd_noise_multiplier,
    dpsgd_schedule,
    gaussian_noise_multiplier,
    laplace_noise_multiplier,
)

DELTA = 1e-5


@settings(max_examples=10, deadline=None)
@given(
    target=st.floats(min_value=0.05, max_value=10.0),
    count=st.integers(min_value=1, max_value=10),
)
def test_gaussian_calibration_never_overshoots_and_is_tight(target, count):
    z = gaussian_noise_multiplier(target, DELTA, count=count)
    assert account([GaussianRelease(z, count)], delta=DELTA).epsilon <= target
    # A slightly smaller noise (beyond the search tolerance) overshoots: the result is (nearly) the smallest.
    assert account([GaussianRelease(z / 1.001, count)], delta=DELTA).epsilon > target


@settings(max_examples=100, deadline=None)
@given(
    target=st.floats(min_value=0.01, max_value=100.0),
    scale=st.floats(min_value=0.01, max_value=100.0),
    start=st.floats(min_value=1e-3, max_value=1e3),
)
def test_root_finder_never_overshoots_a_monotone_function(target, scale, start):
    def epsilon_of(z: float) -> float:  # a smooth decreasing function with a known root
        return scale / z

    z = calibrate_noise_multiplier(epsilon_of, target, start=start)
    assert epsilon_of(z) <= target
    assert z <= (scale / target) * (1 + 1e-4) * (1 + 1e-9) or z == 1e-3


def test_root_finder_returns_only_evaluated_points_even_for_a_jagged_function():
    seen = []

    def jagged(z: float) -> float:
        seen.append(z)
        return 2.0 / z + (0.3 if int(z * 1000) % 7 == 0 else 0.0)

    z = calibrate_noise_multiplier(jagged, 1.0)
    assert z in seen and jagged(z) <= 1.0


def test_root_finder_reports_unreachable_targets():
    with pytest.raises(CalibrationError):
        calibrate_noise_multiplier(lambda z: 5.0, 1.0)
    with pytest.raises(ValueError):
        calibrate_noise_multiplier(lambda z: 1 / z, 0.0)


def test_analytic_gaussian_reference():
    # One Gaussian release at ε=1, δ=1e-5 needs σ ≈ 3.73 × sensitivity (analytic Gaussian mechanism).
    import dp_accounting

    z = gaussian_noise_multiplier(1.0, DELTA)
    exact = dp_accounting.get_sigma_gaussian(1.0, DELTA)
    assert exact <= z <= exact * 1.002


def test_laplace_calibration_is_one_over_epsilon_at_tiny_delta():
    b = laplace_noise_multiplier(2.0, 1e-12)
    assert b == pytest.approx(0.5, rel=2e-3)
    assert b >= 0.5 * (1 - 1e-3)


def test_seed_dpsgd_sigma_rdp_4_9_and_pld_smaller():
    q, steps = dpsgd_schedule(500, 64, 80)
    assert (q, steps) == (0.128, 625)
    sigma_rdp = dpsgd_noise_multiplier(3.0, DELTA, sampling_probability=q, steps=steps, accountant="rdp")
    sigma_pld = dpsgd_noise_multiplier(3.0, DELTA, sampling_probability=q, steps=steps, accountant="pld")
    sigma_reported = dpsgd_noise_multiplier(3.0, DELTA, sampling_probability=q, steps=steps)
    assert sigma_rdp == pytest.approx(4.9, abs=0.02)
    assert sigma_pld == pytest.approx(4.56, abs=0.02)
    assert sigma_reported == sigma_pld
    result = account([SubsampledGaussianSteps(q, sigma_reported, steps)], delta=DELTA)
    assert result.epsilon <= 3.0
    # The ledger accepts exactly that σ for the full schedule.
    ledger = BudgetLedger(8.0, DELTA, {"representation": 3.0, "release": 5.0}, reproducible_noise=True)
    ledger.charge("representation", SubsampledGaussianSteps(q, sigma_reported, steps))


def test_dpsgd_schedule_checks_its_inputs():
    assert dpsgd_schedule(100, 10, 3) == (0.1, 30)
    with pytest.raises(ValueError):
        dpsgd_schedule(10, 64, 1)


def test_affordable_steps_is_the_largest_count_the_ledger_accepts():
    ledger = BudgetLedger(8.0, DELTA, {"representation": 3.0, "release": 5.0}, reproducible_noise=True)
    ledger.charge("representation", SubsampledGaussianSteps(0.128, 2.0, 20))
    steps = affordable_steps(ledger, "representation", sampling_probability=0.128, noise_multiplier=2.0,
                             max_steps=10_000)
    assert 0 < steps < 10_000
    assert ledger.can_afford("representation", SubsampledGaussianSteps(0.128, 2.0, steps))
    assert not ledger.can_afford("representation", SubsampledGaussianSteps(0.128, 2.0, steps + 1))
    assert affordable_steps(ledger, "representation", sampling_probability=0.128, noise_multiplier=0.3,
                            max_steps=100) == 0
    assert affordable_steps(ledger, "representation", sampling_probability=0.128, noise_multiplier=50.0,
                            max_steps=7) == 7


def test_gaussian_calibration_matches_one_over_epsilon_scaling_under_both_relations():
    z_add = gaussian_noise_multiplier(2.0, DELTA)
    z_replace = gaussian_noise_multiplier(2.0, DELTA, neighbouring="replace_one")
    assert math.isclose(z_add, z_replace)  # the relation enters through the sensitivity, not the multiplier
