"""Texts: JSONL (or CSV) in — labelled private texts, an unlabelled public pool — the packaged sentence encoder
(used as pretrained, or with an adapter trained under DP when the representation stage has a budget),
``synthetic.jsonl`` out with the input's own field names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pcevolve.data.text import read_labeled_texts, read_unlabeled_texts
from pcevolve.data.writers import write_texts_jsonl
from pcevolve.encoders.text import SentenceEncoder, train_text_representation
from pcevolve.modalities.base import Modality

if TYPE_CHECKING:
    from pcevolve.config import DataConfig


@dataclass(frozen=True)
class TextFields:
    """Where the text and the label are in each record (the layout of a text sample)."""

    text: str = "text"
    label: str = "label"


def text_fields(data: DataConfig) -> TextFields:
    return TextFields(text=data.text_column, label=data.label_column)


TEXT = Modality(
    name="text",
    noun="text",
    layout=text_fields,
    sample_shape=lambda fields: (),
    read_private=lambda data, f: read_labeled_texts(data.private, text_field=f.text, label_field=f.label,
                                                    class_names=data.classes, min_per_class=0),
    read_public=lambda data, f: read_unlabeled_texts(data.public, text_field=f.text, label_field=f.label),
    build_encoder=lambda config, fields, seed: SentenceEncoder(seed=seed),
    train_representation=train_text_representation,
    load_encoder=SentenceEncoder.load,
    delivered_name="synthetic.jsonl",
    write_synthetic=lambda path, samples, labels, class_names, f: write_texts_jsonl(
        path, samples, labels, class_names, text_field=f.text, label_field=f.label),
    read_synthetic=lambda path, f, class_names: read_labeled_texts(
        path, text_field=f.text, label_field=f.label, class_names=class_names, min_per_class=1),
    encoder_trains_under_dp=True,
)
