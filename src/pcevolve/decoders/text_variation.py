"""Retrieval plus rewriting (registry key ``"llm-variation"``, texts only): delivered texts that are new sentences.

The search runs exactly as with the retrieval decoder (``nearest-public``): its round trip is the public pool's
stored encodings. At delivery each retrieved public text (or a ``variation.share`` of them) is rewritten by a small
local LLM (:mod:`pcevolve.decoders.paraphrase`) into ``variation.candidates`` rewrites; the rewrite whose sentence
embedding has the highest cosine with the feature the search asked for replaces the retrieved text when that cosine
is no more than ``variation.tolerance`` below the retrieved text's own. The delivered encodings are the rewrites'
real encodings, so delivery's class check judges what is delivered.

Privacy: the LLM reads public texts and the instruction only; the choice uses the requested features (the search's
output, post-processing of the DP release) and public encodings. Nothing is charged.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from pcevolve.config import VariationConfig
from pcevolve.similarity import unit_vectors
from pcevolve.decoders.nearest import NearestPublicDecoder
from pcevolve.decoders.paraphrase import Paraphraser

if TYPE_CHECKING:
    from pcevolve.decoders.territories import ClassTerritories

#: The rewrite cache inside the decoder's folder (public-derived text; it resumes a killed delivery).
REWRITES_FILE = "rewrites.jsonl"


def choose_rewrites(requested: np.ndarray, originals: np.ndarray, rewrites: np.ndarray, owners: np.ndarray, *,
                    tolerance: float) -> np.ndarray:
    """For each requested feature, the index of the rewrite that replaces its original, or -1 to keep it.

    ``requested`` and ``originals`` are (n, d), row i the feature asked for and the retrieved text's encoding;
    ``rewrites`` (m, d) are encodings of rewrites, ``owners`` (m,) the row each belongs to. A row takes its
    rewrite of highest cosine with the request (the earliest on ties) when that cosine is at least the original's
    minus ``tolerance``. Pure.
    """
    chosen = np.full(len(requested), -1, dtype=np.int64)
    if len(rewrites) == 0:
        return chosen
    want = unit_vectors(np.asarray(requested, np.float32))
    original_cosine = np.sum(want * unit_vectors(np.asarray(originals, np.float32)), axis=1)
    owners = np.asarray(owners, dtype=np.int64)
    cosine = np.sum(want[owners] * unit_vectors(np.asarray(rewrites, np.float32)), axis=1)
    order = np.lexsort((np.arange(len(owners)), -cosine, owners))  # by row, best first, earliest on ties
    first = order[np.r_[True, owners[order][1:] != owners[order][:-1]]]
    accept = cosine[first] >= original_cosine[owners[first]] - tolerance
    chosen[owners[first][accept]] = first[accept]
    return chosen


def vary_texts(texts: np.ndarray, encodings: np.ndarray, requested: np.ndarray, *, setting: VariationConfig,
               encoder: Any, seed: int, cache: Path | None = None,
               tolerance: float | None = None) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """``texts`` (with their ``encodings``, retrieved for the ``requested`` features) with some replaced by rewrites.

    A seeded ``setting.share`` of the rows is offered ``setting.candidates`` rewrites (:class:`Paraphraser`);
    :func:`choose_rewrites` (``tolerance``: ``setting.tolerance`` unless given) picks which replace their row; a
    rewrite that is already in the set is not delivered twice. Returns the texts, their real encodings, and counts
    of what was done (public facts: rows offered, usable rewrites, rows rewritten).
    """
    texts, encodings = [str(t) for t in np.asarray(texts)], np.array(encodings, dtype=np.float32)
    offered = np.sort(np.random.default_rng(seed).permutation(len(texts))[:math.ceil(setting.share * len(texts))])
    rewrites = Paraphraser(setting).rewrite([texts[i] for i in offered], seed=seed, cache=cache)
    taken = set(texts)
    flat = [(row, text) for row, options in enumerate(rewrites) for text in options if text not in taken]
    owners = np.array([row for row, _ in flat], dtype=np.int64)
    rewrite_encodings = (encoder.encode_both(np.array([text for _, text in flat]))[1] if flat
                         else np.zeros((0, encodings.shape[1]), np.float32))
    chosen = choose_rewrites(np.asarray(requested, np.float32)[offered], encodings[offered], rewrite_encodings,
                             owners, tolerance=setting.tolerance if tolerance is None else tolerance)
    replaced = 0
    for row, pick in enumerate(chosen):
        if pick < 0 or flat[pick][1] in taken:  # two rows' rewrites may coincide: deliver it once
            continue
        target = offered[row]
        texts[target], encodings[target] = flat[pick][1], rewrite_encodings[pick]
        taken.add(flat[pick][1])
        replaced += 1
    notes = {"rewrites_offered": len(offered), "rewrites_usable": len(flat), "rewritten": replaced}
    return np.array(texts), encodings, notes


class TextVariationDecoder(NearestPublicDecoder):
    """The retrieval decoder whose delivered texts a local LLM rewrites towards the requested features."""

    name: ClassVar[str] = "llm-variation"
    modalities: ClassVar[tuple[str, ...]] = ("text",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.folder: Path | None = None
        self.delivery_notes: dict[str, Any] = {}

    def save(self, folder: str | os.PathLike[str]) -> Path:
        self.folder = super().save(folder)
        return self.folder

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> TextVariationDecoder:
        decoder = super().load(folder)
        assert isinstance(decoder, TextVariationDecoder)
        decoder.folder = Path(folder)
        return decoder

    def decode_and_encode(self, features: np.ndarray, labels: np.ndarray, *, encoder: Any,
                          territories: ClassTerritories | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Retrieved texts, some replaced by rewrites (see the module docstring), and their real encodings."""
        samples, stored = self.decode_known(features, labels, distinct=True, territories=territories)
        texts, encodings, self.delivery_notes = vary_texts(
            samples, stored, features, setting=self.config.variation, encoder=encoder, seed=self.seed,
            cache=None if self.folder is None else self.folder / REWRITES_FILE)
        return texts, encodings
