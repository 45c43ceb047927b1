"""The table modality's parts (:data:`TABULAR`): the schema from public data, CSV tables read and written in it,
the contrastive MLP encoder."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

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


def _encoder(config: RunConfig, schema: TableSchema, seed: int) -> TableEncoder:
    from pcevolve.encoders.table import TableEncoder  # torch: only runs with a public table train an encoder

    rep = config.representation
    return TableEncoder(schema, hidden=min(rep.proj_hidden_dim, 512), projection_dim=rep.feature_dim, seed=seed)


def _train(*args: Any, **kwargs: Any) -> Any:
    from pcevolve.encoders.table import train_table_representation

    return train_table_representation(*args, **kwargs)


def _load_encoder(path: Path) -> TableEncoder:
    from pcevolve.encoders.table import TableEncoder

    return TableEncoder.load(path)


TABULAR = Modality(
    name="tabular",
    layout=table_schema,
    sample_shape=lambda schema: (len(schema.columns),),
    read_private=lambda data, schema: read_labeled_table(data.private, schema, class_names=data.classes,
                                                         min_per_class=0),
    read_public=lambda data, schema: read_unlabeled_table(data.public, schema),
    build_encoder=_encoder,
    train_representation=_train,
    load_encoder=_load_encoder,
    delivered_name="synthetic.csv",
    write_synthetic=write_table_csv,
    read_synthetic=lambda path, schema, class_names: read_labeled_table(path, schema, class_names=class_names,
                                                                        min_per_class=1),
)
