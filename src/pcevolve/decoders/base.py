"""The decoder interface every stage-4 implementation meets.

A decoder maps feature vectors from the encoder's projected space (the space the search
moves in) back to samples in the dataset's own format. Contract:

* ``decode(features, labels=None)`` is deterministic for fixed weights and returns samples
  shaped and typed like the dataset (images: uint8, (N, H, W) grey or (N, H, W, C) colour);
* ``save(folder)`` writes safetensors + JSON only (no pickle), atomically; ``load(folder)``
  rebuilds a decoder whose ``decode`` gives identical output;
* training on public data costs no privacy budget; any decoder that reads private data must
  do so through a mechanism charged to the ledger's ``decoder`` stage.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from safetensors.torch import load_file
from safetensors.torch import save as save_safetensors

from pcevolve.config import DecoderConfig
from pcevolve.io import atomic_write_bytes, atomic_write_json, read_json

if TYPE_CHECKING:
    from pcevolve.executors import Executor

#: Every decoder folder's metadata file; its ``name`` picks the class that loads the folder.
META_FILE = "decoder.json"
#: The weights of a decoder that trains a torch network.
WEIGHTS_FILE = "decoder.safetensors"


@dataclass(frozen=True)
class DecoderTrainingResult:
    """What one call of :meth:`Decoder.fit` did.

    Attributes:
        steps: Optimiser steps taken.
        images: Public images trained on.
        seconds: Wall-clock time, split into ``features`` (encoding the pool once) and ``training``.
        final_consistency: Mean cosine(requested, re-encoded) over the last consistency checks of training.
        final_reconstruction: Mean reconstruction loss over the last steps.
    """

    steps: int
    images: int
    seconds: dict[str, float]
    final_consistency: float
    final_reconstruction: float

    @property
    def total_seconds(self) -> float:
        return float(sum(self.seconds.values()))

    def to_json(self) -> dict[str, Any]:
        return {"steps": self.steps, "images": self.images, "seconds": self.seconds,
                "total_seconds": self.total_seconds, "final_consistency": self.final_consistency,
                "final_reconstruction": self.final_reconstruction}


@runtime_checkable
class Decoder(Protocol):
    """Feature vectors → samples. Implementations register under ``DecoderConfig.name``."""

    name: ClassVar[str]
    #: The ``data.modality`` values whose samples it makes, None for every one (checked when a config is loaded).
    modalities: ClassVar[tuple[str, ...] | None]
    #: Whether ``decoder.training`` may be ``public-then-dp`` / ``dp`` (checked when a config is loaded).
    trainable_under_dp: ClassVar[bool]

    def fit(self, public_samples: np.ndarray, *, encoder: Any, seed: int, progress: bool = False,
            executor: Executor | None = None) -> DecoderTrainingResult:
        """Train on public samples only (free); ``encoder`` supplies the features to invert; ``executor`` (local
        when None) is where it may encode the public pool in bulk."""
        ...

    def decode(self, features: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
        """Feature vectors (N, feature_dim) → samples in the dataset's format."""
        ...

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write weights (safetensors) and metadata (JSON) into ``folder`` atomically."""
        ...

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> "Decoder":
        """Rebuild a decoder written by :meth:`save`; its ``decode`` gives identical output."""
        ...

    #: What its last ``decode_and_encode`` did beyond the round trip (e.g. texts rewritten), merged into the
    #: delivery summary; empty for most decoders.
    delivery_notes: Any

    # The pool it retrieves from, if any (decoders/round_trips.py): the search's model of the round trip is exact
    # for a decoder with a pool and a fitted surrogate otherwise (pcevolve.search.roundtrip.round_trip_model).
    def pool_encodings(self) -> np.ndarray | None:
        """Encodings of every sample it can return (retrieval), or None (a generator)."""
        ...

    def pool_samples(self) -> np.ndarray | None:
        """Every sample it can return, row for row with :meth:`pool_encodings`, or None (a generator)."""
        ...

    def decode_and_encode(self, features: np.ndarray, labels: np.ndarray, *, encoder: Any,
                          territories: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Samples for delivery and the encoder's view of them."""
        ...


@runtime_checkable
class KnownEncodings(Protocol):
    """A decoder that knows the encoding of every sample it returns (e.g. one that retrieves encoded samples).

    Its decode → re-encode round trip is exact without an encoder pass, so the search judges
    candidates through it directly and delivery skips re-encoding. ``encodings`` (n, feature_dim)
    are the encodings of everything it can return.
    """

    encodings: np.ndarray

    def decode_known(self, features: np.ndarray, labels: np.ndarray | None = None, *, distinct: bool = True,
                     territories: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Samples for ``features`` and their (exact) encodings; ``distinct``: no sample twice while possible;
        ``territories`` (:class:`pcevolve.decoders.territories.ClassTerritories`): a row of class k retrieves
        only from the pool samples the class model gave to k."""
        ...


def write_decoder_meta(folder: Path, decoder: Any, **extra: Any) -> None:
    """Write ``folder/decoder.json``: name, feature size, sample shape, seed and config (what
    :func:`decoder_from_meta` rebuilds the decoder from), plus ``extra`` fields for the reader."""
    atomic_write_json(folder / META_FILE, {"name": decoder.name, "feature_dim": decoder.feature_dim,
                                           "sample_shape": list(decoder.sample_shape), "seed": decoder.seed,
                                           **extra, "config": decoder.config.model_dump()})


def decoder_from_meta(cls: type, folder: Path) -> Any:
    """A fresh (untrained) ``cls`` built from ``folder/decoder.json``.

    Raises:
        ValueError: The file names another decoder than ``cls.name``.
    """
    meta = read_json(folder / META_FILE)
    if meta.get("name") != cls.name:
        raise ValueError(f"{folder / META_FILE} holds a {meta.get('name')!r} decoder, not {cls.name!r}")
    return cls(DecoderConfig.model_validate(meta["config"]), feature_dim=meta["feature_dim"],
               sample_shape=tuple(meta["sample_shape"]), seed=meta["seed"])


def save_weights(folder: Path, network: Any) -> None:
    """Write ``network``'s weights to ``folder/decoder.safetensors`` (the folder made if missing): serialised in
    memory, then one atomic write, so a full disk never leaves a file that looks complete."""
    folder.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous().clone() for k, v in network.state_dict().items()}
    atomic_write_bytes(folder / WEIGHTS_FILE, save_safetensors(state))


def load_weights(network: Any, folder: Path) -> None:
    """Load the weights :func:`save_weights` wrote into ``network`` (every key, nothing more) and set it to eval."""
    network.load_state_dict(load_file(str(folder / WEIGHTS_FILE)), strict=True)
    network.eval()

