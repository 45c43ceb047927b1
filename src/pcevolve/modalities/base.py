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

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

import numpy as np

from pcevolve.catalog.modalities import MODALITY_TRAITS, ModalityTraits

if TYPE_CHECKING:
    from pcevolve.config import DataConfig, RunConfig
    from pcevolve.data import LabeledDataset


Layout = TypeVar("Layout")


class PublicSamples(Protocol):
    """The public pool as read: samples, and a content hash and a source name per sample (for overlap checks)."""

    samples: np.ndarray
    sources: tuple[str, ...]

    def sample_hashes(self) -> list[str]: ...


class Modality(ABC, Generic[Layout]):
    """The parts of one modality, handed to the runner (``pipeline``), which assembles them: a subclass names each
    part as a method, and its one instance is what the modality's spec names as ``parts``
    (:data:`pcevolve.modalities.MODALITIES` refuses anything else).

    ``Layout`` is the modality's description of one sample (an image shape, a table schema, the text fields), made
    from the config and public files only (never private data): every other part reads it.

    Class attributes:
        name: The ``data.modality`` key; what the modality is (its noun, whether its encoder trains under DP …) is
            its entry in the catalogue (:attr:`traits`), which the config's checks read without building it.
        delivered_name: Where a run delivers its synthetic set, under the run folder (``synthetic`` for image
            class folders, ``synthetic.csv`` for tables).
    """

    name: ClassVar[str]
    delivered_name: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Checked on every subclass as it is made (ABCMeta sets the abstract methods only afterwards, so an abstract
        # subclass cannot be told apart here): a modality says what it is called.
        for attribute in ("name", "delivered_name"):
            if not isinstance(getattr(cls, attribute, None), str):
                raise TypeError(f"modality {cls.__name__} must set the class attribute {attribute!r} (a string)")

    @abstractmethod
    def layout(self, data: DataConfig) -> Layout:
        """The description of one sample, from the config and public files only (never private data)."""

    @abstractmethod
    def sample_shape(self, layout: Layout) -> tuple[int, ...]:
        """The array shape of one sample in that layout (what decoders are built for)."""

    @abstractmethod
    def read_public(self, data: DataConfig, layout: Layout) -> PublicSamples:
        """The public pool from ``data.public``, in the layout."""

    @abstractmethod
    def read_private(self, data: DataConfig, layout: Layout) -> LabeledDataset:
        """The labelled private samples from ``data.private``, checked against the layout and the declared classes;
        it releases nothing, and a class with no sample is accepted."""

    @abstractmethod
    def build_encoder(self, config: RunConfig, layout: Layout, seed: int) -> Any:
        """A fresh encoder for this run."""

    @abstractmethod
    def train_representation(self, encoder: Any, private_samples: np.ndarray, public: np.ndarray | None,
                             **settings: Any) -> Any:
        """Trains the encoder (public for free; DP-SGD when its stage has budget), with the keyword arguments of
        :func:`pcevolve.encoders.train_representation` (``ledger`` among them)."""

    @abstractmethod
    def load_encoder(self, folder: Path) -> Any:
        """An encoder saved by the representation stage."""

    @abstractmethod
    def write_synthetic(self, path: Path, samples: np.ndarray, labels: np.ndarray, class_names: Sequence[Any],
                        layout: Layout, *, overwrite: bool = False) -> Path:
        """Writes labelled samples at ``path`` in the input's own format, atomically; returns the path. Without
        ``overwrite`` a path that holds something is refused (:class:`pcevolve.io.TargetExistsError`)."""

    @abstractmethod
    def read_synthetic(self, path: Path, layout: Layout, class_names: Sequence[Any]) -> LabeledDataset:
        """Reads a set written by :meth:`write_synthetic` back (its round trip), classes in the given order."""

    @property
    def traits(self) -> ModalityTraits:
        """What the catalogue says this modality is (:data:`pcevolve.catalog.modalities.MODALITY_TRAITS`)."""
        return MODALITY_TRAITS[self.name]

    @property
    def noun(self) -> str:
        """What one sample is called in messages to the user ("image", "row")."""
        return self.traits.noun


def checked_parts(part: object, name: str) -> Modality[Any]:
    """``part``, the ``parts`` a modality's spec names, checked to be a :class:`Modality` of that name.

    Raises:
        TypeError: It is not (the spec names something else, or a modality under another name).
    """
    if not isinstance(part, Modality):
        raise TypeError(f"the parts of modality {name!r} must be an instance of pcevolve.modalities.Modality (a "
                        f"subclass naming each part as a method), got {type(part).__name__}")
    if part.name != name:
        raise TypeError(f"the parts of modality {name!r} say they are modality {part.name!r}")
    return part
