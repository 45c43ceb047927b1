"""The spaces the judges of texts compare texts in: normalised words and word pairs, as TF-IDF, LSA or hashed TF-IDF.

Every text is first normalised (:func:`normalise`: Unicode NFKC, lower-cased by case folding, runs of whitespace made
one space); words are runs of two or more letters or digits (scikit-learn's default token pattern). None of these
spaces uses the run's own sentence encoder: they see words and word pairs only, so the judges do not share that
encoder's blind spots. :func:`tfidf_vectorizer` is the probes' TF-IDF (1–2-grams, sublinear term frequency
``1 + log tf``, rows of unit length, at most :data:`MAX_FEATURES` n-grams); :class:`LsaSpace` follows it with a
truncated SVD to at most :data:`LSA_DIMS` dimensions (latent semantic analysis), rows of unit length;
:class:`CosineSpace` is hashed TF-IDF with the IDF of a reference corpus, where :func:`best_cosine` finds the most
similar reference text of each text.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np
from scipy import sparse
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import (
    HashingVectorizer,
    TfidfTransformer,
    TfidfVectorizer,
)
from sklearn.preprocessing import normalize
from threadpoolctl import threadpool_limits

from pcevolve.evaluation.line_scores import MODEL_THREADS

#: Word n-grams of every TF-IDF here: words and word pairs.
NGRAMS = (1, 2)
#: Most n-grams a probe's TF-IDF keeps (the most frequent of its fitting texts): bounds memory on large corpora.
MAX_FEATURES = 50_000
#: Dimensions of the LSA spaces (fewer when the fitting texts have fewer n-grams or texts).
LSA_DIMS = 128
#: Hashed n-gram slots of the copy and attack space: collisions among a corpus's n-grams are negligible at 2^20.
HASH_FEATURES = 2**20
_BLOCK = 256


def normalise(text: str) -> str:
    """The form every judge compares: Unicode NFKC, case-folded, whitespace runs made one space, stripped."""
    return " ".join(unicodedata.normalize("NFKC", str(text)).casefold().split())


def _texts(texts: Sequence[str] | np.ndarray, what: str = "texts") -> np.ndarray:
    array = np.asarray(texts, dtype=str)
    if array.ndim != 1:
        raise ValueError(f"{what} must be a 1-D array of texts, got shape {array.shape}")
    return array


def tfidf_vectorizer(*, max_features: int | None = MAX_FEATURES) -> TfidfVectorizer:
    """The probes' TF-IDF recipe: 1–2-grams of :func:`normalise`d words, sublinear tf, unit-length rows."""
    return TfidfVectorizer(preprocessor=normalise, ngram_range=NGRAMS, sublinear_tf=True, max_features=max_features,
                           dtype=np.float64)


class LsaSpace:
    """TF-IDF (:func:`tfidf_vectorizer`) then a truncated SVD, fitted on one corpus; rows of unit length.

    Raises (on construction):
        ValueError: Fewer than two texts, or no word of two characters in any of them.
    """

    def __init__(self, corpus: Sequence[str] | np.ndarray, *, dims: int = LSA_DIMS, seed: int = 0) -> None:
        corpus = _texts(corpus, "the LSA corpus")
        if len(corpus) < 2:
            raise ValueError(f"an LSA space needs at least two texts, got {len(corpus)}")
        self.vectorizer = tfidf_vectorizer()
        matrix = self.vectorizer.fit_transform(corpus)
        # The SVD needs fewer components than n-grams and texts; a tiny corpus gets a smaller space, never an error.
        self.dims = max(1, min(dims, matrix.shape[1] - 1, matrix.shape[0] - 1))
        self.svd = TruncatedSVD(self.dims, algorithm="randomized", random_state=seed)
        with threadpool_limits(MODEL_THREADS):
            self.svd.fit(matrix)

    def transform(self, texts: Sequence[str] | np.ndarray) -> np.ndarray:
        """(N,) texts → float64 (N, dims); a text with no known n-gram is the zero vector."""
        with threadpool_limits(MODEL_THREADS):
            points = self.svd.transform(self.vectorizer.transform(_texts(texts)))
        return normalize(points).astype(np.float64, copy=False)


class CosineSpace:
    """Hashed TF-IDF of 1–2-grams with the IDF of a reference corpus; rows of unit length (dot product = cosine).

    Hashing keeps every n-gram of every text, not only the reference's vocabulary: an n-gram the reference never
    uses gets the highest IDF instead of being dropped, so a text made of new words stays far from every reference
    text. The space depends on the reference only, so the same pair of texts always gets the same similarity
    whatever else is compared (the report's safety check and the judge agree text by text).
    """

    def __init__(self, reference: Sequence[str] | np.ndarray) -> None:
        self.hasher = HashingVectorizer(preprocessor=normalise, ngram_range=NGRAMS, n_features=HASH_FEATURES,
                                        alternate_sign=False, norm=None, dtype=np.float64)
        self.idf = TfidfTransformer(sublinear_tf=True).fit(self.hasher.transform(_texts(reference)))

    def transform(self, texts: Sequence[str] | np.ndarray) -> sparse.csr_matrix:
        return self.idf.transform(self.hasher.transform(_texts(texts))).tocsr()


def best_cosine(queries: sparse.csr_matrix, reference: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """For each query row, the index of and cosine similarity to its most similar reference row (unit rows).

    Ties go to the lowest index; a query with no n-gram in common with any reference row gets similarity 0.
    """
    indices = np.zeros(queries.shape[0], np.int64)
    cosines = np.zeros(queries.shape[0], np.float64)
    if reference.shape[0] == 0:
        return indices, cosines
    transposed = reference.T.tocsc()
    for start in range(0, queries.shape[0], _BLOCK):
        block = (queries[start : start + _BLOCK] @ transposed).toarray()
        indices[start : start + len(block)] = block.argmax(1)
        # Rounding can put a copy at 1 + 1e-16: clip, so that "1.0" means an equal n-gram profile.
        cosines[start : start + len(block)] = np.clip(block.max(1), 0.0, 1.0)
    return indices, cosines
