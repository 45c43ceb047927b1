"""DP-SGD fine-tuning of the decoder: exact per-sample gradients, paid from the ledger's decoder stage."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from pcevolve.config import DecoderConfig
from pcevolve.decoders import build_decoder, fine_tune_dp, per_sample_gradients
from pcevolve.privacy import BudgetExceeded, BudgetLedger
from pcevolve.privacy.noise import GeneratorNoise

CONFIG = DecoderConfig(training="public-then-dp", width=8, dp_epochs=2, dp_batch_size=10)


def _images(n, seed=0):
    return (np.random.default_rng(seed).random((n, 28, 28)) * 255).astype(np.uint8)


def _ledger(decoder_eps):
    return BudgetLedger(8.0, 1e-5, {"representation": 3.0, "release": 4.0, "decoder": decoder_eps},
                        reproducible_noise=True)


def _weights(decoder):
    return {k: v.clone() for k, v in decoder.network.state_dict().items()}


def test_per_sample_gradients_match_one_at_a_time_autograd():
    decoder = build_decoder(CONFIG, feature_dim=64, sample_shape=(28, 28), seed=0)
    feats = torch.randn(3, 64, generator=torch.Generator().manual_seed(0))
    images = torch.rand(3, 1, 28, 28, generator=torch.Generator().manual_seed(1))
    grads = per_sample_gradients(decoder.network, feats, images)
    params = list(decoder.network.parameters())
    for i in range(3):
        decoder.network.zero_grad()
        F.binary_cross_entropy_with_logits(decoder.network(feats[i : i + 1]), images[i : i + 1]).backward()
        for g, p in zip(grads, params, strict=True):
            torch.testing.assert_close(g[i], p.grad, rtol=1e-4, atol=1e-6)
    assert [g.shape[0] for g in per_sample_gradients(decoder.network, feats[:0], images[:0])] == [0] * len(params)


def test_charges_the_decoder_stage_and_stays_within_it(encoder):
    decoder = build_decoder(CONFIG, feature_dim=64, sample_shape=(28, 28), seed=0)
    before = _weights(decoder)
    ledger = _ledger(1.0)
    result = fine_tune_dp(decoder, _images(40), encoder=encoder, ledger=ledger,
                          noise=GeneratorNoise(np.random.default_rng(0)))
    assert result.steps == 2 * 4 and result.sampling_probability == pytest.approx(0.25)
    assert [e.stage for e in ledger.history] == ["decoder", "decoder"]
    assert 0.0 < ledger.spent("decoder") <= 1.0 + 1e-9 and result.stage_epsilon == ledger.spent("decoder")
    assert ledger.spent("representation") == 0.0
    assert any(not torch.equal(v, before[k]) for k, v in decoder.network.state_dict().items())


def test_zero_budget_refuses_before_training(encoder):
    decoder = build_decoder(CONFIG, feature_dim=64, sample_shape=(28, 28), seed=0)
    before = _weights(decoder)
    ledger = _ledger(0.0)
    with pytest.raises(BudgetExceeded):
        fine_tune_dp(decoder, _images(40), encoder=encoder, ledger=ledger,
                     noise=GeneratorNoise(np.random.default_rng(0)))
    assert ledger.history == ()
    assert all(torch.equal(v, before[k]) for k, v in decoder.network.state_dict().items())


def test_given_sigma_past_the_stage_budget_is_refused_before_training(encoder):
    config = CONFIG.model_copy(update={"noise_multiplier": 0.3, "dp_epochs": 20})
    decoder = build_decoder(config, feature_dim=64, sample_shape=(28, 28), seed=0)
    before = _weights(decoder)
    ledger = _ledger(0.5)
    with pytest.raises(BudgetExceeded):
        fine_tune_dp(decoder, _images(40), encoder=encoder, ledger=ledger,
                     noise=GeneratorNoise(np.random.default_rng(0)))
    assert ledger.history == ()
    assert all(torch.equal(v, before[k]) for k, v in decoder.network.state_dict().items())
