"""Copies among texts: exact and near duplicates of reference texts, and verbatim passages shared with them.

*Exact* — equal after :func:`~pcevolve.evaluation.text_spaces.normalise`; *near* — TF-IDF cosine similarity at least
:data:`NEAR_DUPLICATE_COSINE` to some reference text (IDF from the reference texts,
:class:`~pcevolve.evaluation.text_spaces.CosineSpace`), exact copies included (:func:`text_copies`). A run of
:data:`SHARED_RUN_WORDS` or more consecutive words shared with a reference text (:func:`shared_runs`) is a verbatim
passage, which the cosine of whole texts misses when the rest differs. The judges count the copies of the private
texts and, as the chance baseline, of the test texts (short stock phrases recur in any corpus); the report checks
every text it shows with both predicates.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pcevolve.evaluation.text_spaces import CosineSpace, _texts, best_cosine, normalise

#: TF-IDF cosine similarity at or above which a synthetic text is a near duplicate of a private one. Two texts at
#: 0.9 share nearly all their words and word pairs: a long sentence with one word changed stays above it, one with
#: two changed falls below, a paraphrase in other words far below (measured in docs/text.md, "The judges' own
#: settings").
NEAR_DUPLICATE_COSINE = 0.9
#: Consecutive words a text shown in a report may share with a private text, plus one (:func:`shared_runs`).
SHARED_RUN_WORDS = 8


@dataclass(frozen=True)
class TextCopies:
    """How close each candidate text comes to a reference text (see :func:`text_copies`).

    Attributes:
        exact: (N,) bool: equal to a reference text after :func:`normalise`.
        cosine: (N,) the highest TF-IDF cosine similarity to a reference text.
        nearest: (N,) the index of that reference text.
        threshold: The near-duplicate threshold.
    """

    exact: np.ndarray
    cosine: np.ndarray
    nearest: np.ndarray
    threshold: float

    @property
    def near(self) -> np.ndarray:
        """(N,) bool: a near duplicate — cosine at least the threshold, or an exact copy."""
        return self.exact | (self.cosine >= self.threshold)


def text_copies(candidates: Sequence[str] | np.ndarray, reference: Sequence[str] | np.ndarray, *,
                threshold: float = NEAR_DUPLICATE_COSINE) -> TextCopies:
    """Exact and near duplicates of ``reference`` texts among ``candidates`` (IDF from ``reference``)."""
    candidates, reference = _texts(candidates, "candidates"), _texts(reference, "reference")
    if len(reference) == 0 or len(candidates) == 0:
        none = np.zeros(len(candidates), bool)
        return TextCopies(none, np.zeros(len(candidates)), np.zeros(len(candidates), np.int64), threshold)
    known = {normalise(text) for text in reference}
    exact = np.array([normalise(text) in known for text in candidates], dtype=bool)
    space = CosineSpace(reference)
    nearest, cosine = best_cosine(space.transform(candidates), space.transform(reference))
    return TextCopies(exact, cosine, nearest, float(threshold))


_WORD = re.compile(r"\w+")


def _runs(text: str, words: int) -> set[str]:
    tokens = _WORD.findall(normalise(text))
    return {" ".join(tokens[i : i + words]) for i in range(len(tokens) - words + 1)}


def shared_runs(candidates: Sequence[str] | np.ndarray, reference: Sequence[str] | np.ndarray, *,
                words: int = SHARED_RUN_WORDS) -> np.ndarray:
    """(N,) bool: the candidate shares a run of at least ``words`` consecutive words (after :func:`normalise`) with
    some reference text — a verbatim passage, which the cosine of whole texts misses when the rest differs (a
    shortened text shown in a report, a private sentence inside a longer text)."""
    known: set[str] = set()
    for text in _texts(reference, "reference"):
        known |= _runs(text, words)
    return np.array([not _runs(text, words).isdisjoint(known) for text in _texts(candidates, "candidates")],
                    dtype=bool)
