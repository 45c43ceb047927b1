"""A kill inside a DP-SGD stage (the encoder's fine-tuning, a DP decoder) resumes from the last paid epoch and
never pays twice."""

import json

import numpy as np
import pytest

from pcevolve.decoders import dp as decoder_dp
from pcevolve.encoders import training
from pcevolve.pipeline import open_run, run_pipeline
from pcevolve.privacy import BudgetLedger
from pcevolve.privacy.events import SubsampledGaussianSteps

# Three epochs of three steps (60 private samples, batch 20), so a kill can land inside the second epoch.
DP = {"representation.epochs": 3}


class Kill(BaseException):
    """Stands in for kill -9: not an Exception, so nothing in the pipeline catches it."""


def _arrays(folder):
    with np.load(folder / "synthetic.npz", allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _dp_events(folder):
    ledger = BudgetLedger.load(folder / "ledger.json")
    return [(e.description, e.event) for e in ledger.history if isinstance(e.event, SubsampledGaussianSteps)]


def _killed_then_resumed(config, root, monkeypatch, *, at_step, module=training, step="private_step",
                         checkpoint="representation.pt"):
    calls = {"n": 0}
    real = getattr(module, step)

    def dies_at_step(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == at_step:
            raise Kill
        return real(*args, **kwargs)

    config, folder, _ = open_run(config, root=root)
    monkeypatch.setattr(module, step, dies_at_step)
    with pytest.raises(Kill):
        run_pipeline(config, folder)
    monkeypatch.setattr(module, step, real)
    assert (folder.path / "secure" / "checkpoints" / checkpoint).exists()  # epoch 0 was saved
    _, resumed, was_resumed = open_run(None, resume=folder.path)
    assert was_resumed
    run_pipeline(config, resumed)
    assert not (folder.path / "secure" / "checkpoints" / checkpoint).exists()  # removed once done
    return folder.path


def test_reproducible_noise_resume_equals_an_uninterrupted_run(tiny_config, tmp_path, monkeypatch):
    config = tiny_config(name="dp", **DP, **{"privacy.reproducible_noise": True})
    config_a, folder_a, _ = open_run(config, root=tmp_path / "a")
    run_pipeline(config_a, folder_a)
    resumed = _killed_then_resumed(config, tmp_path / "b", monkeypatch, at_step=5)
    first, second = _arrays(folder_a.path), _arrays(resumed)
    assert first.keys() == second.keys()
    for key in first:
        assert np.array_equal(first[key], second[key]), key
    assert _dp_events(folder_a.path) == _dp_events(resumed)  # the interrupted epoch re-ran under its own charge


def test_secure_noise_resume_counts_the_interrupted_epoch_as_spent(tiny_config, tmp_path, monkeypatch):
    folder = _killed_then_resumed(tiny_config(name="dps", **DP), tmp_path, monkeypatch, at_step=5)
    events = _dp_events(folder)
    descriptions = [description for description, _ in events]
    assert len(descriptions) == len(set(descriptions)) == 3  # epochs 0, 1 (paid, lost), 2: none paid twice
    assert sum(event.steps for _, event in events) == 9
    assert len({(event.noise_multiplier, event.sampling_probability) for _, event in events}) == 1
    ledger = BudgetLedger.load(folder / "ledger.json")
    assert ledger.spent("representation") <= ledger.stages["representation"] and ledger.spent() <= 8.0
    records = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in records if r["kind"] == "representation_dp_epoch_lost"] == [1]
    assert [r["epoch"] for r in records if r["kind"] == "representation_dp_epoch"] == [0, 2]


# A DP decoder: fine-tuned under DP-SGD for 3 epochs of 3 steps, from its own share of the budget.
DP_DECODER = {"decoder.training": "public-then-dp", "decoder.dp_batch_size": 20,
              "privacy.split": {"representation": 0.0, "release": 0.75, "decoder": 0.25}}


def test_a_dp_decoder_resumes_identically_with_reproducible_noise(tiny_config, tmp_path, monkeypatch):
    config = tiny_config(name="dec", **DP_DECODER, **{"privacy.reproducible_noise": True})
    config_a, folder_a, _ = open_run(config, root=tmp_path / "a")
    run_pipeline(config_a, folder_a)
    resumed = _killed_then_resumed(config, tmp_path / "b", monkeypatch, at_step=5, module=decoder_dp,
                                   step="per_sample_gradients", checkpoint="decoder.pt")
    first, second = _arrays(folder_a.path), _arrays(resumed)
    assert all(np.array_equal(first[key], second[key]) for key in first)
    assert _dp_events(folder_a.path) == _dp_events(resumed)


def test_a_dp_decoder_with_secure_noise_never_pays_twice(tiny_config, tmp_path, monkeypatch):
    folder = _killed_then_resumed(tiny_config(name="decs", **DP_DECODER), tmp_path, monkeypatch, at_step=5,
                                  module=decoder_dp, step="per_sample_gradients", checkpoint="decoder.pt")
    events = _dp_events(folder)
    assert [d for d, _ in events] == [f"decoder DP-SGD epoch {i}" for i in range(3)]
    assert sum(event.steps for _, event in events) == 9
    ledger = BudgetLedger.load(folder / "ledger.json")
    assert ledger.spent("decoder") <= ledger.stages["decoder"] and ledger.spent() <= 8.0
