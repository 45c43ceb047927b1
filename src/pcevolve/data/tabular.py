"""Tabular data: a CSV file with a header, one label column and numeric feature columns.

Rows are numbered as a spreadsheet shows them: the header is row 1, the first
record row 2 (for quoted cells spanning lines, the row is the line the record
ends on). Every problem names ``file.csv:row N`` and the column. Labels are
compared as text after stripping spaces (``"1"`` and ``"1.0"`` are different
labels). Blank lines are skipped. The file is read as UTF-8 (a BOM is allowed).
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pcevolve.data.dataset import LabeledDataset
from pcevolve.data.errors import DataError, DataProblem, name_some, raise_if_problems
from pcevolve.data.ordering import natural_key


def _parse_cell(cell: str) -> tuple[float | None, str | None]:
    text = cell.strip()
    if not text:
        return None, "is empty (missing value)"
    try:
        value = float(text)
    except ValueError:
        return None, f"is not a number: {cell!r}"
    if math.isnan(value):
        return None, f"is NaN ({cell!r})"
    if math.isinf(value):
        return None, f"is infinite ({cell!r})"
    return value, None


def read_labeled_csv(
    path: str | Path,
    *,
    label_column: str = "label",
    class_names: Sequence[str] | None = None,
    min_per_class: int = 2,
) -> LabeledDataset:
    """Read a labelled tabular dataset from CSV.

    Args:
        path: The CSV file; the first row is the header.
        label_column: Name of the column holding the class label; every other column is a
            numeric feature.
        class_names: The allowed labels, in label order; a label outside it is a problem.
            ``None``: the labels found, in natural order.
        min_per_class: Fewest rows a class may have.

    Returns:
        A ``"tabular"`` dataset with ``float64`` features; ``sources`` are ``"file.csv:row N"``.

    Raises:
        DataError: Every problem found — missing file or label column, ragged rows, empty,
            non-numeric, NaN or infinite cells (naming row and column), unknown labels, small classes,
            a single class.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError([DataProblem(str(path), "file does not exist")])
    if path.stat().st_size == 0:
        raise DataError([DataProblem(str(path), "empty file (0 bytes)")])
    problems: list[DataProblem] = []
    features: list[list[float]] = []
    label_texts: list[str] = []
    sources: list[str] = []
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle)
            header = [name.strip() for name in next(reader, [])]
            header_problems = _check_header(path, header, label_column)
            if header_problems:
                raise DataError(header_problems)
            label_at = header.index(label_column)
            feature_names = tuple(name for i, name in enumerate(header) if i != label_at)
            for cells in reader:
                if not any(cell.strip() for cell in cells):
                    continue
                where = f"{path}:row {reader.line_num}"
                if len(cells) != len(header):
                    problems.append(DataProblem(where, f"has {len(cells)} fields, the header has {len(header)}"))
                    continue
                label = cells[label_at].strip()
                row: list[float] = []
                bad = False
                if not label:
                    problems.append(DataProblem(where, f"column {label_column!r} (the label) is empty"))
                    bad = True
                for i, cell in enumerate(cells):
                    if i == label_at:
                        continue
                    value, error = _parse_cell(cell)
                    if error is not None:
                        problems.append(DataProblem(where, f"column {header[i]!r} {error}"))
                        bad = True
                    else:
                        row.append(value)  # type: ignore[arg-type]
                if not bad:
                    features.append(row)
                    label_texts.append(label)
                    sources.append(where)
    except UnicodeDecodeError as exc:
        raise DataError([DataProblem(str(path), f"not UTF-8 text: {exc}")]) from None
    except csv.Error as exc:
        raise DataError(problems + [DataProblem(str(path), f"malformed CSV: {exc}")]) from None

    names, labels, label_problems = _resolve_labels(path, label_texts, sources, class_names, min_per_class)
    problems += label_problems
    if len(names) == 1 and not problems:
        problems.append(DataProblem(str(path), f"every row has label {names[0]!r}; a labelled synthetic set needs "
                                               "at least two classes"))
    if not sources and not problems:
        problems.append(DataProblem(str(path), "no data rows"))
    raise_if_problems(problems)
    return LabeledDataset(
        samples=np.asarray(features, dtype=np.float64).reshape(len(features), len(feature_names)),
        labels=labels,
        class_names=names,
        modality="tabular",
        sources=tuple(sources),
        feature_names=feature_names,
    )


def _check_header(path: Path, header: list[str], label_column: str) -> list[DataProblem]:
    where = f"{path}:row 1"
    if not header:
        return [DataProblem(where, "no header row")]
    problems = [DataProblem(where, f"column {i + 1} has no name") for i, name in enumerate(header) if not name]
    duplicated = sorted(name for name, count in Counter(header).items() if name and count > 1)
    problems += [DataProblem(where, f"column name {name!r} appears more than once") for name in duplicated]
    if label_column not in header:
        problems.append(DataProblem(where, f"no label column {label_column!r}; columns are {header}"))
    elif len(header) < 2:
        problems.append(DataProblem(where, "no feature columns besides the label"))
    return problems


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
        names = tuple(str(name) for name in class_names)
        if len(set(names)) != len(names):
            raise ValueError(f"class_names must be unique, got {names}")
    index = {name: i for i, name in enumerate(names)}
    labels = np.full(len(label_texts), -1, dtype=np.int64)
    for row, (text, where) in enumerate(zip(label_texts, sources)):
        if text in index:
            labels[row] = index[text]
        else:
            problems.append(DataProblem(where, f"unknown label {text!r}; declared classes are {list(names)}"))
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
