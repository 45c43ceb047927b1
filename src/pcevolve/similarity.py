"""Similarity helpers on feature rows, shared by the decoders and the search: numpy only, importing no part of
pcevolve, so that either can use them without reaching the other."""

from __future__ import annotations

import numpy as np

CHUNK = 2048  # query rows per similarity block: bounds memory at CHUNK × pool floats


def unit_vectors(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm, dtype kept (zero rows stay zero)."""
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def best_matches(queries: np.ndarray, keys: np.ndarray, offsets: np.ndarray | None = None, *,
                 rows: int = CHUNK) -> np.ndarray:
    """Index of the highest score ``q·keys[:, j] (+ offsets[j])`` for each query row (ties: the lowest index).

    ``queries`` (n, d) and ``keys`` (d, m) as float32; scored ``rows`` query rows at a time, so a block of
    scores is at most ``rows × m`` floats (small blocks also stay in cache between the product and the argmax).
    """
    chosen = np.empty(len(queries), dtype=np.int64)
    for start in range(0, len(queries), rows):
        scores = queries[start : start + rows] @ keys
        if offsets is not None:
            scores += offsets
        chosen[start : start + rows] = np.argmax(scores, axis=1)
    return chosen
