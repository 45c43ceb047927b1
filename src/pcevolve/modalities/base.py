"""What a modality supplies to a run: readers, a sample layout, an encoder, and the writer of the synthetic set.

Everything else — the DP release, the search, the fitness, the ledger — works on feature vectors and is the same
for every modality. A modality's decoders are the entries of :data:`pcevolve.decoders.DECODERS` that make its
samples (their ``modalities``; the nearest public sample serves every modality); its judge (``pcevolve
evaluate``), its console summary and its sweep point are parts its spec names apart from this one, so that nothing
a run executes imports the judges.

Privacy contract of the readers: ``read_public`` and ``layout`` read public data and the config only; a layout
(an image shape, a table schema) must never be learnt from private samples, since it shapes every released file.
``read_private`` reads and validates the private samples against the layout and the declared classes
(``data.classes``; for images without it, the class folders) and releases nothing; a class with no private sample
is accepted, so no count decides whether the run proceeds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from pcevolve.catalog.modalities import MODALITY_TRAITS, ModalityTraits

if TYPE_CHECKING:
    from pcevolve.config import DataConfig, RunConfig
    from pcevolve.data import LabeledDataset


class PublicSamples(Protocol):
    """The public pool as read: samples, and a content hash and a source name per sample (for overlap checks)."""

    samples: np.ndarray
    sources: tuple[str, ...]

    def sample_hashes(self) -> list[str]: ...


@dataclass(frozen=True)
class Modality:
    """The parts of one modality, handed to the runner (``pipeline``), which assembles them.

    Attributes:
        name: The ``data.modality`` key; what the modality is (its noun, whether its encoder trains under DP …) is
            its entry in the catalogue (:attr:`traits`), which the config's checks read without building it.
        layout: The description of one sample, from the config and public files only (never private data).
        sample_shape: The array shape of one sample in that layout (what decoders are built for).
        read_public: The public pool from ``data.public``, in the layout.
        read_private: The labelled private samples from ``data.private``, checked against the layout.
        build_encoder: A fresh encoder for ``(config, layout, seed)``.
        train_representation: Trains the encoder (public for free; DP-SGD when its stage has budget), with the
            keyword arguments of :func:`pcevolve.encoders.train_representation`.
        load_encoder: An encoder saved by the representation stage.
        delivered_name: Where a run delivers its synthetic set, under the run folder (``synthetic`` for image
            class folders, ``synthetic.csv`` for tables).
        write_synthetic: Writes labelled samples at a path in the input's own format, atomically; returns the path.
            Called as ``(path, samples, labels, class_names, layout, overwrite=...)``: without ``overwrite`` a
            path that holds something is refused (:class:`pcevolve.io.TargetExistsError`).
        read_synthetic: Reads a set written by ``write_synthetic`` back (its round trip), classes in the given order.
    """

    name: str
    layout: Callable[[DataConfig], Any]
    sample_shape: Callable[[Any], tuple[int, ...]]
    read_public: Callable[[DataConfig, Any], PublicSamples]
    read_private: Callable[[DataConfig, Any], LabeledDataset]
    build_encoder: Callable[[RunConfig, Any, int], Any]
    train_representation: Callable[..., Any]
    load_encoder: Callable[[Path], Any]
    delivered_name: str
    write_synthetic: Callable[..., Path]
    read_synthetic: Callable[[Path, Any, tuple[str, ...]], LabeledDataset]

    @property
    def traits(self) -> ModalityTraits:
        """What the catalogue says this modality is (:data:`pcevolve.catalog.modalities.MODALITY_TRAITS`)."""
        return MODALITY_TRAITS[self.name]

    @property
    def noun(self) -> str:
        """What one sample is called in messages to the user ("image", "row")."""
        return self.traits.noun
