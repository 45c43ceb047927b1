"""What the table and text reports draw as distributions: a few columns of the synthetic rows against the real test
rows (:func:`column_marginals`), and how long the synthetic and the test texts are (:func:`text_lengths`).

Both are computed on synthetic and test samples only — never on private ones — so, like every figure of those
sets, they are drawn as they are. Each returns :class:`~pcevolve.report.figures.Marginal` panels for
:func:`~pcevolve.report.figures.marginals`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pcevolve.data.table_schema import Column, TableSchema
from pcevolve.report.figures import Marginal

#: Columns drawn in a table report: those farthest from the test rows.
MARGINAL_COLUMNS = 6
#: Bins of a numeric column's (or of the text lengths') histogram.
HISTOGRAM_BINS = 30
#: Categories drawn per categorical column (the most common in the test rows; the rest as one "other" bar).
MOST_CATEGORIES = 10
#: A whole-number column with at most this many distinct values is drawn value by value.
DISCRETE_VALUES = 20
#: Share of the test values left out of each end of a histogram's range (counted in its end bins): one extreme
#: value must not squeeze the rest into one bar.
TAIL = 0.005


def farthest_columns(tvd: Sequence[float], most: int = MARGINAL_COLUMNS) -> list[int]:
    """Indices of the ``most`` columns with the largest distance to the test rows, farthest first."""
    return sorted(range(len(tvd)), key=lambda j: (-tvd[j], j))[:most]


def column_marginals(schema: TableSchema, test: np.ndarray, synthetic: np.ndarray, columns: Sequence[int],
                     titles: Sequence[str] | None = None) -> list[Marginal]:
    """The panels of ``columns`` (indices into the schema) of the (N, F) test and synthetic rows."""
    test, synthetic = np.asarray(test, np.float64), np.asarray(synthetic, np.float64)
    return [column_marginal(schema.columns[j], test[:, j], synthetic[:, j],
                            schema.columns[j].name if titles is None else titles[i]) for i, j in enumerate(columns)]


def column_marginal(column: Column, test: np.ndarray, synthetic: np.ndarray, title: str) -> Marginal:
    """One column: categories (the :data:`MOST_CATEGORIES` commonest in the test rows, then "other"), whole
    numbers value by value when there are few, else a histogram over the test rows' range."""
    if column.kind == "categorical":
        return _categories(column, test, synthetic, title)
    values = np.unique(np.concatenate([test, synthetic]))
    if column.integer and len(values) <= DISCRETE_VALUES:
        return Marginal(title, tuple(column.format(v) for v in values), _shares(test, values),
                        _shares(synthetic, values))
    return histogram(test, synthetic, title, xlabel=column.name)


def _shares(x: np.ndarray, values: np.ndarray) -> np.ndarray:
    return np.array([np.mean(x == v) for v in values]) if len(x) else np.zeros(len(values))


def _categories(column: Column, test: np.ndarray, synthetic: np.ndarray, title: str) -> Marginal:
    count = len(column.categories)
    shares = [np.bincount(np.clip(np.rint(x), 0, count - 1).astype(np.int64), minlength=count) / max(len(x), 1)
              for x in (test, synthetic)]
    order = np.argsort(-shares[0], kind="stable")
    kept, rest = order[:MOST_CATEGORIES], order[MOST_CATEGORIES:]
    cells = [column.categories[k] for k in kept]
    test_shares, synthetic_shares = [list(s[kept]) for s in shares]
    if len(rest) and (shares[0][rest].sum() > 0 or shares[1][rest].sum() > 0):
        cells.append(f"other ({len(rest)})")
        test_shares.append(float(shares[0][rest].sum()))
        synthetic_shares.append(float(shares[1][rest].sum()))
    return Marginal(title, tuple(cells), np.array(test_shares), np.array(synthetic_shares))


def histogram(test: np.ndarray, synthetic: np.ndarray, title: str, *, xlabel: str = "",
              bins: int = HISTOGRAM_BINS) -> Marginal:
    """Shares of both sets in ``bins`` equal bins spanning the test values (but their :data:`TAIL` extremes);
    values outside fall in the end bins."""
    test, synthetic = np.asarray(test, np.float64), np.asarray(synthetic, np.float64)
    low, high = (np.quantile(test, [TAIL, 1.0 - TAIL]) if len(test) else (0.0, 1.0))
    if not high > low:
        low, high = float(np.min(test, initial=0.0)), float(np.max(test, initial=1.0))
        high = high if high > low else low + 1.0
    edges = np.linspace(low, high, bins + 1)

    def shares(x: np.ndarray) -> np.ndarray:
        counts, _ = np.histogram(np.clip(x, low, high), edges)
        return counts / max(len(x), 1)

    return Marginal(title, (), shares(test), shares(synthetic), edges=edges, xlabel=xlabel)


def text_lengths(test: Sequence[str], test_labels: np.ndarray, synthetic: Sequence[str], synthetic_labels: np.ndarray,
                 class_names: Sequence[str], *, most: int = MARGINAL_COLUMNS) -> list[Marginal]:
    """Words per text, synthetic against test: all classes, then each class (at most ``most`` panels in all)."""
    def words(texts: Sequence[str]) -> np.ndarray:
        return np.array([len(str(t).split()) for t in texts], dtype=np.float64)

    test_words, synthetic_words = words(test), words(synthetic)
    test_labels, synthetic_labels = np.asarray(test_labels), np.asarray(synthetic_labels)
    panels = [histogram(test_words, synthetic_words, "all classes", xlabel="words per text")]
    for k, name in enumerate(class_names[: most - 1]):
        panels.append(histogram(test_words[test_labels == k], synthetic_words[synthetic_labels == k], str(name),
                                xlabel="words per text"))
    return panels
