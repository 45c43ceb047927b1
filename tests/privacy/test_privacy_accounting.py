"""Accounting pins reference values, agrees with dp_accounting's own accountants and never sums naively."""

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant
from scipy.stats import norm

from pcevolve.privacy import (
    ExponentialSelection,
    GaussianRelease,
    LaplaceRelease,
    PostProcessing,
    SubsampledGaussianSteps,
    account,
    pld_delta,
)
from pcevolve.privacy.accounting import to_rdp_event

DELTA = 1e-5


def gaussian_delta(mu: float, epsilon: float) -> float:
    """Closed form δ(ε) of the Gaussian mechanism with sensitivity/std = mu (Balle & Wang 2018)."""
    return norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)


# ---------------------------------------------------------------- reference values from the issue


def test_gaussian_sqrt3_composed_three_times_has_delta_0_12694_at_epsilon_1():
    delta = pld_delta([GaussianRelease(math.sqrt(3), count=3)], epsilon=1.0)
    assert delta == pytest.approx(0.12694, abs=2e-5)
    # Three Gaussians at σ=√3 are one Gaussian at σ=1: the closed form gives the same number ...
    assert gaussian_delta(1.0, 1.0) == pytest.approx(0.12694, abs=1e-5)
    # ... and the pessimistic PLD never reports less than the truth.
    assert delta >= gaussian_delta(1.0, 1.0) - 1e-12


def test_laplace_scales_1_and_half_compose_to_epsilon_3():
    result = account([LaplaceRelease(1.0), LaplaceRelease(0.5)], delta=1e-12)
    assert result.epsilon == pytest.approx(3.0, abs=1e-3)
    assert result.bound == "pld"


def test_exponential_selection_rdp_bound_is_capped_by_pure_epsilon():
    result = account([ExponentialSelection(1.0)], delta=DELTA)
    reference = rdp_privacy_accountant.RdpAccountant()
    reference.compose(dp_accounting.ZCDpEvent(rho=1 / 8))
    assert result.rdp_epsilon == pytest.approx(reference.get_epsilon(DELTA), rel=1e-12)
    # The classical zCDP conversion ρ + 2√(ρ log 1/δ) is an upper bound on the library's.
    assert result.rdp_epsilon <= 1 / 8 + 2 * math.sqrt(1 / 8 * math.log(1 / DELTA))
    assert result.rdp_epsilon > 1.0
    assert result.epsilon == 1.0
    assert result.bound == "pld+basic"
    assert result.pure_epsilon == 1.0


def test_many_exponential_selections_are_reported_by_rdp_when_tighter():
    # 100 selections at ε=0.05: basic composition gives 5; zCDP gives about 1.01.
    result = account([ExponentialSelection(0.05, count=100)], delta=DELTA)
    assert result.pure_epsilon == pytest.approx(5.0)
    assert result.bound == "rdp"
    assert result.epsilon == result.rdp_epsilon == pytest.approx(1.0126, abs=1e-3)


# ---------------------------------------------------------------- composition, not sums


def test_composed_gaussians_are_far_below_the_naive_sum_and_match_the_closed_form():
    single = account([GaussianRelease(10.0)], delta=DELTA).epsilon
    composed = account([GaussianRelease(10.0)] * 100, delta=DELTA).epsilon
    naive = 100 * single
    assert composed < 0.15 * naive
    # 100 releases at z=10 are one release at z=1: analytic Gaussian mechanism, 4.3772.
    exact = dp_accounting.get_epsilon_gaussian(1.0, DELTA)
    assert exact == pytest.approx(4.3772, abs=1e-4)
    assert exact <= composed <= exact + 0.01


def test_mixed_history_matches_dp_accounting_pld_accountant():
    events = [GaussianRelease(3.0, 2), LaplaceRelease(4.0), SubsampledGaussianSteps(0.1, 1.5, 50)]
    reference = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-3)
    for event in events:
        reference.compose(to_rdp_event(event))  # the same DpEvents, the library's own PLD accountant
    assert account(events, delta=DELTA).pld_epsilon == pytest.approx(reference.get_epsilon(DELTA), abs=2e-3)


def test_mixed_history_matches_dp_accounting_rdp_accountant():
    events = [GaussianRelease(3.0, 2), LaplaceRelease(4.0), SubsampledGaussianSteps(0.1, 1.5, 50),
              ExponentialSelection(0.3, 4)]
    reference = rdp_privacy_accountant.RdpAccountant()
    for event in events:
        reference.compose(to_rdp_event(event))
    assert account(events, delta=DELTA).rdp_epsilon == pytest.approx(reference.get_epsilon(DELTA), rel=1e-9)


def test_seed_dpsgd_setting_pld_and_rdp_values():
    # SPEC R3.4a: n=500, batch 64, 80 epochs → q=0.128, 625 steps; σ=4.9 meets ε=3 under RDP.
    result = account([SubsampledGaussianSteps(0.128, 4.9, 625)], delta=DELTA)
    assert result.rdp_epsilon == pytest.approx(2.9948, abs=1e-3)
    assert result.pld_epsilon == pytest.approx(2.7567, abs=2e-3)
    assert result.epsilon == result.pld_epsilon and result.bound == "pld"


def test_seed_dpsgd_rdp_agrees_with_opacus():
    from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent

    orders = np.asarray(rdp_privacy_accountant.DEFAULT_RDP_ORDERS)
    rdp = compute_rdp(q=0.128, noise_multiplier=4.9, steps=625, orders=orders)
    opacus_eps, _ = get_privacy_spent(orders=orders, rdp=rdp, delta=DELTA)
    ours = account([SubsampledGaussianSteps(0.128, 4.9, 625)], delta=DELTA).rdp_epsilon
    assert ours == pytest.approx(opacus_eps, abs=0.02)


