"""The decoder in the loop: decode → re-encode, for real and by a cheap surrogate.

A real round trip runs the decoder and the encoder, far too slow for every candidate of every
generation (docs/search.md §2 gives its cost). The surrogate is a ridge-regression map
z ↦ A z + b in the reduced space, first fitted on *public* features (free): their coordinates
against the coordinates of decode → re-encode of the same features. The search evaluates label
consistency on the surrogate's prediction for every candidate.

Public features are not where the search goes, and a map fitted only on them is optimistic there: it
fits public pairs far better than the search's samples, and predicts a consistency that real round trips
do not reach (measured in docs/search.md §2). So every few generations the best individual's samples
are round-tripped for real, the pairs are added to the surrogate's data, and the surrogate is
refitted (:class:`SurrogateData`): it learns the region the search explores. All pairs are
synthetic or public, so this is free; they are kept per generation so that a resumed run refits
exactly the surrogate an uninterrupted run had.

A retrieval decoder (:class:`~pcevolve.decoders.KnownEncodings`) needs none of this: what it
returns for a feature, and that sample's encoding, are known exactly, and
:class:`ExactRoundTrip` computes them in the reduced space for every candidate. Which of the two a decoder gets
is decided here (:func:`round_trip_model`), from whether it has a pool: the decoders know nothing of the search.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from pcevolve.encoders.reencode import reencode_check
from pcevolve.io import atomic_write_npz
from pcevolve.search.basis import PublicBasis, unit_rows
from pcevolve.decoders.territories import ClassTerritories
from pcevolve.similarity import best_matches

if TYPE_CHECKING:
    from pcevolve.decoders import Decoder
    from pcevolve.encoders import ImageEncoder


def round_trip(coordinates: np.ndarray, *, basis: PublicBasis, decoder: Decoder, encoder: ImageEncoder,
               batch_size: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Real round trip: coordinates → decoded samples → re-encoded coordinates. Returns (samples, coordinates)."""
    features = basis.expand(coordinates).astype(np.float32)
    samples = decoder.decode(features)
    check = reencode_check(encoder, samples, features, batch_size=batch_size)
    return samples, basis.reduce(check.reencoded)


