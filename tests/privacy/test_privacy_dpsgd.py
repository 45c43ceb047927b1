"""DP-SGD mechanism: no unpaid step, clipping before noise, the stated noise scale, Poisson batches."""

import math

import numpy as np
import pytest
import torch
from privacy_helpers import SEED_STAGES, ZeroNoise

from pcevolve.privacy import (
    BudgetExceeded,
    BudgetLedger,
    DPSGDMechanism,
    GeneratorNoise,
    NoStepsLeft,
    SubsampledGaussianSteps,
    account,
)


def _ledger():
    return BudgetLedger(8.0, 1e-5, SEED_STAGES, reproducible_noise=True)


def _roomy_ledger():
    """For tests about the mechanism's arithmetic, not its budget."""
    return BudgetLedger(1e6, 1e-5, {"representation": 1e6}, reproducible_noise=True)


def test_no_step_without_paying_first():
    mechanism = DPSGDMechanism(0.1, 1.0, 1.0, 100)
    noise = GeneratorNoise(np.random.default_rng(0))
    with pytest.raises(NoStepsLeft):
        mechanism.sample_batch(noise)
    with pytest.raises(NoStepsLeft):
        mechanism.noisy_gradient([torch.ones(3, 2)], noise)
    mechanism.charge(_ledger(), "representation", 2)
    for _ in range(2):
        mechanism.noisy_gradient([torch.ones(3, 2)], noise)
    with pytest.raises(NoStepsLeft):
        mechanism.noisy_gradient([torch.ones(3, 2)], noise)


def test_charge_records_exactly_the_accountants_epsilon():
    ledger = _ledger()
    mechanism = DPSGDMechanism(0.128, 4.9, 1.0, 500)
    for _ in range(5):
        mechanism.charge(ledger, "representation", 125)
    expected = account([SubsampledGaussianSteps(0.128, 4.9, 625)], delta=1e-5).epsilon
    assert ledger.spent("representation") == pytest.approx(expected, rel=1e-12)
    assert mechanism.steps_paid == 625


def test_refused_charge_grants_no_steps():
    ledger = _ledger()
    mechanism = DPSGDMechanism(0.5, 0.5, 1.0, 100)
    with pytest.raises(BudgetExceeded):
        mechanism.charge(ledger, "representation", 1000)
    assert mechanism.steps_paid == 0 and ledger.history == ()


def test_each_sample_is_clipped_before_the_sum():
    mechanism = DPSGDMechanism(0.5, 1.0, 1.0, 4)
    mechanism.charge(_roomy_ledger(), "representation", 1)
    grads = [torch.tensor([[30.0, 40.0], [0.3, 0.4], [0.0, 0.0]]), torch.tensor([[0.0], [0.0], [0.0]])]
    noisy, stats = mechanism.noisy_gradient(grads, ZeroNoise())
    # (30, 40) has norm 50 → scaled to norm 1; (0.3, 0.4) has norm 0.5 → kept. Sum ÷ (q·n = 2).
    expected = (torch.tensor([0.6, 0.8]) + torch.tensor([0.3, 0.4])) / 2
    torch.testing.assert_close(noisy[0], expected, rtol=1e-5, atol=1e-6)
    assert stats["clipped_fraction"] == pytest.approx(1 / 3)


def test_clipping_bounds_one_samples_influence_on_the_sum():
    rng = np.random.default_rng(0)
    mechanism = DPSGDMechanism(0.5, 1.0, 0.7, 10)
    mechanism.charge(_roomy_ledger(), "representation", 2)
    base = [torch.tensor(rng.normal(size=(5, 7)) * 10)]
    with_extra = [torch.cat([base[0], torch.tensor(rng.normal(size=(1, 7)) * 1000)])]
    a, _ = mechanism.noisy_gradient(base, ZeroNoise())
    b, _ = mechanism.noisy_gradient(with_extra, ZeroNoise())
    influence = float(torch.linalg.vector_norm((b[0] - a[0]) * (0.5 * 10)))  # undo ÷ q·n
    assert influence <= 0.7 + 1e-9


def test_noise_std_is_sigma_times_clip_norm():
    sigma, clip, q, n = 1.7, 0.5, 0.25, 40
    mechanism = DPSGDMechanism(q, sigma, clip, n)
    mechanism.charge(BudgetLedger(1e6, 1e-5, {"representation": 1e6}, reproducible_noise=True), "representation", 1)
    size = 200_000
    noisy, _ = mechanism.noisy_gradient([torch.zeros(0, size, dtype=torch.float64)],
                                        GeneratorNoise(np.random.default_rng(1)))
    std = float(noisy[0].std()) * q * n
    expected = sigma * clip
    assert abs(std - expected) < 5 * expected / math.sqrt(2 * size)


def test_poisson_batches_have_rate_q():
    mechanism = DPSGDMechanism(0.2, 1.0, 1.0, 1000)
    mechanism.charge(BudgetLedger(1e6, 1e-5, {"representation": 1e6}, reproducible_noise=True), "representation", 1)
    noise = GeneratorNoise(np.random.default_rng(2))
    sizes = [len(mechanism.sample_batch(noise)) for _ in range(200)]
    mean, sd = np.mean(sizes), math.sqrt(1000 * 0.2 * 0.8)
    assert abs(mean - 200) < 5 * sd / math.sqrt(200)
    assert np.std(sizes) == pytest.approx(sd, rel=0.3)


def test_ghost_path_equals_materialised_path():
    rng = np.random.default_rng(3)
    grads = [torch.tensor(rng.normal(size=(6, 4, 3))), torch.tensor(rng.normal(size=(6, 5)))]
    norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads))

    def clipped_sum(factors):
        return [(g * factors.reshape(-1, *[1] * (g.ndim - 1))).sum(0) for g in grads]

    results = []
    for use_norms in (False, True):
        mechanism = DPSGDMechanism(0.5, 1.0, 1.2, 12)
        mechanism.charge(_roomy_ledger(), "representation", 1)
        noise = GeneratorNoise(np.random.default_rng(9))
        if use_norms:
            results.append(mechanism.noisy_gradient_from_norms(norms, clipped_sum, noise)[0])
        else:
            results.append(mechanism.noisy_gradient(grads, noise)[0])
    for x, y in zip(*results):
        torch.testing.assert_close(x, y)
