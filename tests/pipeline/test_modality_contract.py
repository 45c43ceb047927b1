"""The contract every registered modality × decoder keeps, run over all of them (a new modality is tested by
adding its tiny config below):

* the delivered set reads back through the modality (shapes, dtypes, labels, the counts the summary states), and
  writing what was read gives the same set again;
* the decoder's folder loads into a decoder that decodes the same;
* with reproducible noise, two runs deliver byte-identical files;
* once the release is made, the private samples are unreadable and the run still finishes.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pcevolve.decoders import DECODERS, load_decoder
from pcevolve.decoders.paraphrase import INSTALL_HINT, missing_parts
from pcevolve.modalities import MODALITIES
from pcevolve.pipeline import open_run, run_pipeline
from pcevolve.run_folder import outputs_digest

#: modality -> the fixture giving its tiny config builder
TINY_CONFIGS = {"image": "tiny_config", "tabular": "table_config", "text": "text_config"}
PAIRS = [(modality, decoder) for modality in MODALITIES for decoder, part in sorted(DECODERS.items())
         if part.modalities is None or modality in part.modalities]
#: decoder -> settings that keep its contract run small (the LLM rewrites a tenth of the texts, briefly)
DECODER_SETTINGS = {"llm-variation": {"decoder.variation": {"share": 0.1, "candidates": 2, "max_new_tokens": 24}}}


def test_every_modality_has_a_tiny_config_a_decoder_and_a_judge():
    from pcevolve.report.judges import JUDGES

    assert set(TINY_CONFIGS) == set(MODALITIES) == set(JUDGES)
    assert {modality for modality, _ in PAIRS} == set(MODALITIES)


class Guarded(np.ndarray):
    """Private samples that raise on any element access once ``armed``."""

    armed = False

    def __getitem__(self, item):
        if Guarded.armed:
            raise AssertionError("private samples read after the release")
        return super().__getitem__(item)

    def __array__(self, *args, **kwargs):
        if Guarded.armed:
            raise AssertionError("private samples read after the release")
        return super().__array__(*args, **kwargs)


def _guarded_run(config, folder, monkeypatch):
    import pcevolve.pipeline.run as run_module
    from pcevolve.privacy.class_release import ClassStatisticsFamily

    load, release = run_module._load_data, ClassStatisticsFamily.release

    def guarded_load(cfg, modality, say):
        layout, private, public = load(cfg, modality, say)
        return layout, dataclasses.replace(private, samples=private.samples.view(Guarded)), public

    def release_then_arm(family, coordinates, labels, **kwargs):
        released = release(family, coordinates, labels, **kwargs)
        Guarded.armed = True
        return released

    monkeypatch.setattr(run_module, "_load_data", guarded_load)
    monkeypatch.setattr(ClassStatisticsFamily, "release", release_then_arm)
    try:
        return run_pipeline(config, folder)
    finally:
        Guarded.armed = False
        monkeypatch.undo()


@pytest.mark.parametrize(("modality_name", "decoder_name"), PAIRS)
def test_the_modality_contract(modality_name, decoder_name, request, tmp_path, monkeypatch):
    if decoder_name == "llm-variation" and missing_parts():
        pytest.skip(f"the packaged LLM is not installed: {INSTALL_HINT}")
    make = request.getfixturevalue(TINY_CONFIGS[modality_name])
    settings = {"privacy.reproducible_noise": True, "decoder.name": decoder_name,
                **DECODER_SETTINGS.get(decoder_name, {})}
    if modality_name == "image":
        settings["privacy.split"] = {"representation": 0.0, "release": 1.0}  # DP-SGD has its own tests
    modality = MODALITIES[modality_name]
    first_config = make(name="first", **settings)
    _, first, _ = open_run(first_config, root=tmp_path)
    outcome = _guarded_run(first_config, first, monkeypatch)
    second_config = make(name="second", **settings)
    _, second, _ = open_run(second_config, root=tmp_path)
    run_pipeline(second_config, second)

    # Deterministic with reproducible noise: the same files.
    delivered = first.path / modality.delivered_name
    assert outcome.delivered == delivered
    assert outputs_digest(delivered) == outputs_digest(second.path / modality.delivered_name)
    assert outputs_digest(first.path / "synthetic.npz") == outputs_digest(second.path / "synthetic.npz")

    # The delivered set reads back as the modality's samples, with the counts the summary states.
    layout = modality.layout(first_config.data)
    synthetic = modality.read_synthetic(delivered, layout, outcome.class_names)
    assert synthetic.samples.shape[1:] == modality.sample_shape(layout)
    assert synthetic.samples.dtype.kind == {"image": "u", "tabular": "f", "text": "U"}[modality_name]
    assert np.bincount(synthetic.labels, minlength=len(outcome.class_names)).tolist() == outcome.synthetic_counts

    # Writing what was read gives the same set (the writer and the reader are each other's round trip).
    again = modality.write_synthetic(tmp_path / f"again-{modality.delivered_name}", synthetic.samples,
                                     synthetic.labels, synthetic.class_names, layout)
    reread = modality.read_synthetic(again, layout, outcome.class_names)
    np.testing.assert_array_equal(reread.samples, synthetic.samples)
    np.testing.assert_array_equal(reread.labels, synthetic.labels)

    # The saved decoder decodes as the one that delivered.
    with np.load(first.path / "synthetic.npz") as arrays:
        features, labels = arrays["features"][:8], arrays["labels"][:8]
    decoder = load_decoder(first.path / "decoder")
    resaved = load_decoder(decoder.save(tmp_path / "decoder-again"))
    np.testing.assert_array_equal(decoder.decode(features, labels), resaved.decode(features, labels))
