"""The schema of a table: each column's type, numeric bounds or category set — from public data, never private.

A schema shapes every file a tabular run ships (the delivered CSV has exactly its columns, bounds and categories),
so it must not be learnt from the private rows: it comes from a public table with the same columns (labels absent)
or from a YAML file the user writes (``pcevolve data schema PUBLIC.csv`` drafts one). Private values are checked
against it; a category the schema does not know is an error naming its row and column, a number outside the
bounds is clipped to them when encoded (bounds are public, so clipping is data-independent).

In memory a table row is a ``float64`` vector in schema order: a numeric column holds its value, a categorical
column the index of its category.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml

from pcevolve.data.errors import CellProblem, DataError, DataProblem, not_utf8_problem
from pcevolve.data.ordering import natural_key

ColumnKind = Literal["numeric", "categorical"]


@dataclass(frozen=True)
class Column:
    """One feature column.

    Attributes:
        name: The header name.
        kind: ``"numeric"`` or ``"categorical"``.
        low, high: Bounds of a numeric column (values outside are clipped when encoded).
        integer: A numeric column whose values are whole numbers (written without decimals).
        decimals: Decimals a numeric value is written with (drafted: the most any public cell shows, so a public
            value is written back as exactly the same number, and as the same text when its column's cells all show
            that many).
        categories: The values of a categorical column, in index order.
    """

    name: str
    kind: ColumnKind
    low: float = 0.0
    high: float = 0.0
    integer: bool = False
    decimals: int = 0
    categories: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind == "categorical" and len(self.categories) < 1:
            raise ValueError(f"categorical column {self.name!r} needs at least one category")
        if self.kind == "categorical" and len(set(self.categories)) != len(self.categories):
            raise ValueError(f"categorical column {self.name!r} lists a category twice")
        if self.kind == "numeric" and not (math.isfinite(self.low) and math.isfinite(self.high)
                                           and self.low <= self.high):
            raise ValueError(f"numeric column {self.name!r} needs finite bounds low <= high, got "
                             f"{self.low}, {self.high}")

    def parse(self, cell: str) -> tuple[float | None, CellProblem | None]:
        """The stored value of one cell, or ``(None, what is wrong)``."""
        text = cell.strip()
        if not text:
            return None, CellProblem("is empty (missing value)", "is empty (missing value)")
        if self.kind == "categorical":
            index = self._index.get(text)
            if index is None:
                known = f"(known: {', '.join(self.categories[:8])}{' …' if len(self.categories) > 8 else ''})"
                return None, CellProblem(f"has a category the schema does not list {known}",
                                         f"has category {text!r}, which the schema does not list {known}")
            return float(index), None
        try:
            value = float(text)
        except ValueError:
            return None, CellProblem("is not a number", f"is not a number: {cell!r}")
        if math.isnan(value):
            return None, CellProblem("is NaN", f"is NaN ({cell!r})")
        if math.isinf(value):
            return None, CellProblem("is infinite", f"is infinite ({cell!r})")
        return value, None

    def format(self, value: float) -> str:
        """One stored value as the cell text written to a CSV: a category by name, an integer without decimals, any
        other number clipped to the bounds and written with ``decimals`` decimals.

        Formatting is correctly rounded, so a float read from a cell that shows at most ``decimals`` decimals is
        written as that cell's number exactly (``12.50`` stays ``12.50``; ``1e-10`` becomes ``0.0000000001``), and
        reads back as the same float.
        """
        if self.kind == "categorical":
            return self.categories[int(np.clip(round(value), 0, len(self.categories) - 1))]
        value = float(np.clip(value, self.low, self.high))
        if self.integer:
            return str(round(value))
        return f"{value:.{self.decimals}f}"

    @property
    def _index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.categories)}

    def to_json(self) -> dict[str, Any]:
        if self.kind == "categorical":
            return {"name": self.name, "kind": self.kind, "categories": list(self.categories)}
        return {"name": self.name, "kind": self.kind, "low": self.low, "high": self.high, "integer": self.integer,
                "decimals": self.decimals}


@dataclass(frozen=True)
class TableSchema:
    """The feature columns of a table, in order, and the name of its label column.

    Attributes:
        columns: The feature columns (the label column is not one of them).
        label_column: The header name of the class label in the private table (absent from public tables).
        source: Where the schema came from (a public table or a schema file), for messages.
    """

    columns: tuple[Column, ...]
    label_column: str = "label"
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        names = [column.name for column in self.columns]
        if not names:
            raise ValueError("a table schema needs at least one feature column")
        if len(set(names)) != len(names):
            raise ValueError("a table schema lists a column twice")
        if self.label_column in names:
            raise ValueError(f"the label column {self.label_column!r} cannot also be a feature column")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    def to_json(self) -> dict[str, Any]:
        return {"label_column": self.label_column, "columns": [column.to_json() for column in self.columns]}

    @classmethod
    def from_json(cls, data: dict[str, Any], *, source: str = "") -> TableSchema:
        try:
            columns = tuple(Column(**{**c, "categories": tuple(str(v) for v in c.get("categories", ()))})
                            for c in data["columns"])
            return cls(columns=columns, label_column=str(data.get("label_column", "label")), source=source)
        except (KeyError, TypeError, ValueError) as error:
            raise DataError([DataProblem(source or "schema", f"not a valid table schema: {error}")]) from None

    def text(self, *, note: str | None = None) -> str:
        """The schema as YAML, under a comment saying where it comes from (``note``, one comment line per line;
        default: public data only)."""
        header = (note or "Table schema for pcevolve: column types, numeric bounds and category sets, from public "
                          "data only.").splitlines()
        return "".join(f"# {line}\n" for line in header) + yaml.safe_dump(self.to_json(), sort_keys=False)

    def save(self, path: str | Path, *, note: str | None = None) -> Path:
        """Write :meth:`text` to ``path``."""
        path = Path(path)
        path.write_text(self.text(note=note), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> TableSchema:
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as error:
            raise DataError([DataProblem(str(path), f"cannot read the schema: {error}")]) from None
        if not isinstance(data, dict):
            raise DataError([DataProblem(str(path), "not a table schema (expected a mapping with 'columns')")])
        return cls.from_json(data, source=str(path))


def _decimals(texts: Iterable[str]) -> int:
    """The most decimals any of the numeric cell texts shows, without a cap: ``2.50`` shows 2, ``1e-10`` 10,
    ``1.5e20`` none. Written with that many decimals, a float read from any of them is that cell's number exactly,
    so the delivered table can write public values without losing a digit."""
    most = 0
    for text in texts:
        try:
            exponent = Decimal(text.strip()).as_tuple().exponent
        except InvalidOperation:  # not a number the way Decimal reads it: float() read it, so it shows no decimals
            continue
        if isinstance(exponent, int):  # NaN and infinities have a letter for exponent
            most = max(most, -exponent)
    return most


def draft_column(name: str, texts: Sequence[str]) -> Column:
    """A column's schema from its public cell texts.

    Numeric if at least half the cells are finite numbers (the others, NaN or words, are then reported as errors
    when the table is read against the schema), else categorical with every distinct text as a category.
    """
    values, numeric = [], []
    for text in texts:
        try:
            value = float(text)
        except ValueError:
            continue
        if math.isfinite(value):
            values.append(value)
            numeric.append(text)
    if values and 2 * len(values) >= len(texts):
        integer = all(float(v).is_integer() for v in values)
        return Column(name, "numeric", low=min(values), high=max(values), integer=integer,
                      decimals=0 if integer else _decimals(numeric))
    return Column(name, "categorical", categories=tuple(sorted(set(texts), key=natural_key)))


def draft_schema(path: str | Path, *, label_column: str = "label", exclude_label: bool = True) -> TableSchema:
    """Draft a schema from a public CSV (types, bounds and categories as the public table shows them).

    Args:
        path: The public table; the first row is the header.
        label_column: The label column's name in the private table. If the public table has it, it is left out
            of the schema when ``exclude_label`` (its values are never read).

    Raises:
        DataError: The file is missing, empty, not UTF-8 or malformed, or has empty cells (naming row and column).
    """
    path = Path(path)
    header, rows, _ = read_csv_cells(path)  # ragged rows and empty cells are reported when the table is read
    names = [name for name in header if not (exclude_label and name == label_column)]
    if not names:
        raise DataError([DataProblem(f"{path}:row 1", "no feature columns besides the label")])
    if not rows:
        raise DataError([DataProblem(str(path), "no data rows")])
    columns = tuple(draft_column(name, [text for _, cells in rows if (text := cells[i].strip())] or [""])
                    for i, name in enumerate(header) if name in names)
    return TableSchema(columns=columns, label_column=label_column, source=str(path))


def round_outward(low: float, high: float) -> tuple[float, float]:
    """Bounds widened to round numbers: each rounded outward to a multiple of the power of ten of the larger
    magnitude (895.44 … 23587.33 → 0 … 30000; 6.4 … 19.8 → 0 … 20; 18 … 75 → 10 … 80), never below 0 if ``low`` is
    not. What a domain expert would state, rather than the exact extremes of the rows they came from."""
    largest = max(abs(low), abs(high), 1e-12)
    unit = 10.0 ** math.floor(math.log10(largest))
    wide_low, wide_high = math.floor(low / unit) * unit, math.ceil(high / unit) * unit
    if wide_high <= wide_low:
        wide_high = wide_low + unit
    return (max(wide_low, 0.0) if low >= 0 else wide_low), wide_high


def widened(schema: TableSchema) -> TableSchema:
    """``schema`` with every numeric column's bounds widened to round numbers (:func:`round_outward`)."""
    columns = tuple(replace(column, low=bounds[0], high=bounds[1]) if column.kind == "numeric"
                    and (bounds := round_outward(column.low, column.high)) else column for column in schema.columns)
    return replace(schema, columns=columns)