def test_seed_noise_0_5_overspends_in_a_single_step():
    # SPEC R3.4a: at σ = 0.5 one step already costs more than ε = 3.
    assert account([SubsampledGaussianSteps(0.128, 0.5, 1)], delta=DELTA).epsilon > 3.0


def test_result_does_not_depend_on_how_the_history_was_split():
    whole = account([SubsampledGaussianSteps(0.128, 4.6, 625)], delta=DELTA)
    epochs = [SubsampledGaussianSteps(0.128, 4.6, 8)] * 78 + [SubsampledGaussianSteps(0.128, 4.6, 1)]
    assert account(epochs, delta=DELTA) == whole
    assert account(list(reversed(epochs)) + [PostProcessing()], delta=DELTA) == whole


def test_empty_history_and_post_processing_cost_nothing():
    assert account([], delta=DELTA).epsilon == 0.0
    assert account([PostProcessing()] * 3, delta=DELTA).epsilon == 0.0


def test_more_events_never_cost_less():
    base = [GaussianRelease(5.0), ExponentialSelection(0.2)]
    previous = 0.0
    for extra in range(5):
        eps = account(base + [LaplaceRelease(20.0)] * extra, delta=DELTA).epsilon
        assert eps >= previous
        previous = eps


def test_laplace_shift_spread_over_coordinates_is_dominated():
    # A LaplaceRelease models an L1 shift Δ₁ as a one-dimensional shift; spreading it over coordinates
    # (a composition of smaller shifts) must never give a larger δ(ε).
    from dp_accounting.pld import privacy_loss_distribution as pld

    epsilons = np.linspace(0.0, 1.0, 21)
    single = pld.from_laplace_mechanism(1.0, value_discretization_interval=1e-4).get_delta_for_epsilon(epsilons)
    for split in ([0.5, 0.5], [0.3, 0.7], [0.1, 0.2, 0.3, 0.4]):
        spread = pld.identity(1e-4)
        for part in split:
            spread = spread.compose(pld.from_laplace_mechanism(1.0, sensitivity=part,
                                                               value_discretization_interval=1e-4))
        assert np.all(spread.get_delta_for_epsilon(epsilons) <= single + 1e-12)


# ---------------------------------------------------------------- neighbouring relations


def test_non_subsampled_events_do_not_depend_on_the_relation():
    # Their noise is stated relative to the sensitivity under the relation in force.
    events = [GaussianRelease(2.0, 3), LaplaceRelease(3.0), ExponentialSelection(0.5)]
    assert account(events, delta=DELTA, neighbouring="replace_one") == account(events, delta=DELTA)


def test_replace_one_dpsgd_uses_the_pld_replace_analysis_and_has_no_rdp_bound():
    add_remove = account([SubsampledGaussianSteps(0.128, 4.6, 625)], delta=DELTA)
    replace = account([SubsampledGaussianSteps(0.128, 4.6, 625)], delta=DELTA, neighbouring="replace_one")
    assert replace.rdp_epsilon is None and replace.bound == "pld"
    assert replace.epsilon > add_remove.epsilon  # replacing moves the sum twice as far
    reference = pld_privacy_accountant.PLDAccountant(
        dp_accounting.NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-3)
    reference.compose(to_rdp_event(SubsampledGaussianSteps(0.128, 4.6, 625)))
    assert replace.epsilon == pytest.approx(reference.get_epsilon(DELTA), abs=1e-6)


def test_invalid_arguments():
    with pytest.raises(ValueError):
        account([GaussianRelease(1.0)], delta=0.0)
    with pytest.raises(ValueError):
        account([GaussianRelease(1.0)], delta=DELTA, neighbouring="swap")
    with pytest.raises(TypeError):
        account([dp_accounting.GaussianDpEvent(1.0)], delta=DELTA)
    with pytest.raises(ValueError):
        pld_delta([ExponentialSelection(1.0)], epsilon=1.0)


def test_the_pld_interval_grows_with_a_large_total_only() -> None:
    """Up to ε = 10 every ledger keeps the default interval (runs and their ledgers are unchanged); above it the
    interval grows with ε so that planning at the ceiling stays fast, and the bound stays sound and tight."""
    from pcevolve.privacy import BudgetLedger
    from pcevolve.privacy.accounting import DEFAULT_PLD_DISCRETIZATION, pld_discretization_for

    assert pld_discretization_for(0.5) == pld_discretization_for(10.0) == DEFAULT_PLD_DISCRETIZATION
    assert pld_discretization_for(100.0) == pytest.approx(10 * DEFAULT_PLD_DISCRETIZATION)
    assert BudgetLedger(100.0, 1e-5, {"release": 100.0}).pld_discretization == pytest.approx(0.01)
    assert BudgetLedger(1e9, 1e-5, {"release": 1e9}).pld_discretization == 0.1  # a ledger built in code: capped
    fine = account([GaussianRelease(0.1, 2)], delta=1e-5, pld_discretization=DEFAULT_PLD_DISCRETIZATION).pld_epsilon
    coarse = account([GaussianRelease(0.1, 2)], delta=1e-5, pld_discretization=0.01).pld_epsilon
    assert fine <= coarse <= fine * (1 + 1e-5)  # pessimistic: never below the finer bound, and barely above it
