"""The table modality's parts (:data:`TABULAR`): the schema from public data, CSV tables read and written in it,
the contrastive MLP encoder."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.data.dataset import LabeledDataset
from pcevolve.data.table_schema import TableSchema, draft_schema
from pcevolve.data.tabular import read_labeled_table, read_unlabeled_table
from pcevolve.data.writers import write_table_csv
from pcevolve.modalities.base import Modality

if TYPE_CHECKING:
    from pcevolve.config import DataConfig, RunConfig
    from pcevolve.encoders.table import TableEncoder


def table_schema(data: DataConfig) -> TableSchema:
    """The schema from ``data.schema_file``, else drafted from the public table (never from the private one);
    the label column is ``data.label_column``."""
    if data.schema_file:
        return replace(TableSchema.load(data.schema_file), label_column=data.label_column)
    assert data.public is not None  # the config check refuses a table run with neither
    return draft_schema(data.public, label_column=data.label_column)


class TableModality(Modality[TableSchema]):
    """Tables: the layout is the schema (declared, or drafted from the public table)."""

    name = "tabular"
    delivered_name = "synthetic.csv"

    def layout(self, data: DataConfig) -> TableSchema:
        return table_schema(data)

    def sample_shape(self, layout: TableSchema) -> tuple[int, ...]:
        return (len(layout.columns),)

    def read_public(self, data: DataConfig, layout: TableSchema) -> Any:
        return read_unlabeled_table(data.public, layout)

    def read_private(self, data: DataConfig, layout: TableSchema) -> LabeledDataset:
        return read_labeled_table(data.private, layout, class_names=data.classes, min_per_class=0)

    def build_encoder(self, config: RunConfig, layout: TableSchema, seed: int) -> TableEncoder:
        from pcevolve.encoders.table import TableEncoder  # torch: only runs with a public table train an encoder

        rep = config.representation
        return TableEncoder(layout, hidden=min(rep.proj_hidden_dim, 512), projection_dim=rep.feature_dim, seed=seed)

    def train_representation(self, encoder: Any, private_samples: np.ndarray, public: np.ndarray | None,
                             **settings: Any) -> Any:
        from pcevolve.encoders.table import train_table_representation

        return train_table_representation(encoder, private_samples, public, **settings)

    def load_encoder(self, folder: Path) -> TableEncoder:
        from pcevolve.encoders.table import TableEncoder

        return TableEncoder.load(folder)

    def write_synthetic(self, path: Path, samples: np.ndarray, labels: np.ndarray, class_names: Sequence[Any],
                        layout: TableSchema, *, overwrite: bool = False) -> Path:
        return write_table_csv(path, samples, labels, class_names, layout, overwrite=overwrite)

    def read_synthetic(self, path: Path, layout: TableSchema, class_names: Sequence[Any]) -> LabeledDataset:
        return read_labeled_table(path, layout, class_names=class_names, min_per_class=1)


TABULAR = TableModality()
