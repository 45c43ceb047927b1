"""train_decoder: each training mode reads only what it may and pays the ledger only for DP parts."""

import numpy as np
import pytest
import torch

from pcevolve.config import DecoderConfig
from pcevolve.decoders import train_decoder
from pcevolve.privacy import BudgetExceeded, BudgetLedger
from pcevolve.privacy.noise import GeneratorNoise

SMALL = dict(width=8, epochs=1, batch_size=16, public_images=64, consistency_every=1000, dp_epochs=1,
             dp_batch_size=10)


class Untouchable(np.ndarray):
    """An array that fails on any element access: a stand-in for private data that must not be read."""

    def __array_finalize__(self, obj):
        pass

    def __getitem__(self, item):
        raise AssertionError("private samples were read")

    def __array__(self, *args, **kwargs):
        raise AssertionError("private samples were read")


def _images(n, seed):
    return (np.random.default_rng(seed).random((n, 28, 28)) * 255).astype(np.uint8)


def _ledger(decoder_eps):
    return BudgetLedger(8.0, 1e-5, {"representation": 3.0, "release": 4.0, "decoder": decoder_eps},
                        reproducible_noise=True)


def _train(training, encoder, *, public, private, ledger):
    return train_decoder(DecoderConfig(training=training, **SMALL), encoder=encoder, sample_shape=(28, 28),
                         public_samples=public, private_samples=private, ledger=ledger,
                         noise=GeneratorNoise(np.random.default_rng(0)), seed=0)


def test_public_mode_never_reads_private_samples_and_charges_nothing(encoder):
    private = _images(40, 1).view(Untouchable)
    with pytest.raises(AssertionError, match="private samples were read"):
        private[0]  # the guard itself works
    ledger = _ledger(1.0)
    result = _train("public", encoder, public=_images(64, 0), private=private, ledger=ledger)
    assert result.public is not None and result.dp is None
    assert ledger.history == ()


def test_dp_from_scratch_needs_no_public_pool_and_pays_the_decoder_stage(encoder):
    ledger = _ledger(1.0)
    result = _train("dp", encoder, public=None, private=_images(40, 1), ledger=ledger)
    assert result.public is None and result.dp is not None and result.dp.steps == 4
    assert {e.stage for e in ledger.history} == {"decoder"}
    assert 0.0 < ledger.spent("decoder") <= 1.0 + 1e-9
    assert result.to_json()["dp"]["stage_epsilon"] == ledger.spent("decoder")


def test_dp_from_scratch_is_refused_before_training_without_a_decoder_budget(encoder):
    ledger = _ledger(0.0)
    torch.manual_seed(0)
    with pytest.raises(BudgetExceeded):
        _train("dp", encoder, public=None, private=_images(40, 1), ledger=ledger)
    assert ledger.history == ()


def test_public_then_dp_runs_both_parts(encoder):
    ledger = _ledger(1.0)
    result = _train("public-then-dp", encoder, public=_images(64, 0), private=_images(40, 1), ledger=ledger)
    assert result.public is not None and result.dp is not None and ledger.spent("decoder") > 0


@pytest.mark.parametrize("training, public, private, match", [
    ("public", None, None, "needs a public pool"),
    ("dp", None, None, "needs the private samples"),
])
def test_missing_inputs_are_named(encoder, training, public, private, match):
    with pytest.raises(ValueError, match=match):
        _train(training, encoder, public=public, private=private, ledger=_ledger(1.0))
