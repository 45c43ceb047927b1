"""Content hashes of samples: to find duplicates across splits and to fingerprint a dataset.

A hash covers a sample's decoded content (pixels after conversion, feature
values), its dtype and shape, never its file name, so the same image saved
under two names or two encodings hashes the same. Hashes, not content, are
what goes into manifests.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np


def sample_hash(sample: np.ndarray) -> str:
    """SHA-256 hex digest of one sample's content, dtype and shape."""
    array = np.asarray(sample)
    digest = hashlib.sha256()
    if array.dtype.kind == "U":
        # Fixed-width unicode pads to the longest string in the array; hash the text itself.
        digest.update(b"text\0")
        digest.update(str(array.item() if array.ndim == 0 else "\0".join(array.ravel().tolist())).encode("utf-8"))
        return digest.hexdigest()
    digest.update(f"{array.dtype.str}{array.shape}\0".encode("ascii"))
    digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def sample_hashes(samples: np.ndarray) -> list[str]:
    """:func:`sample_hash` of each sample along the first axis."""
    return [sample_hash(sample) for sample in samples]


def combined_hash(parts: list[str]) -> str:
    """SHA-256 of a list of strings (JSON-encoded, so no two different lists collide)."""
    return hashlib.sha256(json.dumps(parts, ensure_ascii=True).encode("ascii")).hexdigest()
