"""Stage 2 end to end on small real data: σ modes, ledger, stopping, no private access when frozen, determinism."""

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

from pcevolve.config import AugmentConfig, RepresentationConfig
from pcevolve.encoders import build_encoder, diagnose_collapse, train_representation
from pcevolve.privacy import (
    BudgetLedger,
    GaussianRelease,
    GeneratorNoise,
    SubsampledGaussianSteps,
    account,
)

SMALL = dict(input_size=32, proj_hidden_dim=32, feature_dim=64, trainable_blocks=1, views_per_sample=3,
             batch_size=16, epochs=2, public_epochs=1, public_pool=120, public_batch_size=40, queue_size=4096)


@pytest.fixture(scope="module")
def digits():
    data = load_digits()
    images = (data.images * (255 / 16)).astype(np.uint8)
    return images[:64], images[300:420]  # private, public (disjoint rows)


def _run(digits, *, budget=1.0, seed=0, noise_seed=1, public=True, ledger=None, **overrides):
    private, pool = digits
    config = RepresentationConfig(**{**SMALL, **overrides})
    encoder = build_encoder(config, seed=seed, sample_shape=private.shape[1:])
    ledger = ledger or BudgetLedger(8.0, 1e-5, {"representation": budget, "release": 5.0}, reproducible_noise=True)
    result = train_representation(encoder, private, pool if public else None, config=config, augment=AugmentConfig(),
                                  ledger=ledger, noise=GeneratorNoise(np.random.default_rng(noise_seed)), seed=seed)
    return encoder, ledger, result


def test_derived_sigma_spends_exactly_the_accountants_epsilon(digits):
    _, ledger, result = _run(digits, budget=1.0)
    q, steps = 16 / 64, 2 * 4
    assert result.mode == "derived" and result.steps == steps and result.sampling_probability == q
    expected = account([SubsampledGaussianSteps(q, result.noise_multiplier, steps)], delta=1e-5).epsilon
    assert ledger.spent("representation") == pytest.approx(expected, rel=1e-12)
    assert expected <= 1.0
    assert expected > 0.99  # calibrated to the cap, not far below it
    assert [e.event.kind for e in ledger.history] == ["subsampled_gaussian_steps"] * 2  # paid epoch by epoch


def test_given_sigma_stops_when_the_stage_budget_is_spent(digits):
    _, ledger, result = _run(digits, budget=1.0, noise_multiplier=2.0, epochs=50)
    assert result.mode == "given" and result.noise_multiplier == 2.0
    assert 0 < result.steps < 50 * 4
    assert ledger.spent("representation") <= 1.0
    assert not ledger.can_afford("representation", SubsampledGaussianSteps(0.25, 2.0, 1))


class _Untouchable(np.ndarray):
    """A private array that fails the test if any element is read."""

    def __getitem__(self, key):
        raise AssertionError("private data was read")

    def __array__(self, *args, **kwargs):
        raise AssertionError("private data was read")


def test_zero_budget_keeps_the_pretrained_trunk_and_never_reads_private_data(digits):
    private, pool = digits
    guarded = np.zeros_like(private).view(_Untouchable)
    config = RepresentationConfig(**SMALL)
    encoder = build_encoder(config, seed=0, sample_shape=private.shape[1:])
    ledger = BudgetLedger(8.0, 1e-5, {"representation": 0.0, "release": 5.0}, reproducible_noise=True)
    result = train_representation(encoder, guarded, pool, config=config, augment=AugmentConfig(), ledger=ledger,
                                  noise=GeneratorNoise(np.random.default_rng(0)), seed=0)
    assert result.mode == "frozen" and result.steps == 0 and ledger.history == ()
    assert result.public_steps > 0  # the free public pre-training still ran


