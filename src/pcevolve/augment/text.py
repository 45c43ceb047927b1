"""Word-level views of a text for contrastive learning: random masking, word dropout, adjacent swaps and synonym
replacement.

Synonyms come from a table that ships with the sentence encoder: the nearest whole-word neighbours of each word in
the packaged model's own word-embedding matrix (:func:`embedding_synonyms`). It is computed from the model's public
weights only, so it holds nothing of any user's data, and it needs no download.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class TextAugmentation:
    """Each word is, independently and in this order of precedence, dropped (``drop``), masked (``mask``, replaced
    by ``mask_token``) or replaced by one of its synonyms (``synonym``, when the table has one); then each adjacent
    pair is swapped with probability ``swap``. A text is never emptied: if every word would be dropped, the first
    is kept. Punctuation attached to a word stays with it (a synonym keeps it too)."""

    mask: float = 0.1
    drop: float = 0.1
    swap: float = 0.1
    synonym: float = 0.1
    mask_token: str = "[MASK]"
    synonyms: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("mask", "drop", "swap", "synonym"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"text augmentation {name} must be a probability in [0, 1], got {value}")

    def __call__(self, text: str, rng: np.random.Generator) -> str:
        """One augmented view of ``text``; the draws come from ``rng`` only (a fixed number per word)."""
        words = text.split()
        if not words:
            return text
        draws = rng.random((len(words), 4))
        kept: list[str] = []
        for word, (drop, mask, synonym, pick) in zip(words, draws):
            if drop < self.drop:
                continue
            if mask < self.mask:
                kept.append(self.mask_token)
            elif synonym < self.synonym:
                kept.append(self._synonym(word, pick))
            else:
                kept.append(word)
        if not kept:
            kept = [words[0]]
        swaps = rng.random(len(kept))
        for i in range(len(kept) - 1):
            if swaps[i] < self.swap:
                kept[i], kept[i + 1] = kept[i + 1], kept[i]
        return " ".join(kept)

    def _synonym(self, word: str, pick: float) -> str:
        start = next((i for i, ch in enumerate(word) if ch.isalpha()), len(word))
        end = len(word) - next((i for i, ch in enumerate(reversed(word)) if ch.isalpha()), len(word))
        core = word[start:end]
        options = self.synonyms.get(core.lower(), ())
        if not options:
            return word
        choice = options[min(int(pick * len(options)), len(options) - 1)]
        if core[:1].isupper():
            choice = choice[:1].upper() + choice[1:]
        return word[:start] + choice + word[end:]


def embedding_synonyms(vocabulary: Sequence[str], embeddings: np.ndarray, *, neighbours: int = 3,
                       min_cosine: float = 0.45, min_length: int = 3, chunk: int = 2048) -> dict[str, tuple[str, ...]]:
    """Each alphabetic whole word of ``vocabulary`` (at least ``min_length`` letters) → its ``neighbours`` nearest
    such words by cosine of their rows of ``embeddings``, those above ``min_cosine`` (best first).

    Pure: the table depends on the vocabulary and the embedding matrix only.
    """
    words = [(i, token) for i, token in enumerate(vocabulary) if token.isalpha() and token.islower()
             and len(token) >= min_length]
    if len(words) < 2:
        return {}
    rows = np.array([i for i, _ in words])
    vectors = np.asarray(embeddings, dtype=np.float32)[rows]
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    k = min(neighbours, len(words) - 1)
    table: dict[str, tuple[str, ...]] = {}
    for start in range(0, len(words), chunk):
        similarity = vectors[start:start + chunk] @ vectors.T
        similarity[np.arange(len(similarity)), start + np.arange(len(similarity))] = -np.inf  # not itself
        top = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
        for row, candidates in enumerate(top):
            ranked = candidates[np.argsort(-similarity[row, candidates], kind="stable")]
            close = tuple(words[j][1] for j in ranked if similarity[row, j] >= min_cosine)
            if close:
                table[words[start + row][1]] = close
    return table
