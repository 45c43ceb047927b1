"""The fidelity judges of a synthetic table: per-column marginals and pairwise correlations, against the test table.

Per column (:func:`column_fidelity`), the total-variation distance ``½ Σ |p − q|`` between the synthetic and the test
marginal: categorical columns by category, numeric ones on :data:`TVD_BINS` quantile bins of a reference (the public
table if given, else the test set; a numeric column with at most that many distinct reference values is compared
value by value instead, so that point masses — counts, flags — are not smeared over one bin). The pairwise
association (:func:`correlation_difference`) is the Pearson correlation matrix in the *numeric + one-hot* space
(numeric values as they are, one 0/1 column per category); the judge is the mean absolute difference of the
synthetic and the test matrix over every pair of encoded columns that belong to two different table columns (pairs
inside one categorical column's one-hot block only restate its marginal). A column that is constant in a set has
correlation 0 with everything in that set. The same distances for the private rows are a reference computed on
private data: shared rounded by :func:`~pcevolve.evaluation.shipped.shared_distance`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pcevolve.data.table_schema import Column, TableSchema
from pcevolve.evaluation.shipped import shared_distance
from pcevolve.evaluation.table_encoding import _rows, encoded_names, one_hot

#: Quantile bins of a numeric column's marginal.
TVD_BINS = 20


@dataclass(frozen=True)
class Binning:
    """How one column's values are grouped into the cells of its marginal.

    Exactly one of ``values`` and ``edges`` is set: ``values`` (sorted) puts each listed value in its own cell and
    everything else in one last cell; ``edges`` (sorted, interior) makes the cells ``(-inf, e0)``, ``[e0, e1)``, …,
    ``[e_last, inf)``.
    """

    values: np.ndarray | None = None
    edges: np.ndarray | None = None
    basis: str = ""

    @property
    def cells(self) -> int:
        return len(self.values) + 1 if self.values is not None else len(self.edges) + 1  # type: ignore[arg-type]

    def codes(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if self.values is not None:
            at = np.searchsorted(self.values, x)
            found = (at < len(self.values)) & (self.values[np.minimum(at, len(self.values) - 1)] == x)
            return np.where(found, at, len(self.values))
        assert self.edges is not None
        return np.searchsorted(self.edges, x, side="right")

    def histogram(self, x: np.ndarray) -> np.ndarray:
        """The share of ``x`` in each cell (sums to 1)."""
        counts = np.bincount(self.codes(x), minlength=self.cells).astype(np.float64)
        return counts / max(len(x), 1)


def column_binning(column: Column, reference: np.ndarray, *, bins: int = TVD_BINS, basis: str = "") -> Binning:
    """The cells of a column's marginal: its categories, its distinct reference values (at most ``bins`` of them),
    or ``bins`` quantile intervals of ``reference`` (fewer where quantiles coincide)."""
    if column.kind == "categorical":
        return Binning(values=np.arange(len(column.categories), dtype=np.float64), basis="categories")
    ref = np.asarray(reference, dtype=np.float64)
    distinct = np.unique(ref)
    if len(distinct) <= bins:
        return Binning(values=distinct, basis=f"distinct {basis} values")
    edges = np.unique(np.quantile(ref, np.linspace(0.0, 1.0, bins + 1)[1:-1]))
    return Binning(edges=edges, basis=f"{basis} quantiles")


def total_variation(a: np.ndarray, b: np.ndarray, binning: Binning) -> float:
    """``½ Σ_cells |share of a − share of b|``: 0 for equal marginals, 1 for disjoint ones."""
    return 0.5 * float(np.abs(binning.histogram(a) - binning.histogram(b)).sum())


@dataclass(frozen=True)
class ColumnFidelity:
    """One column's marginal, synthetic vs test.

    Attributes:
        name, kind: The column.
        cells: Cells of the marginal.
        basis: What the cells are ("categories", "public quantiles", "distinct test values" …).
        tvd: Total-variation distance synthetic → test.
        tvd_real: The same for the private rows → test (how close real data gets; None without private rows).
    """

    name: str
    kind: str
    cells: int
    basis: str
    tvd: float
    tvd_real: float | None = None

    def to_json(self) -> dict[str, Any]:
        """Shareable: the private rows' distance rounded by :func:`~pcevolve.evaluation.shipped.shared_distance` (its
        shares have the private row count as denominator); ``tvd_real`` holds it exactly."""
        return {"column": self.name, "kind": self.kind, "cells": self.cells, "basis": self.basis, "tvd": self.tvd,
                "tvd_real_reference": shared_distance(self.tvd_real)}


def column_fidelity(synthetic: np.ndarray, test: np.ndarray, schema: TableSchema, *,
                    private: np.ndarray | None = None, public: np.ndarray | None = None,
                    bins: int = TVD_BINS) -> list[ColumnFidelity]:
    """Per-column TVD of the synthetic (and, given, the private) rows to the test rows; numeric cells on ``public``
    quantiles when given (data nobody is judged on), else on the test set's."""
    synthetic, test = _rows(synthetic, schema), _rows(test, schema)
    reference, basis = (test, "test") if public is None else (_rows(public, schema), "public")
    out = []
    for j, column in enumerate(schema.columns):
        binning = column_binning(column, reference[:, j], bins=bins, basis=basis)
        real = None if private is None else total_variation(_rows(private, schema)[:, j], test[:, j], binning)
        out.append(ColumnFidelity(column.name, column.kind, binning.cells, binning.basis,
                                  total_variation(synthetic[:, j], test[:, j], binning), real))
    return out


