"""The text modality's parts (:data:`TEXT`): JSON Lines (or CSV) texts read and written with the config's fields,
the packaged sentence encoder."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.data.dataset import ClassLabel, LabeledDataset, label_text
from pcevolve.data.text import read_labeled_texts, read_unlabeled_texts
from pcevolve.data.writers import write_texts_jsonl
from pcevolve.encoders.text import SentenceEncoder, train_text_representation
from pcevolve.modalities.base import Modality

if TYPE_CHECKING:
    from pcevolve.config import DataConfig, RunConfig


@dataclass(frozen=True)
class TextFields:
    """Where the text and the label are in each record, and what a label is (the layout of a text sample).

    Attributes:
        text: The private (and test, and delivered) records' text field.
        label: Their label field.
        public_text: The public pool's text field, when it differs (None: ``text``).
        classes: The declared classes with their JSON types (``data.classes``), which the delivered file writes and
            reads back; None: labels are written as text.
    """

    text: str = "text"
    label: str = "label"
    public_text: str | None = None
    classes: tuple[ClassLabel, ...] | None = None

    @property
    def pool_text(self) -> str:
        """The field holding each text of the public pool."""
        return self.public_text or self.text

    def as_declared(self, class_names: Sequence[ClassLabel]) -> tuple[ClassLabel, ...]:
        """Classes given by name (their text forms, as a run carries them) as declared, with their JSON types: the
        name "0" is the number 0 when ``data.classes`` declares 0. A name the declaration lacks stays text."""
        declared = {label_text(value): value for value in self.classes or ()}
        return tuple(declared.get(label_text(name), name) for name in class_names)


def text_fields(data: DataConfig) -> TextFields:
    """The layout from the config alone (never from the private file: it shapes the delivered file)."""
    return TextFields(text=data.text_column, label=data.label_column, public_text=data.public_text_column,
                      classes=data.classes)


class TextModality(Modality[TextFields]):
    """Texts: the layout is where the text and the label are in each record."""

    name = "text"
    delivered_name = "synthetic.jsonl"

    def layout(self, data: DataConfig) -> TextFields:
        return text_fields(data)

    def sample_shape(self, layout: TextFields) -> tuple[int, ...]:
        return ()

    def read_public(self, data: DataConfig, layout: TextFields) -> Any:
        return read_unlabeled_texts(data.public, text_field=layout.pool_text, label_field=layout.label)

    def read_private(self, data: DataConfig, layout: TextFields) -> LabeledDataset:
        return read_labeled_texts(data.private, text_field=layout.text, label_field=layout.label,
                                  class_names=data.classes, min_per_class=0)

    def build_encoder(self, config: RunConfig, layout: TextFields, seed: int) -> SentenceEncoder:
        return SentenceEncoder(seed=seed, lexical_dim=config.representation.lexical_view)

    def train_representation(self, encoder: Any, private_samples: np.ndarray, public: np.ndarray | None,
                             **settings: Any) -> Any:
        return train_text_representation(encoder, private_samples, public, **settings)

    def load_encoder(self, folder: Path) -> SentenceEncoder:
        return SentenceEncoder.load(folder)

    def write_synthetic(self, path: Path, samples: np.ndarray, labels: np.ndarray, class_names: Sequence[Any],
                        layout: TextFields, *, overwrite: bool = False) -> Path:
        return write_texts_jsonl(path, samples, labels, layout.as_declared(class_names), text_field=layout.text,
                                 label_field=layout.label, overwrite=overwrite)

    def read_synthetic(self, path: Path, layout: TextFields, class_names: Sequence[Any]) -> LabeledDataset:
        return read_labeled_texts(path, text_field=layout.text, label_field=layout.label,
                                  class_names=layout.as_declared(class_names), min_per_class=1)


TEXT = TextModality()
