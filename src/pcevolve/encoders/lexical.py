"""A second view of a text, free of any model: its words and characters, for what a sentence encoder does not see.

A sentence encoder is trained to place texts by what they are *about*. Classes that differ in how they are written —
posts by source, speeches by party, a newsroom's link shortener, its capitalisation, its hashtags — look alike to it,
so with the embedding alone a style task whose pool is mostly of other sources delivers few right labels (measured
in docs/text.md, "Classes told apart by how they are written"). This view reads the surface:

* word 1–2-grams and character 3–5-grams within word boundaries, each hashed into 2^15 buckets (no vocabulary to
  store; a signed hash is not used, so a bucket counts);
* sublinear term frequency (1 + log tf), times the inverse document frequency of each bucket **in the public pool**
  (fitted once, on public texts only: the private texts never shape the view);
* each row scaled to unit length, then projected to ``dim`` numbers by a fixed Gaussian matrix drawn from ``seed``
  (Johnson–Lindenstrauss: cosine similarities are kept within about 1/√dim), and scaled to unit length again.

The view is the same function for every text once fitted, so a private text's row depends on that text and on public
data only — what the release's sensitivity analysis needs of any encoder (docs/privacy.md §3.5).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

#: Buckets per kind of n-gram (words, characters); the view hashes into twice as many.
HASH_BUCKETS = 2**15


def _vectorizers() -> tuple[object, object]:
    # Imported here: scikit-learn is a runtime dependency, but light commands never need it.
    from sklearn.feature_extraction.text import HashingVectorizer

    words = HashingVectorizer(n_features=HASH_BUCKETS, analyzer="word", ngram_range=(1, 2), alternate_sign=False,
                              norm=None, lowercase=True, token_pattern=r"(?u)\b\w+\b")
    characters = HashingVectorizer(n_features=HASH_BUCKETS, analyzer="char_wb", ngram_range=(3, 5),
                                   alternate_sign=False, norm=None, lowercase=False)
    return words, characters


def _counts(texts: list[str]):  # -> scipy.sparse.csr_matrix (N, 2 * HASH_BUCKETS)
    from scipy import sparse

    words, characters = _vectorizers()
    matrix = sparse.hstack([words.transform(texts), characters.transform(texts)], format="csr")
    matrix.data = 1.0 + np.log(matrix.data)  # sublinear tf: a word said twice is not twice the evidence
    return matrix


@dataclass(frozen=True, eq=False)
class LexicalView:
    """Texts → (N, ``dim``) unit rows (see the module docstring). ``idf`` (2 · HASH_BUCKETS,) comes from
    :meth:`fit` on the public pool; ``seed`` fixes the projection."""

    dim: int
    seed: int
    idf: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        if self.dim < 1 or np.shape(self.idf) != (2 * HASH_BUCKETS,):
            raise ValueError(f"need dim >= 1 and {2 * HASH_BUCKETS} idf weights, got {self.dim} and "
                             f"{np.shape(self.idf)}")

    @classmethod
    def fit(cls, public_texts: np.ndarray, *, dim: int, seed: int) -> LexicalView:
        """The view with the inverse document frequencies of the public texts (smoothed: log((1+N)/(1+df)) + 1)."""
        texts = [str(text) for text in np.asarray(public_texts).ravel()]
        counts = _counts(texts)
        frequency = np.bincount(counts.indices, minlength=counts.shape[1])
        idf = np.log((1.0 + len(texts)) / (1.0 + frequency)) + 1.0
        return cls(dim=dim, seed=seed, idf=idf.astype(np.float32))

    @cached_property
    def projection(self) -> np.ndarray:
        """(2 · HASH_BUCKETS, dim) Gaussian matrix from ``seed``: public and regenerable, never stored."""
        rng = np.random.default_rng([self.seed, 0x1E71CA1])
        return rng.standard_normal((2 * HASH_BUCKETS, self.dim), dtype=np.float32) / np.sqrt(self.dim)

    def transform(self, texts: np.ndarray, *, batch: int = 2048) -> np.ndarray:
        """Unit rows (N, dim), float32; an empty text gives a row of zeros. Computed ``batch`` texts at a time."""
        texts = [str(text) for text in np.asarray(texts).ravel()]
        rows = []
        for start in range(0, len(texts), batch):
            counts = _counts(texts[start:start + batch]).multiply(self.idf[None, :]).tocsr()
            norms = np.sqrt(np.asarray(counts.multiply(counts).sum(axis=1)).ravel())
            projected = np.asarray(counts @ self.projection, dtype=np.float32) / np.maximum(norms, 1e-12)[:, None]
            rows.append((projected / np.maximum(np.linalg.norm(projected, axis=1, keepdims=True), 1e-12))
                        .astype(np.float32))
        return np.concatenate(rows) if rows else np.zeros((0, self.dim), np.float32)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"idf": self.idf, "dim": np.array(self.dim), "seed": np.array(self.seed)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> LexicalView:
        return cls(dim=int(arrays["dim"]), seed=int(arrays["seed"]), idf=np.asarray(arrays["idf"], np.float32))