@dataclass(frozen=True, eq=False)
class RoundTripSurrogate:
    """Affine map predicting round-tripped coordinates: ẑ = z A + b."""

    #: A learned approximation: the search checks it against real round trips and refits it.
    exact: ClassVar[bool] = False
    weights: np.ndarray
    bias: np.ndarray
    r2: float

    @classmethod
    def fit(cls, inputs: np.ndarray, outputs: np.ndarray, *, ridge: float = 1e-3) -> RoundTripSurrogate:
        """Ridge regression of ``outputs`` on ``inputs`` (both (n, P)); ``r2`` is the in-sample R²."""
        x = np.asarray(inputs, dtype=np.float64)
        y = np.asarray(outputs, dtype=np.float64)
        x_mean, y_mean = x.mean(axis=0), y.mean(axis=0)
        xc, yc = x - x_mean, y - y_mean
        gram = xc.T @ xc + ridge * len(x) * np.eye(x.shape[1])
        weights = np.linalg.solve(gram, xc.T @ yc)
        bias = y_mean - x_mean @ weights
        residual = ((yc - xc @ weights) ** 2).sum()
        total = max((yc**2).sum(), 1e-12)
        return cls(weights=weights, bias=bias, r2=float(1.0 - residual / total))

    def predict(self, coordinates: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
        """ẑ for each row (the map is the same for every class: ``labels`` are not used)."""
        return np.asarray(coordinates, dtype=np.float64) @ self.weights + self.bias

    def agreement(self, coordinates: np.ndarray, actual: np.ndarray) -> float:
        """R² of the surrogate on fresh (coordinates, real round trip) pairs."""
        predicted = self.predict(coordinates)
        actual = np.asarray(actual, dtype=np.float64)
        total = max(((actual - actual.mean(axis=0)) ** 2).sum(), 1e-12)
        return float(1.0 - ((actual - predicted) ** 2).sum() / total)


_CHOOSE_ROWS = 24


@dataclass(frozen=True, eq=False)
class ExactRoundTrip:
    """The round trip of a decoder that retrieves encoded samples, computed exactly in the reduced space.

    Such a decoder (``decoders.round_trips.RetrievalRoundTrip``: it has ``pool_encodings``) returns for a
    feature φ the pool sample of highest cosine with φ, and that sample's stored encoding u. For φ = expand(z) =
    (c + B z)/‖c + B z‖ the winner is argmaxₚ (c·uₚ + z·Bᵀuₚ) — the norm of the query does not
    change the argmax — so the search needs only P-dimensional products, and the predicted
    coordinates are the winner's own reduce(uₚ). Same choice as the decoder's row-by-row decode
    (up to float32 rounding between near-tied pool samples). With class territories
    (:mod:`pcevolve.search.territory`) a row labelled k is matched within ``members[k]`` only, as the
    decoder does at delivery.
    """

    exact: ClassVar[bool] = True

    offsets: np.ndarray      # (n_pool,)  c·uₚ
    directions: np.ndarray   # (P, n_pool)  Bᵀuₚ
    coordinates: np.ndarray  # (n_pool, P)  reduce(uₚ)
    territories: ClassTerritories | None = None
    r2: float = 1.0

    @classmethod
    def build(cls, encodings: np.ndarray, basis: PublicBasis,
              territories: ClassTerritories | None = None) -> ExactRoundTrip:
        """From the decoder's pool encodings (n_pool, d), the search basis and optional class territories."""
        units = unit_rows(encodings)
        # float32 scores: the decoder compares float32 cosines too, and the products are the search's hot spot
        # (candidate rows × pool size per evaluation).
        return cls(offsets=(units @ basis.centre).astype(np.float32),
                   directions=np.ascontiguousarray((units @ basis.directions).T, dtype=np.float32),
                   coordinates=basis.reduce(encodings), territories=territories)

    @cached_property
    def _per_class(self) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        assert self.territories is not None
        return tuple((np.ascontiguousarray(self.directions[:, rows]), self.offsets[rows])
                     for rows in self.territories.members)

    def choose(self, coordinates: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
        """Pool index the decoder returns for each row of ``coordinates`` (of class ``labels``, with territories)."""
        # A few rows at a time: their score block (rows × pool, ~2 MB) stays in cache between the product and the
        # argmax; one block for all rows is memory-bound and about twice as slow (measured in docs/search.md §2).
        queries = np.asarray(coordinates, dtype=np.float32)
        if self.territories is None:
            return best_matches(queries, self.directions, self.offsets, rows=_CHOOSE_ROWS)
        if labels is None:
            raise ValueError("a round trip with class territories needs each row's class")
        per_class = self._per_class
        return self.territories.within(labels, lambda k, rows: best_matches(queries[rows], *per_class[k],
                                                                            rows=_CHOOSE_ROWS))

    def predict(self, coordinates: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
        return self.coordinates[self.choose(coordinates, labels)]


@dataclass(frozen=True, eq=False)
class SurrogateData:
    """The surrogate's training pairs: public ones, plus real round trips of the search's samples by generation."""

    public_inputs: np.ndarray
    public_outputs: np.ndarray
    checked: dict[int, tuple[np.ndarray, np.ndarray]]

    def with_check(self, generation: int, inputs: np.ndarray, outputs: np.ndarray) -> SurrogateData:
        checked = dict(self.checked)
        checked[int(generation)] = (np.asarray(inputs, np.float64), np.asarray(outputs, np.float64))
        return SurrogateData(self.public_inputs, self.public_outputs, checked)

    def before(self, generation: int) -> SurrogateData:
        """Only the checks of generations before ``generation`` (what a run resumed there has seen)."""
        return SurrogateData(self.public_inputs, self.public_outputs,
                             {g: pair for g, pair in self.checked.items() if g < generation})

    def fit(self) -> RoundTripSurrogate:
        generations = sorted(self.checked)
        inputs = np.concatenate([self.public_inputs, *(self.checked[g][0] for g in generations)])
        outputs = np.concatenate([self.public_outputs, *(self.checked[g][1] for g in generations)])
        return RoundTripSurrogate.fit(inputs, outputs)

    def save(self, path: Path) -> Path:
        arrays = {"public_inputs": self.public_inputs, "public_outputs": self.public_outputs,
                  "generations": np.array(sorted(self.checked), dtype=np.int64)}
        for g in sorted(self.checked):
            arrays[f"inputs_{g}"], arrays[f"outputs_{g}"] = self.checked[g]
        return atomic_write_npz(path, **arrays)

    @classmethod
    def load(cls, path: Path) -> SurrogateData:
        with np.load(path, allow_pickle=False) as data:
            checked = {int(g): (data[f"inputs_{g}"], data[f"outputs_{g}"]) for g in data["generations"]}
            return cls(data["public_inputs"], data["public_outputs"], checked)


def round_trip_model(decoder: Decoder, basis: PublicBasis, surrogate_data: SurrogateData,
                     territories: ClassTerritories | None = None) -> ExactRoundTrip | RoundTripSurrogate:
    """How the search predicts ``decoder``'s decode → re-encode: exactly for a decoder that returns samples of an
    encoded pool (within the class territories, if any), else by the affine surrogate fitted on ``surrogate_data``."""
    pool = decoder.pool_encodings()
    if pool is not None:
        return ExactRoundTrip.build(pool, basis, territories)
    return surrogate_data.fit()


def surrogate_pairs(decoder: Decoder, coordinates: np.ndarray, *, basis: PublicBasis,
                    encoder: ImageEncoder) -> SurrogateData:
    """The surrogate's first training pairs: real round trips of the public ``coordinates`` through a generating
    ``decoder``; none for a decoder whose round trip is exact (it has a pool), which has nothing to fit."""
    if decoder.pool_encodings() is not None:
        return SurrogateData(coordinates[:0], coordinates[:0], {})
    return SurrogateData(coordinates, round_trip(coordinates, basis=basis, decoder=decoder, encoder=encoder)[1], {})
