"""How the judges of a table turn its rows into numbers: one 0/1 column per category, numeric columns scaled.

Every table here is a ``float64`` (N, F) array in schema order (a numeric value, or a category index), as
:func:`pcevolve.data.tabular.read_labeled_table` returns it. :func:`one_hot` keeps numeric columns as they are and
gives every categorical column one 0/1 column per schema category, so the width is fixed by the public schema, never
by the data. The utility models see :func:`model_matrix` (numeric columns standardised with the mean and standard
deviation of *that model's training set* only); the membership attack sees :func:`attack_space` (numeric columns
standardised with the synthetic set's statistics, a changed category as far as a one-standard-deviation change).
"""

from __future__ import annotations

import math

import numpy as np

from pcevolve.data.table_schema import TableSchema


def one_hot(rows: np.ndarray, schema: TableSchema) -> np.ndarray:
    """(N, F) rows in schema order → (N, D): numeric columns as they are, each categorical column as one 0/1 column
    per schema category (in the schema's order, so the width is fixed by the public schema, never by the data)."""
    rows = _rows(rows, schema)
    parts = []
    for j, column in enumerate(schema.columns):
        if column.kind == "categorical":
            index = np.clip(np.rint(rows[:, j]), 0, len(column.categories) - 1).astype(np.int64)
            parts.append(np.eye(len(column.categories))[index])
        else:
            parts.append(rows[:, j : j + 1])
    return np.hstack(parts)


def encoded_names(schema: TableSchema) -> tuple[tuple[str, int], ...]:
    """``(name, table column index)`` of each column of :func:`one_hot` (``colour=red`` for a category)."""
    names = []
    for j, column in enumerate(schema.columns):
        if column.kind == "categorical":
            names += [(f"{column.name}={category}", j) for category in column.categories]
        else:
            names.append((column.name, j))
    return tuple(names)


def _numeric_mask(schema: TableSchema) -> np.ndarray:
    return np.array([schema.columns[j].kind == "numeric" for _, j in encoded_names(schema)])


def _scale(reference: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean, sd = reference.mean(0), reference.std(0)
    return mean, np.where(sd > 0, sd, 1.0)  # a constant column stays constant instead of dividing by 0


def model_matrix(train: np.ndarray, test: np.ndarray, schema: TableSchema) -> tuple[np.ndarray, np.ndarray]:
    """The utility models' inputs: :func:`one_hot`, numeric columns standardised with ``train``'s statistics only."""
    x_train, x_test = one_hot(train, schema), one_hot(test, schema)
    numeric = _numeric_mask(schema)
    mean, sd = _scale(x_train[:, numeric])
    x_train[:, numeric] = (x_train[:, numeric] - mean) / sd
    x_test[:, numeric] = (x_test[:, numeric] - mean) / sd
    return x_train, x_test


def attack_space(rows: np.ndarray, schema: TableSchema, reference: np.ndarray) -> np.ndarray:
    """The membership attack's space: numeric columns standardised with ``reference``'s statistics (the synthetic
    set: what the attacker holds), each category's 0/1 column scaled by 1/√2 so that a changed category adds 1 to
    the squared distance — as much as a one-standard-deviation change of a numeric value."""
    x, ref = one_hot(rows, schema), one_hot(reference, schema)
    numeric = _numeric_mask(schema)
    mean, sd = _scale(ref[:, numeric])
    x[:, numeric] = (x[:, numeric] - mean) / sd
    x[:, ~numeric] /= math.sqrt(2.0)
    return x


def _rows(rows: np.ndarray, schema: TableSchema) -> np.ndarray:
    array = np.asarray(rows, dtype=np.float64)
    if array.ndim != 2 or array.shape[1] != len(schema.columns):
        raise ValueError(f"expected (N, {len(schema.columns)}) rows for the schema's columns, got {array.shape}")
    return array