def merge_schemas(schemas: Sequence[TableSchema]) -> TableSchema:
    """One schema covering several drafted from tables with the same columns: numeric bounds widened, category
    lists joined (in natural order), so that the same cell is stored the same way in every table.

    Raises:
        DataError: The tables' columns differ, or a column is numeric in one and categorical in another.
    """
    first = schemas[0]
    columns = []
    for column in first.columns:
        others = [next((c for c in schema.columns if c.name == column.name), None) for schema in schemas[1:]]
        if any(other is None for other in others):
            raise DataError([DataProblem(first.source, f"column {column.name!r} is missing from another table")])
        group = [column, *others]
        if len({c.kind for c in group}) > 1:
            raise DataError([DataProblem(first.source, f"column {column.name!r} is numeric in one table and "
                                                       "categorical in another")])
        if column.kind == "numeric":
            columns.append(Column(column.name, "numeric", low=min(c.low for c in group),
                                  high=max(c.high for c in group), integer=all(c.integer for c in group),
                                  decimals=max(c.decimals for c in group)))
        else:
            categories = sorted({value for c in group for value in c.categories}, key=natural_key)
            columns.append(Column(column.name, "categorical", categories=tuple(categories)))
    return TableSchema(columns=tuple(columns), label_column=first.label_column, source=first.source)