def correlation_matrix(rows: np.ndarray, schema: TableSchema) -> np.ndarray:
    """Pearson correlations of the :func:`one_hot` columns; a constant column correlates 0 with every other."""
    x = one_hot(rows, schema)
    centred = x - x.mean(0)
    sd = centred.std(0)
    z = np.divide(centred, sd, out=np.zeros_like(centred), where=sd > 0)
    corr = z.T @ z / max(len(x), 1)
    np.fill_diagonal(corr, 1.0)
    return np.clip(corr, -1.0, 1.0)


@dataclass(frozen=True)
class CorrelationDifference:
    """Mean (and largest) absolute difference of two correlation matrices over the pairs of different columns.

    ``mean`` and ``largest`` are None when the table has no such pair (one column); ``pair`` names the two encoded
    columns of the largest difference.
    """

    mean: float | None
    largest: float | None
    pair: tuple[str, str] | None
    pairs: int

    def to_json(self) -> dict[str, Any]:
        return {"mean_abs_difference": self.mean, "largest_abs_difference": self.largest,
                "largest_pair": None if self.pair is None else list(self.pair), "pairs": self.pairs,
                "method": "Pearson correlation of numeric values and one 0/1 column per category"}

    def to_shared_json(self) -> dict[str, Any]:
        """:meth:`to_json` with both differences rounded by :func:`~pcevolve.evaluation.shipped.shared_distance`: for
        a comparison that involves the private rows."""
        out = self.to_json()
        for key in ("mean_abs_difference", "largest_abs_difference"):
            out[key] = shared_distance(out[key])
        return out


def correlation_difference(a: np.ndarray, b: np.ndarray, schema: TableSchema) -> CorrelationDifference:
    """How differently the columns of ``a`` and ``b`` move together (see the module docstring)."""
    names = encoded_names(schema)
    owner = np.array([j for _, j in names])
    upper = np.triu(np.ones((len(names), len(names)), dtype=bool), k=1) & (owner[:, None] != owner[None, :])
    if not upper.any():
        return CorrelationDifference(None, None, None, 0)
    diff = np.abs(correlation_matrix(a, schema) - correlation_matrix(b, schema))[upper]
    i, j = np.argwhere(upper)[int(diff.argmax())]
    return CorrelationDifference(float(diff.mean()), float(diff.max()), (names[i][0], names[j][0]), int(upper.sum()))
