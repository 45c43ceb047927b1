"""The data of ``bench/tabular_peers.py``: the prepared table (schema, private and public rows) and how the
smartnoise peers code each column as integers, from public information only (see that bench's docstring).

pcevolve is imported inside the functions that use it: a bench's ``--help`` answers at once.
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from pcevolve.data.table_schema import Column, TableSchema


# ----------------------------------------------------------------------------------------------------------- binning
@dataclass(frozen=True)
class ColumnCode:
    """How one feature column becomes an integer code and back, from public information only."""

    column: Column
    cardinality: int
    #: numeric quantile bins: edges (cardinality + 1), bin i = (edges[i], edges[i+1]] (bin 0 includes edges[0])
    edges: np.ndarray | None = None
    #: numeric quantile bins: the sorted public values in each bin (for ``--decode public``)
    public_values: tuple[np.ndarray, ...] = ()
    #: integer column coded one bin per value: the value of code 0
    offset: float | None = None

    @property
    def how(self) -> str:
        if self.column.kind == "categorical":
            return f"{self.cardinality} schema categories"
        if self.offset is not None:
            return f"{self.cardinality} integer values {self.offset:g}..{self.offset + self.cardinality - 1:g}"
        return f"{self.cardinality} public quantile bins"

    def encode(self, values: np.ndarray) -> np.ndarray:
        if self.column.kind == "categorical":
            return values.round().astype(np.int64)
        values = np.clip(values, self.column.low, self.column.high)
        if self.offset is not None:
            return np.clip(np.round(values - self.offset), 0, self.cardinality - 1).astype(np.int64)
        return np.clip(np.searchsorted(self.edges[1:-1], values, side="left"), 0,
                       self.cardinality - 1).astype(np.int64)

    def decode(self, codes: np.ndarray, rng: np.random.Generator, how: str) -> np.ndarray:
        codes = np.asarray(codes, dtype=np.int64)
        if self.column.kind == "categorical":
            return codes.astype(np.float64)
        if self.offset is not None:
            return codes + self.offset
        out = np.empty(len(codes), dtype=np.float64)
        for code in np.unique(codes):
            at = codes == code
            pool = self.public_values[code]
            if how == "public" and len(pool):
                out[at] = rng.choice(pool, at.sum())
            else:
                low, high = self.edges[code], self.edges[code + 1]
                out[at] = rng.uniform(low, high, at.sum())
        return out


def column_codes(schema: TableSchema, public: np.ndarray, max_bins: int) -> list[ColumnCode]:
    """One :class:`ColumnCode` per schema column, built from the schema and the public table only."""
    codes = []
    for j, column in enumerate(schema.columns):
        if column.kind == "categorical":
            codes.append(ColumnCode(column, len(column.categories)))
            continue
        span = column.high - column.low
        if column.integer and float(column.low).is_integer() and span + 1 <= max_bins:
            codes.append(ColumnCode(column, int(span) + 1, offset=float(column.low)))
            continue
        values = np.sort(np.clip(public[:, j], column.low, column.high))
        # Values lie on the schema's grid (whole numbers, or ``decimals``): an edge half a step above a quantile
        # keeps a value that many public rows share (0 in a count column) in a bin of its own.
        half = 0.5 if column.integer else 0.5 * 10.0 ** -column.decimals
        inner = np.unique(np.quantile(values, np.linspace(0.0, 1.0, max_bins + 1))[1:-1]) + half
        inner = inner[(inner > column.low) & (inner < column.high)]
        edges = np.concatenate([[column.low], inner, [column.high]])
        if len(edges) < 2:  # a constant column (low == high)
            edges = np.array([column.low, column.high])
        card = len(edges) - 1
        which = np.clip(np.searchsorted(edges[1:-1], values, side="left"), 0, card - 1)
        pools = tuple(values[which == i] for i in range(card))
        codes.append(ColumnCode(column, card, edges=edges, public_values=pools))
    return codes


# ---------------------------------------------------------------------------------------------------------- the data
@dataclass
class Table:
    """The benchmark's data: schema, private rows and labels, public rows, and the column codes."""

    folder: Path
    schema: TableSchema
    private_x: np.ndarray
    private_y: np.ndarray
    class_names: tuple[str, ...]
    public_x: np.ndarray
    codes: list[ColumnCode]
    _fingerprint: str | None = None

    @property
    def private_csv(self) -> Path:
        return self.folder / "private.csv"

    @property
    def public_csv(self) -> Path:
        return self.folder / "public.csv"

    @property
    def test_csv(self) -> Path:
        return self.folder / "test.csv"

    @property
    def schema_file(self) -> Path:
        return self.folder / "schema.yaml"

    def fingerprint(self) -> str:
        """SHA-256 of the four files: a finished synthesis is reused only for the same data."""
        if self._fingerprint is None:
            digest = hashlib.sha256()
            for path in (self.private_csv, self.public_csv, self.test_csv, self.schema_file):
                digest.update(path.read_bytes())
            self._fingerprint = digest.hexdigest()
        return self._fingerprint


def load_table(folder: Path, max_bins: int) -> Table:
    """The bench's data in ``folder`` (private, public and test CSVs and ``schema.yaml``) and the peers' codes."""
    from pcevolve.data.table_schema import TableSchema
    from pcevolve.data.tabular import read_labeled_table, read_unlabeled_table

    schema = TableSchema.load(folder / "schema.yaml")
    private = read_labeled_table(folder / "private.csv", schema)
    public = read_unlabeled_table(folder / "public.csv", schema)
    return Table(folder, schema, np.asarray(private.samples, dtype=np.float64), np.asarray(private.labels),
                 tuple(private.class_names), np.asarray(public.samples, dtype=np.float64),
                 column_codes(schema, np.asarray(public.samples), max_bins))


def write_table_csv(path: Path, schema: TableSchema, x: np.ndarray, labels: list[str]) -> None:
    """A CSV with exactly the schema's columns (its formatting) and the label column."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*schema.names, schema.label_column])
        for row, label in zip(x, labels):
            writer.writerow([column.format(value) for column, value in zip(schema.columns, row)] + [label])
