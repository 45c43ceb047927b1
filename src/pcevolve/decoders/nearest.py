"""Retrieval decoder (registry key ``"nearest-public"``): a feature vector → the public sample nearest to it.

The "decoder" is the public pool itself, indexed by the encoder: decoding returns the pool
sample whose projected feature has the highest cosine with the requested one. It draws only
what exists, so it never produces a blurry average, and it knows the encoding of everything it
returns — the decode → re-encode round trip is exact and costs a lookup, so the
search can judge every candidate through it instead of through a learned surrogate.

It works for every modality: what it returns are public samples, whatever they are (images, table rows).
Use it when the public pool holds samples of the private classes (an unlabelled in-domain pool,
as in the demo); with a pool that lacks a class it can only return the nearest *other* thing,
and the conv decoder fine-tuned under DP (``training: public-then-dp``) is the better choice.

Privacy: it reads the public pool only (free). The class of a delivered sample is the class
the search asked for, decided by the DP release; the pool's own labels, if any, are never read.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from pcevolve.config import DecoderConfig
from pcevolve.decoders.base import (
    META_FILE,
    DecoderTrainingResult,
    decoder_from_meta,
    write_decoder_meta,
)
from pcevolve.decoders.round_trips import RetrievalRoundTrip
from pcevolve.executors import bulk_encode
from pcevolve.io import atomic_write_npz
from pcevolve.similarity import CHUNK as _CHUNK
from pcevolve.similarity import best_matches, unit_vectors

if TYPE_CHECKING:
    from pcevolve.encoders import Encoder
    from pcevolve.executors import Executor
    from pcevolve.decoders.territories import ClassTerritories

_POOL = "pool.npz"


def _assign_distinct(queries: np.ndarray, pool: np.ndarray, candidates: int) -> np.ndarray:
    """Rows of ``pool`` (unit float32) for unit ``queries``, fewest uses first (see ``assign_distinct``)."""
    size = len(pool)
    k = min(candidates, size)
    uses = np.zeros(size, dtype=np.int64)
    chosen = np.empty(len(queries), dtype=np.int64)
    for start in range(0, len(queries), _CHUNK):
        similarity = queries[start:start + _CHUNK] @ pool.T
        top = np.argpartition(-similarity, k - 1, axis=1)[:, :k] if k < size else \
            np.tile(np.arange(size), (len(similarity), 1))
        order = np.argsort(-np.take_along_axis(similarity, top, axis=1), axis=1, kind="stable")
        top = np.take_along_axis(top, order, axis=1)
        for row, ranked in enumerate(top):
            level = uses.min()
            free = ranked[uses[ranked] == level]
            # None of the k nearest is at the lowest use count: the best-matching one that is.
            index = int(free[0]) if len(free) else int(np.flatnonzero(uses == level)[
                np.argmax(similarity[row, uses == level])])
            uses[index] += 1
            chosen[start + row] = index
    return chosen


class NearestPublicDecoder(RetrievalRoundTrip):
    """Features → the most similar samples of an encoded public pool.

    Args:
        config: ``public_images`` caps the pool (a seeded subset of the public samples).
        feature_dim: Size of the encoder's projected features.
        sample_shape: One sample's shape: (H, W) grey or (H, W, C) colour images, (F,) table rows, () texts.
        seed: Chooses the pool subset when the public set is larger than ``public_images``.
    """

    name: ClassVar[str] = "nearest-public"
    modalities: ClassVar[tuple[str, ...] | None] = None  # a pool sample of any modality

    def __init__(self, config: DecoderConfig, *, feature_dim: int, sample_shape: tuple[int, ...], seed: int) -> None:
        self.config = config
        self.feature_dim = int(feature_dim)
        self.sample_shape = tuple(int(s) for s in sample_shape)
        self.seed = seed
        self.samples = np.zeros((0, *self.sample_shape), dtype=np.uint8)
        self.encodings = np.zeros((0, self.feature_dim), dtype=np.float32)

    @property
    def pool_size(self) -> int:
        return len(self.samples)

    def fit(self, public_samples: np.ndarray, *, encoder: Encoder, seed: int, progress: bool = False,
            executor: Executor | None = None) -> DecoderTrainingResult:
        """Encode (a seeded subset of) the public pool once; nothing is trained and nothing is charged."""
        samples = np.asarray(public_samples)
        if samples.shape[1:] != self.sample_shape:
            raise ValueError(f"expected samples of shape (N, {self.sample_shape}), got {samples.dtype} "
                             f"{samples.shape}")
        if len(samples) == 0:
            raise ValueError("the retrieval decoder needs a non-empty public pool")
        if encoder.feature_dim != self.feature_dim:
            raise ValueError(f"encoder gives {encoder.feature_dim}-d features, decoder expects {self.feature_dim}")
        started = time.perf_counter()
        if len(samples) > self.config.public_images:
            rows = np.random.default_rng(seed).choice(len(samples), self.config.public_images, replace=False)
            samples = samples[np.sort(rows)]
        was_training = encoder.training
        encoder.eval()
        try:
            _, encodings = bulk_encode(encoder, samples, batch_size=256, progress=progress,
                                       executor=executor)  # public only
        finally:
            encoder.train(was_training)
        self.samples = np.ascontiguousarray(samples)
        self.encodings = np.asarray(encodings, dtype=np.float32)
        # A sample's stored encoding *is* its re-encoding: consistency 1 by construction.
        return DecoderTrainingResult(steps=0, images=self.pool_size,
                                     seconds={"features": time.perf_counter() - started, "training": 0.0},
                                     final_consistency=1.0, final_reconstruction=0.0)

    def _check(self, features: np.ndarray, labels: np.ndarray | None) -> np.ndarray:
        if self.pool_size == 0:
            raise ValueError("the retrieval decoder has no pool yet: call fit() or load() first")
        feats = np.asarray(features, dtype=np.float32)
        if feats.ndim != 2 or feats.shape[1] != self.feature_dim:
            raise ValueError(f"expected features (N, {self.feature_dim}), got {feats.shape}")
        if labels is not None and len(labels) != len(feats):
            raise ValueError(f"{len(labels)} labels for {len(feats)} features")
        return unit_vectors(feats)

    def nearest(self, features: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
        """Pool index of highest cosine for each row (ties: the lowest index)."""
        return best_matches(self._check(features, labels), unit_vectors(self.encodings).T)  # float32, as stored

    def assign_distinct(self, features: np.ndarray, labels: np.ndarray | None = None, *,
                        candidates: int = 64, territories: ClassTerritories | None = None) -> np.ndarray:
        """Pool indices with no sample used twice while the pool lasts.

        Rows are served in order; each takes the most similar pool sample among its
        ``candidates`` nearest that has been used fewest times so far, so a pool smaller than
        the request is used round by round (every sample once, then twice, …) rather than
        piling onto a few. With ``territories`` a row labelled k draws only from ``members[k]``
        (and "the pool" above is that territory). Deterministic for fixed inputs.
        """
        queries = self._check(features, labels)
        pool = unit_vectors(self.encodings)  # float32, as stored
        if territories is None:
            return _assign_distinct(queries, pool, candidates)
        if labels is None:
            raise ValueError("retrieval within class territories needs each row's class")
        return territories.within(labels, lambda k, rows: _assign_distinct(queries[rows], pool[territories.members[k]],
                                                                            candidates))

    def decode(self, features: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
        """Features (N, feature_dim) → the nearest pool samples (row by row); ``labels`` are not used."""
        return self.samples[self.nearest(features, labels)]

    def decode_known(self, features: np.ndarray, labels: np.ndarray | None = None, *, distinct: bool = True,
                     territories: ClassTerritories | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Samples for ``features`` and their encodings (no encoder pass: they were stored at :meth:`fit`).

        With ``distinct`` (delivery) no pool sample is returned twice while the pool lasts
        (:meth:`assign_distinct`, within ``territories`` if given); otherwise each row gets its
        nearest (:meth:`decode`).
        """
        if distinct:
            rows = self.assign_distinct(features, labels, territories=territories)
        elif territories is not None:
            raise ValueError("territories apply to distinct retrieval (delivery) only")
        else:
            rows = self.nearest(features, labels)
        return self.samples[rows], self.encodings[rows]

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write ``pool.npz`` (samples, encodings) and ``decoder.json`` into ``folder`` (atomically)."""
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        atomic_write_npz(target / _POOL, samples=self.samples, encodings=self.encodings)
        write_decoder_meta(target, self, pool_size=self.pool_size)
        return target

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> NearestPublicDecoder:
        """Rebuild a decoder written by :meth:`save`."""
        source = Path(folder)
        decoder = decoder_from_meta(cls, source)
        with np.load(source / _POOL, allow_pickle=False) as data:
            decoder.samples, decoder.encodings = data["samples"], data["encodings"]
        if decoder.samples.shape[1:] != decoder.sample_shape or len(decoder.encodings) != len(decoder.samples):
            raise ValueError(f"{source / _POOL} does not match {source / META_FILE}")
        return decoder
