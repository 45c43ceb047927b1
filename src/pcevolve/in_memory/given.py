"""The way back: the synthetic set handed back in the form the in-memory data was given (:func:`as_given`).

``form.json`` beside the written inputs (:data:`FORM_FILE`) remembers the input's shape convention — its columns in
order, the array layout — and nothing read off the private values: the types of what comes back follow the
declarations alone (a table's columns the schema, the labels the declared classes; :func:`declared_labels`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.catalog.modalities import MODALITY_TRAITS
from pcevolve.io import read_json

if TYPE_CHECKING:
    from pcevolve.data import LabeledDataset

#: Where in-memory data is written, under the run's ``secure/`` folder.
INPUT_FOLDER = "input"
FORM_FILE = "form.json"
FRAMES_EXTRA = "pip install 'pcevolve[frames]'"


def input_folder(run_path: Path) -> Path:
    """``RUN/secure/input``: the only place in-memory data is ever written."""
    return run_path / "secure" / INPUT_FOLDER


def read_form(run_path: Path) -> dict[str, Any] | None:
    """The input's shape convention, or None when the run was fitted on paths."""
    path = input_folder(run_path) / FORM_FILE
    return read_json(path) if path.is_file() else None


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError(f"sample() returns a pandas DataFrame for in-memory tables and texts: {FRAMES_EXTRA}") \
            from None
    return pandas


def as_given(synthetic: LabeledDataset, form: Mapping[str, Any], layout: Any) -> Any:
    """The synthetic set in the input's form: a DataFrame (tables, texts) under the column names as given, or
    ``(X, y)`` arrays (images), typed by the declarations only (module docstring)."""
    if form["kind"] == "arrays":
        return _as_arrays(synthetic, form)
    pandas = _pandas()
    rows = MODALITY_TRAITS[form["modality"]].sample_form == "rows"
    if rows:
        columns = {column.name: _table_column(column, synthetic.samples[:, i])
                   for i, column in enumerate(layout.columns)}
        columns[layout.label_column] = declared_values(synthetic.class_names, synthetic.labels)
    else:
        declared = layout.as_declared(synthetic.class_names)
        columns = {layout.text: np.asarray([str(text) for text in synthetic.samples], dtype=object),
                   layout.label: [declared[k] for k in synthetic.labels]}  # pandas types them as declared
    # A table's written header is read without surrounding spaces (a JSON key keeps them): the given names are
    # found by the form the reader gives.
    def head(name: Any) -> str:
        return str(name).strip() if rows else str(name)

    given = {head(name): name for name in form.get("given") or form["columns"]}
    heads = [head(name) for name in form["columns"]]
    order = [name for name in heads if name in columns] + [name for name in columns if name not in heads]
    # Text columns as Python objects, as most DataFrames hold them (a newer pandas would infer its string dtype).
    return pandas.DataFrame({given.get(name, name): pandas.Series(columns[name], dtype=object)
                             if _is_text(columns[name]) else columns[name] for name in order})


def _is_text(values: Any) -> bool:
    array = np.asarray(values, dtype=object)
    return array.size > 0 and all(isinstance(value, str) for value in array)


def _table_column(column: Any, values: np.ndarray) -> np.ndarray:
    """One delivered column as the schema types it: its cells as the CSV writes them (:meth:`Column.format`: clipped
    to the bounds, rounded to its decimals), read back as ``int64`` (a whole-number column), ``float64`` (another
    number), ``bool`` (a category column whose categories are false and true) or text (another category)."""
    cells = [column.format(value) for value in values]
    if column.kind == "categorical":
        return declared_values(column.categories, [column.categories.index(cell) for cell in cells],
                               numbers=False)
    return np.asarray([int(cell) for cell in cells] if column.integer else [float(cell) for cell in cells],
                      dtype=np.int64 if column.integer else np.float64)


def _is_boolean(names: Sequence[str]) -> bool:
    """Whether declared names are exactly false and true (as pcevolve writes a boolean: lower case)."""
    return sorted(str(name) for name in names) == ["false", "true"]


def declared_values(names: Sequence[str], codes: Sequence[int], *, numbers: bool = True) -> np.ndarray:
    """Each code's declared name, typed by the declaration: ``bool`` when the names are false and true, ``int64``
    when every name is a whole number (and ``numbers``), else text (Python strings)."""
    codes = np.asarray(codes, dtype=np.int64)
    if _is_boolean(names):
        return np.asarray([names[k] == "true" for k in codes], dtype=bool)
    if numbers and all(re.fullmatch(r"[+-]?\d+", str(name)) for name in names):
        return np.asarray([int(names[k]) for k in codes], dtype=np.int64)
    return np.asarray([str(names[k]) for k in codes], dtype=object)


def declared_labels(class_names: Sequence[str], labels: np.ndarray) -> np.ndarray:
    """Each image's class as the declared classes give it: as :func:`declared_values`, text as wide as the longest
    declared name (numpy's string arrays, as image labels usually are)."""
    values = declared_values(class_names, labels)
    if values.dtype != object:
        return values
    width = max((len(name) for name in class_names), default=1)
    return values.astype(f"<U{width}")


def _as_arrays(synthetic: LabeledDataset, form: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    images = np.asarray(synthetic.samples, dtype=np.uint8)
    if form["ndim"] == 4 and images.ndim == 3:  # grey as delivered; the input had a channel axis (1 or 3)
        images = np.repeat(images[..., None], form["channels"], axis=3)
    return np.ascontiguousarray(images), declared_labels(synthetic.class_names, synthetic.labels)