def test_same_seeds_give_identical_encoders(digits):
    first, _, _ = _run(digits, epochs=1)
    second, _, _ = _run(digits, epochs=1)
    other, _, _ = _run(digits, epochs=1, noise_seed=2)
    a, b, c = (e.trainable_state() for e in (first, second, other))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_fine_tuning_without_public_negatives_is_refused(digits):
    with pytest.raises(ValueError, match="public pool"):
        _run(digits, public=False)


def test_a_spent_stage_trains_nothing_under_dp(digits):
    ledger = BudgetLedger(8.0, 1e-5, {"representation": 1.0, "release": 5.0}, reproducible_noise=True)
    ledger.charge("representation", GaussianRelease(4.0))  # leaves too little for one step at σ = 0.5
    _, _, result = _run(digits, ledger=ledger, noise_multiplier=0.5)
    assert result.steps == 0 and len(ledger.history) == 1  # stops cleanly before the first step


def test_collapse_is_detected_and_names_the_remedies():
    rng = np.random.default_rng(0)
    collapsed = np.ones((300, 64)) + 1e-4 * rng.normal(size=(300, 64))
    healthy = rng.normal(size=(300, 64))
    low_rank = rng.normal(size=(300, 1)) @ rng.normal(size=(1, 64)) + 1e-3 * rng.normal(size=(300, 64))
    assert diagnose_collapse(collapsed).collapsed
    assert diagnose_collapse(low_rank).collapsed
    report = diagnose_collapse(healthy)
    assert not report.collapsed and report.effective_rank > 30
    message = diagnose_collapse(collapsed).message()
    assert "public pool" in message and "representation.temperature" in message
    assert "representation.feature_dim" in message
    # A direction every embedding shares (a high mean cosine) is no collapse: every use of the features is centred.
    offset = 4.0 + rng.normal(size=(300, 64))  # mean cosine about 0.94, as after training on a small pool
    assert not diagnose_collapse(offset).collapsed


def test_public_choices_do_not_depend_on_the_private_batch_sizes(digits, monkeypatch):
    """Two private sets, two noise streams: different Poisson batch sizes, yet the same views and queue refills."""
    import pcevolve.encoders.training as training
    from pcevolve.privacy import DPSGDMechanism

    private, pool = digits
    other = private[::-1].copy()  # another private set of the same size

    def recorded(private_images, noise_seed):
        draws, batches = [], []
        view_pairs, queue_rows = training._PublicDraws.view_pairs, training._PublicDraws.queue_rows
        sample_batch = DPSGDMechanism.sample_batch

        def record_batch(self, noise):
            rows = sample_batch(self, noise)
            batches.append(len(rows))
            return rows

        monkeypatch.setattr(training._PublicDraws, "view_pairs",
                            lambda self: draws.append(("views", *view_pairs(self))) or draws[-1][1:])
        monkeypatch.setattr(training._PublicDraws, "queue_rows",
                            lambda self: draws.append(("queue", queue_rows(self))) or draws[-1][1])
        monkeypatch.setattr(DPSGDMechanism, "sample_batch", record_batch)
        config = RepresentationConfig(**SMALL)
        ledger = BudgetLedger(8.0, 1e-5, {"representation": 1.0, "release": 5.0}, reproducible_noise=True)
        train_representation(build_encoder(config, seed=0, sample_shape=private_images.shape[1:]), private_images,
                             pool, config=config,
                             augment=AugmentConfig(), ledger=ledger,
                             noise=GeneratorNoise(np.random.default_rng(noise_seed)), seed=0)
        monkeypatch.undo()
        return draws, batches

    first, first_batches = recorded(private, noise_seed=1)
    second, second_batches = recorded(other, noise_seed=2)
    assert first_batches != second_batches  # the private batch sizes differ ...
    assert len(first) == len(second) and first  # ... and the public draws are the same, draw for draw
    for a, b in zip(first, second, strict=True):
        assert a[0] == b[0] and all(torch.equal(x, y) for x, y in zip(a[1:], b[1:], strict=True))