_SEPARATORS = {";": "semicolons (;)", "\t": "tabs", "|": "vertical bars (|)"}


def _other_separator(header: list[str]) -> str | None:
    """How the columns are separated when a header read as one column holds another separator (a table needs at
    least a feature and a label, so one column is never meant), else ``None``."""
    if len(header) != 1:
        return None
    found = [name for mark, name in _SEPARATORS.items() if mark in header[0]]
    return found[0] if found else None


def read_csv_cells(path: Path) -> tuple[list[str], list[tuple[str, list[str]]], list[DataProblem]]:
    """The header, the data rows (``("file.csv:row N", cells)``) and the rows' problems; blank lines skipped.

    Rows are numbered as a spreadsheet shows them: the header is row 1. A row whose field count differs from the
    header's is left out and reported among the problems. A missing, empty, non-UTF-8 or malformed file and a
    header with an empty or repeated name raise :class:`DataError` at once.
    """
    if not path.is_file():
        raise DataError([DataProblem(str(path), "file does not exist")])
    if path.stat().st_size == 0:
        raise DataError([DataProblem(str(path), "empty file (0 bytes)")])
    problems: list[DataProblem] = []
    rows: list[tuple[str, list[str]]] = []
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle)
            header = [name.strip() for name in next(reader, [])]
            if not header:
                raise DataError([DataProblem(f"{path}:row 1", "no header row")])
            separator = _other_separator(header)
            if separator is not None:
                raise DataError([DataProblem(f"{path}:row 1", f"the columns seem to be separated by {separator}, "
                                             "not commas; save the table as CSV with commas between the columns and "
                                             "'.' as the decimal point")])
            problems += [DataProblem(f"{path}:row 1", f"column {i + 1} has no name")
                         for i, name in enumerate(header) if not name]
            seen: set[str] = set()
            for name in header:
                if name and name in seen:
                    problems.append(DataProblem(f"{path}:row 1", f"column name {name!r} appears more than once"))
                seen.add(name)
            if problems:
                raise DataError(problems)
            for cells in reader:
                if not any(cell.strip() for cell in cells):
                    continue
                where = f"{path}:row {reader.line_num}"
                if len(cells) != len(header):
                    problems.append(DataProblem(where, f"has {len(cells)} fields, the header has {len(header)}",
                                                kind=f"a row without the header's {len(header)} fields"))
                    continue
                rows.append((where, cells))
    except UnicodeDecodeError:
        raise DataError([not_utf8_problem(path, unit="row")]) from None
    except csv.Error as exc:
        raise DataError(problems + [DataProblem(str(path), f"malformed CSV: {exc}")]) from None
    return header, rows, problems
