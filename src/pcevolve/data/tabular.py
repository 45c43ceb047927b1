"""Tables: a CSV with a header; the private table has a label column, the public table does not.

Rows are numbered as a spreadsheet shows them: the header is row 1, the first record row 2 (for quoted cells
spanning lines, the row is the line the record ends on). Every problem names ``file.csv:row N`` and the column.
Labels are compared as text after stripping spaces (``"1"`` and ``"1.0"`` are different labels). Blank lines are
skipped. Files are read as UTF-8 (a BOM is allowed). Cells are parsed against a
:class:`~pcevolve.data.table_schema.TableSchema` (from public data); columns may come in any order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.data.dataset import LabeledDataset, UnlabeledSamples, label_text
from pcevolve.data.errors import DataError, DataProblem, name_some, raise_if_problems
from pcevolve.data.ordering import natural_key
from pcevolve.data.table_schema import TableSchema, draft_schema, read_csv_cells


class UnlabeledRows(UnlabeledSamples):
    """The public table: rows without labels, ``float64 (N, F)`` in schema order (see ``table_schema``)."""

    modality = "tabular"

    def _checked(self, samples: Any, sources: Any) -> tuple[np.ndarray, tuple[str, ...]]:
        samples = np.asarray(samples, dtype=np.float64)
        if samples.ndim != 2 or len(samples) != len(sources):
            raise ValueError(f"expected (N, F) rows with N sources, got {samples.shape} and {len(sources)}")
        return samples, sources

    def _layout(self) -> dict[str, Any]:
        return {"n_features": int(self.samples.shape[1])}


def _column_order(path: Path, header: list[str], schema: TableSchema, *, label: bool) -> list[DataProblem]:
    """The problems of ``header`` (of ``path``, a labelled table when ``label``, else a public one) against
    ``schema``: the label column missing (labelled) or present (public), and feature columns that differ.

    Differing columns are one problem naming both sides in the user's terms: the public table the schema was
    drafted from (its ``source`` is a ``.csv``), or the schema file the user gave — only then is a "schema" named.
    """
    where = f"{path}:row 1"
    problems = []
    missing = [name for name in schema.names if name not in header]
    extra = [name for name in header if name not in schema.names and name != schema.label_column]
    if label and schema.label_column not in header:
        if len(extra) == 1 and not missing:  # one column more than the pool: the label column under another name
            return [DataProblem(where, f"no label column {schema.label_column!r}; its one column the public "
                                       f"table lacks is {extra[0]!r}: if that is the label, name it (data.label_column:"
                                       f" {extra[0]}; on the command line --label-column {extra[0]})")]
        problems.append(DataProblem(where, f"no label column {schema.label_column!r}; columns are {header}"))
    if not label and schema.label_column in header:
        problems.append(DataProblem(where, f"has the label column {schema.label_column!r}; the public table must be "
                                           "unlabelled (its labels are never used): remove that column"))
    if not (missing or extra):
        return problems
    source = schema.source or "the table schema"
    from_table = source.lower().endswith(".csv")
    other = f"the public table {source}" if from_table else f"the schema file {source}" if schema.source else source
    lacks = f"lacks column(s) {', '.join(map(repr, missing))} of {other}" if missing else ""
    has = f"has column(s) {', '.join(map(repr, extra))} that {'it' if missing else other} lacks" if extra else ""
    fix = (f"{Path(path).name} and {Path(source).name} need the same columns (the label column "
           f"{schema.label_column!r} aside)" if from_table
           else "a table read against a schema file needs exactly its columns: edit the table or the schema file")
    problems.append(DataProblem(where, f"{' and '.join(part for part in (lacks, has) if part)}; {fix}"))
    return problems


def _parse_rows(path: Path, header: list[str], rows: list[tuple[str, list[str]]],
                schema: TableSchema) -> tuple[list[list[float]], list[str], list[list[str]], list[DataProblem]]:
    positions = [header.index(name) for name in schema.names]
    values, sources, raw, problems = [], [], [], []
    for where, cells in rows:
        row, bad = [], False
        for column, at in zip(schema.columns, positions, strict=True):
            value, error = column.parse(cells[at])
            if error is not None:
                problems.append(DataProblem(where, f"column {column.name!r} {error}",
                                            kind=f"column {column.name!r} {error.kind}"))
                bad = True
            else:
                row.append(value)
        if not bad:
            values.append(row)
            sources.append(where)
            raw.append(cells)
    return values, sources, raw, problems


def read_unlabeled_table(path: str | Path, schema: TableSchema) -> UnlabeledRows:
    """The public table, parsed against ``schema``.

    Raises:
        DataError: Every problem found (missing file, a label column, missing or extra columns, ragged rows,
            empty, non-numeric, NaN or infinite cells, unknown categories — each naming row and column).
    """
    path = Path(path)
    header, rows, ragged = read_csv_cells(path)
    raise_if_problems(_column_order(path, header, schema, label=False))
    values, sources, _, problems = _parse_rows(path, header, rows, schema)
    problems = ragged + problems
    if not rows:
        problems.append(DataProblem(str(path), "no data rows"))
    raise_if_problems(problems)
    return UnlabeledRows(np.asarray(values, dtype=np.float64).reshape(len(values), len(schema.columns)),
                         tuple(sources))


def read_labeled_table(path: str | Path, schema: TableSchema, *, class_names: Sequence[str] | None = None,
                       min_per_class: int = 2) -> LabeledDataset:
    """The private (or test) table, parsed against ``schema``, labels from ``schema.label_column``.

    Returns:
        A ``"tabular"`` dataset: ``float64`` rows in schema order, ``sources`` ``"file.csv:row N"``.

    Raises:
        DataError: Every problem found — as :func:`read_unlabeled_table`, plus a missing label column, empty
            labels, unknown labels (when ``class_names`` is given), classes under ``min_per_class`` rows, a single
            class (when the classes are read from the labels). With declared ``class_names`` and ``min_per_class``
            0 (how a run reads its private table) a table with no data rows is accepted: whether a run proceeds
            must not depend on how many private rows there are.
    """
    path = Path(path)
    header, rows, ragged = read_csv_cells(path)
    raise_if_problems(_column_order(path, header, schema, label=True))
    values, sources, raw, problems = _parse_rows(path, header, rows, schema)
    problems = ragged + problems
    label_at = header.index(schema.label_column)
    keep_values, keep_sources, label_texts = [], [], []
    for row, where, cells in zip(values, sources, raw, strict=True):
        label = cells[label_at].strip()
        if not label:
            problems.append(DataProblem(where, f"column {schema.label_column!r} (the label) is empty"))
            continue
        keep_values.append(row)
        keep_sources.append(where)
        label_texts.append(label)
    names, labels, label_problems = _resolve_labels(path, label_texts, keep_sources, class_names, min_per_class)
    problems += label_problems
    declared = class_names is not None
    if len(names) == 1 and not problems and not declared:
        problems.append(DataProblem(str(path), f"every row has label {names[0]!r}; a labelled synthetic set needs "
                                               "at least two classes: declare the task's classes (data.classes; "
                                               "init: --set data.classes=[a,b]); a class may have no rows"))
    if not rows and not problems and not (declared and min_per_class == 0):
        problems.append(DataProblem(str(path), "no data rows"))
    raise_if_problems(problems)
    return LabeledDataset(
        samples=np.asarray(keep_values, dtype=np.float64).reshape(len(keep_values), len(schema.columns)),
        labels=labels, class_names=names, modality="tabular", sources=tuple(keep_sources),
        feature_names=schema.names)


def read_labeled_csv(path: str | Path, *, label_column: str = "label", class_names: Sequence[str] | None = None,
                     min_per_class: int = 2, schema: TableSchema | None = None) -> LabeledDataset:
    """A labelled CSV read against ``schema``, or (``data check``) against a schema drafted from the file itself.

    A drafted schema makes every all-numeric column numeric and every other column categorical; a run never
    drafts from private data — its schema comes from public data (``data.schema`` or ``data.public``).
    """
    if schema is None:
        header = read_csv_cells(Path(path))[0]
        if label_column not in header:
            raise DataError([DataProblem(f"{path}:row 1", f"no label column {label_column!r}; columns are {header}")])
        schema = draft_schema(path, label_column=label_column)
    return read_labeled_table(path, schema, class_names=class_names, min_per_class=min_per_class)


def _resolve_labels(
    path: Path,
    label_texts: list[str],
    sources: list[str],
    class_names: Sequence[str] | None,
    min_per_class: int,
) -> tuple[tuple[str, ...], np.ndarray, list[DataProblem]]:
    problems: list[DataProblem] = []
    if class_names is None:
        names = tuple(sorted(set(label_texts), key=natural_key))
    else:
        names = tuple(label_text(name) for name in class_names)
        if len(set(names)) != len(names):
            raise ValueError(f"class_names must be unique, got {names}")
    index = {name: i for i, name in enumerate(names)}
    labels = np.full(len(label_texts), -1, dtype=np.int64)
    for row, (text, where) in enumerate(zip(label_texts, sources)):
        if text in index:
            labels[row] = index[text]
        else:
            problems.append(DataProblem(where, f"unknown label {text!r}; declared classes are {list(names)}",
                                        kind=f"a label outside the declared classes {list(names)}"))
    counts = Counter(labels[labels >= 0].tolist())
    for i, name in enumerate(names):
        if counts[i] < min_per_class:
            rows = [where.rsplit(":", 1)[1] for where, label in zip(sources, labels) if label == i]
            found = f" ({name_some(rows, limit=5)})" if rows else ""
            problems.append(
                DataProblem(
                    str(path),
                    f"class {name!r} has only {counts[i]} row(s){found}; at least {min_per_class} are needed",
                )
            )
    if problems:
        labels = np.zeros(0, dtype=np.int64)
    return names, labels, problems
