"""A table or texts held in memory (a pandas DataFrame or a list of dicts) as rows, and the checks made on them before
anything is written: column names, values no cell may hold, missing cells, labels outside the declared classes.
Every problem names the argument, the column and the row index the user holds."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pcevolve.data.dataset import ClassLabel, label_text
from pcevolve.data.errors import DataError, DataProblem

@dataclass(frozen=True)
class Records:
    """A table or texts as given: column names in order (their text forms, as the written file heads them), each
    row's cells, each row's index (a DataFrame's index label, or the position in a list of dicts), and the column
    names as given (text or whole numbers), which the synthetic set comes back under."""

    columns: tuple[str, ...]
    rows: list[dict[str, Any]]
    index: list[Any]
    given: tuple[str | int, ...] = ()


def is_frame(value: object) -> bool:
    return type(value).__module__.startswith("pandas") and hasattr(value, "columns") and hasattr(value, "to_dict")


def records_from(value: object, argument: str) -> Records:
    """The rows of a pandas DataFrame or a list of dicts.

    Raises:
        TypeError: ``value`` is neither (naming ``argument``).
        DataError: A column name that is neither text nor a whole number (a MultiIndex's tuples, a float), or two
            names with one text form (``1`` and ``"1"``): one line naming them.
    """
    if is_frame(value):
        frame: Any = value
        given = list(frame.columns)
        cells = list(frame.itertuples(index=False, name=None))
        index = list(frame.index)
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and all(
            isinstance(row, Mapping) for row in value):
        given = list(dict.fromkeys(key for row in value for key in row))
        cells = [tuple(row.get(key, _ABSENT) for key in given) for row in value]
        index = list(range(len(cells)))
    else:
        raise TypeError(f"{argument} must be a file or folder path, a pandas DataFrame or a list of dicts for this "
                        f"modality; got {type(value).__name__}")
    names = tuple(_column_name(name) for name in given)
    bad = [repr(name) for name, plain in zip(given, names) if plain is None or not str(plain).strip()]
    if bad:
        raise DataError([DataProblem(argument, f"column names must be text or whole numbers, not blank; found "
                                               f"{', '.join(bad[:5])}{' …' if len(bad) > 5 else ''}: rename them (a "
                                               "MultiIndex: join its levels, e.g. '_'.join(map(str, name)))")])
    columns = tuple(str(name) for name in names)
    heads = [column.strip() for column in columns]  # a file's header is read without surrounding spaces
    twice = sorted({head for head in heads if heads.count(head) > 1})
    if twice:
        raise DataError([DataProblem(argument, f"two columns are named {', '.join(map(repr, twice))} (as text, "
                                               "without surrounding spaces): rename one")])
    rows = [{name: cell for name, cell in zip(columns, row, strict=True) if cell is not _ABSENT} for row in cells]
    return Records(columns, rows, index, names)


#: A key a dict row lacks (a list of dicts need not give every row every key).
_ABSENT = object()


def _column_name(name: Any) -> str | int | None:
    """A column name as text or a whole number (numpy's as Python's), or None for any other kind."""
    name = plain(name)
    if isinstance(name, str):
        return name
    if isinstance(name, int) and not isinstance(name, bool):
        return name
    return None


def plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (JSON and the CSV writer know only those)."""
    return value.item() if isinstance(value, np.generic) else value


def is_missing(value: Any) -> bool:
    """None, NaN, NaT or pandas' NA (whose comparison cannot be made true or false)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except (TypeError, ValueError):
        return True


def _where(argument: str, column: str, index: Any) -> str:
    return f"{argument}: column {column!r}, row index {index!r}"


def check_columns(records: Records, argument: str, needed: Mapping[str, str], refused: Mapping[str, str],
                   ) -> list[DataProblem]:
    """Problems of columns that must be there (``needed``: column → the setting naming it) or must not be."""
    if not records.rows:  # a frame with its columns but no rows is no data at all
        return [DataProblem(argument, f"has no rows (columns {list(records.columns)})")]
    problems = [DataProblem(argument, f"no column {name!r} (set {setting} to the column holding it); columns are "
                                      f"{list(records.columns)}") for name, setting in needed.items()
                if name not in records.columns]
    problems += [DataProblem(argument, f"has the column {name!r}; {why}") for name, why in refused.items()
                 if name in records.columns]
    return problems


def check_cells(records: Records, argument: str, columns: Sequence[str]) -> list[DataProblem]:
    """A problem for every missing cell (NaN, None, absent from a dict) of ``columns``."""
    problems = []
    for index, row in zip(records.index, records.rows, strict=True):
        for column in columns:
            if column not in row:
                problems.append(DataProblem(_where(argument, column, index), "missing (the row has no such key)"))
            elif _refused_kind(row[column]) is None and is_missing(row[column]):  # refused kinds: check_kinds
                problems.append(DataProblem(_where(argument, column, index), f"{show_missing(row[column])}; fill "
                                            "or drop the row before fit()"))
    return problems


def check_kinds(records: Records, argument: str, columns: Sequence[str]) -> list[DataProblem]:
    """One problem per column holding values no table or text cell can be (dates, times, complex numbers, bytes,
    containers), naming the first row index and how many rows hold such values."""
    problems = []
    for column in columns:
        found: dict[str, list[Any]] = {}
        for index, row in zip(records.index, records.rows, strict=True):
            kind = _refused_kind(row.get(column))
            if kind is not None:
                found.setdefault(kind, []).append(index)
        for kind, indices in found.items():
            rows = f"row index {indices[0]!r}" + (f" and {len(indices) - 1} more rows" if len(indices) > 1 else "")
            problems.append(DataProblem(f"{argument}: column {column!r}", f"holds {kind} ({rows}); {_REFUSED[kind]}"))
    return problems


#: Values a cell cannot hold, and what to do instead.
_REFUSED = {
    "dates or times": "give them as numbers (e.g. days since a fixed date) or as text before fit()",
    "complex numbers": "give the real and imaginary parts as two columns",
    "bytes": "decode them to text before fit()",
    "containers (lists, dicts, arrays)": "give one value per cell",
}


def _refused_kind(value: Any) -> str | None:
    """The kind of ``value`` when no cell may hold it (a key of :data:`_REFUSED`), else None."""
    if isinstance(value, (_dt.date, _dt.time, _dt.timedelta, np.datetime64, np.timedelta64)):
        return "dates or times"
    if isinstance(value, (complex, np.complexfloating)):
        return "complex numbers"
    if isinstance(value, (bytes, bytearray, np.bytes_)):
        return "bytes"
    if isinstance(value, (list, tuple, dict, set, frozenset, np.ndarray)):
        return "containers (lists, dicts, arrays)"
    return None


def show_missing(value: Any) -> str:
    return "None" if value is None else "NaN" if isinstance(plain(value), float) else str(value)


def check_labels(records: Records, argument: str, column: str,
                  classes: Sequence[ClassLabel] | None) -> list[DataProblem]:
    """A problem for every label outside the declared classes (compared by text form, as the readers do)."""
    if classes is None:
        return []
    known = {label_text(name) for name in classes}
    return [DataProblem(_where(argument, column, index), f"unknown label {plain(row[column])!r}; declared classes "
                                                         f"(data.classes) are {list(classes)}")
            for index, row in zip(records.index, records.rows, strict=True)
            if column in row and _refused_kind(row[column]) is None and not is_missing(row[column])
            and label_text(plain(row[column])) not in known]
