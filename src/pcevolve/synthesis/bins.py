"""How each column of a declared schema is cut into bins: the cells a table without a public pool is released in.

Every edge here is a function of the schema (its bounds, its integer flag, its categories) and, for
:func:`quantile_bins`, of a DP-released histogram: never of the private rows themselves. A categorical column has
one bin per declared category; a numeric column's bins cover its declared bounds, and a value is placed in a bin
and back (:meth:`ColumnBins.value`) at a position inside it, so that a delivered number is a number of the column's
own kind (a whole number for an integer column, within the bounds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pcevolve.data.table_schema import Column


@dataclass(frozen=True)
class ColumnBins:
    """The bins of one column.

    Attributes:
        column: The declared column.
        edges: A numeric column's bin edges (B + 1, ascending, over its bounds); an integer column's bin b holds the
            whole numbers in [edges[b], edges[b + 1]). None for a categorical column (one bin per category).
        fine_edges, fine_weights: A finer grid inside the bins and its (released, post-processed) weights: the shape
            a delivered value follows inside its bin. None: uniform inside each bin.
    """

    column: Column
    edges: np.ndarray | None = None
    fine_edges: np.ndarray | None = None
    fine_weights: np.ndarray | None = None

    @property
    def size(self) -> int:
        """B, the number of bins."""
        if self.edges is None:
            return len(self.column.categories)
        return len(self.edges) - 1

    def index(self, values: np.ndarray) -> np.ndarray:
        """The bin of each stored value (a category index, or a number clipped to the bounds)."""
        values = np.asarray(values, dtype=np.float64)
        if self.edges is None:
            return np.clip(np.rint(values), 0, self.size - 1).astype(np.int64)
        return np.clip(np.searchsorted(self.edges, values, side="right") - 1, 0, self.size - 1).astype(np.int64)

    def value(self, bins: np.ndarray, position: np.ndarray) -> np.ndarray:
        """A stored value in each bin of ``bins`` at ``position`` ∈ [0, 1) through it: the category itself, or a
        number following the fine shape inside the bin (uniform without one), whole for an integer column."""
        bins = np.asarray(bins, dtype=np.int64)
        if self.edges is None:
            return bins.astype(np.float64)
        position = np.clip(np.asarray(position, dtype=np.float64), 0.0, 1.0 - 1e-12)
        values = np.empty(len(bins))
        for b in np.unique(bins):
            rows = bins == b
            values[rows] = self._inside(int(b), position[rows])
        if self.column.integer:
            values = np.floor(values)
        return np.clip(values, self.column.low, self.column.high)

    def _inside(self, b: int, position: np.ndarray) -> np.ndarray:
        assert self.edges is not None
        low, high = self.edges[b], self.edges[b + 1]
        if self.fine_edges is None or self.fine_weights is None:
            return low + position * (high - low)
        cells = np.flatnonzero((self.fine_edges[:-1] >= low - 1e-9) & (self.fine_edges[1:] <= high + 1e-9))
        weights = self.fine_weights[cells] if len(cells) else np.zeros(0)
        if len(cells) <= 1 or weights.sum() <= 0:
            return low + position * (high - low)
        cdf = np.concatenate([[0.0], np.cumsum(weights) / weights.sum()])
        k = np.clip(np.searchsorted(cdf, position, side="right") - 1, 0, len(cells) - 1)
        within = (position - cdf[k]) / np.maximum(cdf[k + 1] - cdf[k], 1e-12)
        start, end = self.fine_edges[cells[k]], self.fine_edges[cells[k] + 1]
        return start + within * (end - start)


def integer_grid(column: Column) -> np.ndarray:
    """Edges of one cell per whole number in an integer column's bounds: [v, v + 1) for v = low … high."""
    return np.arange(math.ceil(column.low), math.floor(column.high) + 2, dtype=np.float64)


def width_bins(column: Column, bins: int) -> ColumnBins:
    """At most ``bins`` equal-width bins over the column's bounds; an integer column with that few values gets one
    bin per value, one with more integer-aligned bins. A categorical column: one bin per category."""
    if column.kind == "categorical":
        return ColumnBins(column)
    return ColumnBins(column, grid(column, bins))


def grid(column: Column, cells: int) -> np.ndarray:
    """At most ``cells`` equal cells over a numeric column's bounds (integer-aligned for an integer column, one per
    value when they fit): edges from the schema alone."""
    if column.integer:
        whole = integer_grid(column)
        if len(whole) - 1 <= cells:
            return whole
        return np.unique(np.round(np.linspace(whole[0], whole[-1], cells + 1)))
    if column.high <= column.low:
        return np.array([column.low, column.low + 1.0])
    return np.linspace(column.low, column.high, cells + 1)


def quantile_bins(column: Column, fine: np.ndarray, weights: np.ndarray, bins: int) -> ColumnBins:
    """At most ``bins`` bins whose edges lie on the fine grid ``fine`` at the quantiles of ``weights`` (a released,
    post-processed histogram over it: post-processing only), keeping the weights as the shape inside each bin.
    Without any weight, ``bins`` equal bins of the grid."""
    total = float(np.sum(weights))
    if total <= 0:
        cut = np.unique(np.round(np.linspace(0, len(fine) - 1, bins + 1)).astype(int))
        return ColumnBins(column, fine[cut])
    cdf = np.cumsum(weights) / total
    cuts = [int(np.searchsorted(cdf, q, side="left")) + 1 for q in np.arange(1, bins) / bins]
    cut = np.unique(np.clip([0, *cuts, len(fine) - 1], 0, len(fine) - 1))
    return ColumnBins(column, fine[cut], fine_edges=fine, fine_weights=np.asarray(weights, dtype=np.float64))


def fixed_by_schema(column: Column, bins: int) -> bool:
    """Whether the schema alone already fixes the column's bins: a category, or an integer column with at most
    ``bins`` values (one bin each). Only the other numeric columns have bins worth placing by a release."""
    return column.kind == "categorical" or (column.integer and len(integer_grid(column)) - 1 <= bins)
