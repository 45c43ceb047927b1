"""The judges of a synthetic table: utility, fidelity and privacy against real rows, as pure functions.

Every table here is a ``float64`` (N, F) array in schema order (a numeric value, or a category index), with
``int64`` labels, as :func:`pcevolve.data.tabular.read_labeled_table` returns it. :func:`judge_tables` runs all
three judges and returns a :class:`TableJudgement`; :func:`judge_table_files` does the same from CSV files.

* **Utility** (:func:`utility_lines`) — two fixed recipes, chosen in advance and never tuned on the test set:
  gradient-boosted trees (``HistGradientBoostingClassifier``, library defaults, seeded) and logistic regression
  (L2, C = 1, lbfgs). Both see the same encoding (:func:`model_matrix`): every categorical column one-hot over the
  schema's categories, every numeric column standardised with the mean and standard deviation of *that model's
  training set*. Each is trained on the synthetic set and, as a reference line, on the private rows themselves,
  then tested on the real test set: ROC AUC (two classes: the score of the test set's minority class, named;
  more: the macro one-vs-rest mean), accuracy, macro-F1 and per-class precision, recall and F1.
* **Fidelity** (:func:`column_fidelity`, :func:`correlation_difference`) — per column, the total-variation
  distance ``½ Σ |p − q|`` between the synthetic and the test marginal: categorical columns by category, numeric
  ones on :data:`TVD_BINS` quantile bins of a reference (the public table if given, else the test set; a numeric
  column with at most that many distinct reference values is compared value by value instead, so that point
  masses — counts, flags — are not smeared over one bin). The pairwise association is the Pearson correlation
  matrix in the *numeric + one-hot* space (numeric values as they are, one 0/1 column per category); the judge
  is the mean absolute difference of the synthetic and the test matrix over every pair of encoded columns that
  belong to two different table columns (pairs inside one categorical column's one-hot block only restate its
  marginal). A column that is constant in a set has correlation 0 with everything in that set.
* **Privacy** (:func:`membership_attack`, :func:`exact_copies`) — a distance-to-closest-record membership attack:
  members are private rows, non-members as many test rows (a seeded choice, class by class as far as the test set
  allows, :func:`membership_split`); each is scored by minus its Euclidean distance to the nearest synthetic row in
  the attack space (:func:`attack_space`), so members sitting closer score higher; the result is the attack's ROC
  AUC with a bootstrap interval (:func:`pcevolve.evaluation.attacks.evaluate_attack`). 0.5 means the attacker
  cannot tell members from non-members. Exact copies: synthetic rows equal, in every feature column, to a private
  row — and, as the chance baseline, to a test row (with few coarse columns, equal rows happen by chance).

What is computed on private data (the real reference lines and their per-class figures, the private-vs-test
fidelity reference, the attack and the private copy count) is not covered by the DP guarantee: it is an audit
inside the secure zone. :meth:`TableJudgement.to_json` holds what may leave it, rounded as
:mod:`pcevolve.evaluation.shipped` rounds every modality's private-derived figures — the attack's AUC and success
and the real reference's scores to :data:`AUC_DECIMALS` decimals (an exact AUC is a ratio with denominator
members × non-members, so it can pin down the private set's size), the private-vs-test distances to 3 significant
figures and at most 3 decimals — and only *whether* a private row was copied; :meth:`TableJudgement.to_secure_json`
holds the exact figures.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from pcevolve.data import LabeledDataset
from pcevolve.data.table_schema import Column, TableSchema
from pcevolve.data.tabular import read_labeled_table, read_unlabeled_table
from pcevolve.evaluation.attacks import AttackResult, evaluate_attack, roc_auc
from pcevolve.evaluation.copies import nearest_neighbours
from pcevolve.evaluation.shipped import RATE_DECIMALS, shared_distance, shared_rate

#: The utility models, in report order, with their names in the report.
MODELS: dict[str, str] = {"gbdt": "gradient-boosted trees", "logistic": "logistic regression"}
#: The training sets of the utility models, in report order.
LINES: dict[str, str] = {"synthetic": "synthetic rows (delivered)",
                         "real": "private rows (real reference, not DP)"}
#: Lines trained on the private rows: a reference the user could not publish.
PRIVATE_LINES = frozenset({"real"})
#: Quantile bins of a numeric column's marginal.
TVD_BINS = 20
#: Decimals of the attack AUC (and of every other private-derived rate) in the shareable figures.
AUC_DECIMALS = RATE_DECIMALS
#: Bootstrap resamples of the attack's statistics.
ATTACK_RESAMPLES = 200
#: Logistic regression's fixed recipe.
LOGISTIC_C = 1.0
LOGISTIC_MAX_ITER = 2000
#: BLAS/OpenMP threads while the models fit: on small tables and a shared machine one thread is faster than
#: several waiting for each other (the image evaluation measured the same), and the results do not depend on it.
MODEL_THREADS = 1

#: What a shared report must say about the figures in it that come from the private rows.
PRIVATE_FIGURES_CAVEAT = (
    "Not covered by the differential-privacy guarantee: these figures are computed on the private rows themselves — "
    "the real-reference models (trained on the private rows) and their per-class scores, the private-vs-test "
    "fidelity reference, the membership attack and the check for copied private rows. Read them as an audit of this "
    "run, not as released statistics. They are rounded (scores and AUCs to two decimals, distances to three "
    "decimals at most); the exact figures and counts (private rows, attack members, copied rows) stay in the run's "
    "secure/evaluation.json."
)


# ---------------------------------------------------------------------------------------------------- encoding


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


# ----------------------------------------------------------------------------------------------------- utility


@dataclass(frozen=True)
class ClassScores:
    """One model's scores on the real test set.

    Attributes:
        auc: ROC AUC; None when undefined (a class with no test row, or one class only).
        auc_kind: ``"binary"`` (the score of ``positive_class`` ranks its rows above the others) or
            ``"macro one-vs-rest"`` (the mean over classes of each class's score against the rest).
        positive_class: The class the binary AUC ranks (the test set's minority class); None for more classes.
        accuracy: Fraction of test rows predicted right.
        macro_f1: Mean F1 over the classes.
        precision, recall, f1: Per class (precision 0 for a class never predicted).
        support: Test rows per class.
    """

    auc: float | None
    auc_kind: str
    positive_class: int | None
    accuracy: float
    macro_f1: float
    precision: tuple[float, ...]
    recall: tuple[float, ...]
    f1: tuple[float, ...]
    support: tuple[int, ...]

    def to_json(self, class_names: Sequence[str]) -> dict[str, Any]:
        return {"auc": self.auc, "auc_kind": self.auc_kind,
                "positive_class": None if self.positive_class is None else class_names[self.positive_class],
                "accuracy": self.accuracy, "macro_f1": self.macro_f1,
                "per_class": {name: {"precision": p, "recall": r, "f1": f, "support": s}
                              for name, p, r, f, s in zip(class_names, self.precision, self.recall, self.f1,
                                                          self.support, strict=True)}}


def minority_class(labels: np.ndarray, classes: int) -> int:
    """The class with the fewest rows among those present (the lowest index on a tie)."""
    counts = np.bincount(np.asarray(labels, dtype=np.int64), minlength=classes).astype(np.float64)
    return int(np.where(counts > 0, counts, np.inf).argmin())


def class_scores(y_true: np.ndarray, probabilities: np.ndarray, *, positive_class: int) -> ClassScores:
    """Scores of class probabilities (N, K) against true labels; the prediction is the most probable class.

    Args:
        y_true: (N,) labels in ``[0, K)``.
        probabilities: (N, K) scores per class (rows need not sum to 1).
        positive_class: For K = 2, the class whose score the AUC ranks.
    """
    y = np.asarray(y_true, dtype=np.int64)
    scores = np.asarray(probabilities, dtype=np.float64)
    k = scores.shape[1]
    predicted = scores.argmax(1)
    support = np.bincount(y, minlength=k)
    hits = np.bincount(y[predicted == y], minlength=k).astype(np.float64)
    chosen = np.bincount(predicted, minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = np.where(support > 0, hits / support, 0.0)
        precision = np.where(chosen > 0, hits / chosen, 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)

    def ranked(c: int) -> float | None:
        inside = y == c
        return roc_auc(scores[inside, c], scores[~inside, c]) if inside.any() and (~inside).any() else None

    if k == 2:
        auc, kind, positive = ranked(positive_class), "binary", positive_class
    else:
        each = [ranked(c) for c in range(k)]
        auc = None if any(v is None for v in each) else float(np.mean(each))
        kind, positive = "macro one-vs-rest", None
    return ClassScores(auc=auc, auc_kind=kind, positive_class=positive, accuracy=float((predicted == y).mean()),
                       macro_f1=float(f1.mean()), precision=tuple(map(float, precision)),
                       recall=tuple(map(float, recall)), f1=tuple(map(float, f1)),
                       support=tuple(int(s) for s in support))


def fit_probabilities(model: str, x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, *,
                      classes: int, seed: int) -> np.ndarray:
    """Fit one of :data:`MODELS` and return its (N_test, ``classes``) class probabilities.

    A class absent from the training labels gets probability 0, so the columns always mean the same classes.

    Raises:
        ValueError: Fewer than two classes in the training labels.
    """
    present = np.unique(y_train)
    if len(present) < 2:
        raise ValueError(f"the training set holds {len(present)} class; a classifier needs at least two")
    if model == "gbdt":
        estimator: Any = HistGradientBoostingClassifier(random_state=seed)
    elif model == "logistic":
        estimator = LogisticRegression(C=LOGISTIC_C, max_iter=LOGISTIC_MAX_ITER)
    else:
        raise KeyError(f"unknown model {model!r}; known: {', '.join(MODELS)}")
    with threadpool_limits(MODEL_THREADS):
        estimator.fit(x_train, y_train)
        proba = estimator.predict_proba(x_test)
    out = np.zeros((len(x_test), classes))
    out[:, estimator.classes_.astype(np.int64)] = proba
    return out


@dataclass(frozen=True)
class ModelResult:
    """One model trained on one line (training set) and tested on the real test set.

    Attributes:
        line: The line's key (``"synthetic"``, ``"real"``).
        model: The model's key.
        scores: Its test scores; None when it could not be trained (``error`` says why).
        train_size: Training samples.
        line_label, model_label: Their names in the report.
        error: Why there are no scores.
        seconds: Fit plus prediction time.
    """

    line: str
    model: str
    scores: ClassScores | None
    train_size: int
    line_label: str = ""
    model_label: str = ""
    error: str | None = None
    seconds: float = 0.0

    def to_json(self, class_names: Sequence[str]) -> dict[str, Any]:
        return {"line": self.line, "label": self.line_label, "model": self.model, "model_label": self.model_label,
                "reference_only": self.line in PRIVATE_LINES, "train_size": self.train_size, "error": self.error,
                **({} if self.scores is None else self.scores.to_json(class_names))}


def shareable_utility(results: Sequence[ModelResult], class_names: Sequence[str]) -> list[dict[str, Any]]:
    """The results as a shared report may show them: a line trained on the private samples keeps its scores, rounded
    by :func:`~pcevolve.evaluation.shipped.shared_rate` (:func:`shared_scores`), but not its size (that would be the
    exact private count)."""
    entries = []
    for result in results:
        entry = result.to_json(class_names)
        if result.line in PRIVATE_LINES:
            entry = {**shared_scores(entry), "train_size": None}
        entries.append(entry)
    return entries


#: The scores of a :meth:`ModelResult.to_json` entry, overall and in each class's entry.
_SCORES = ("auc", "accuracy", "macro_f1")
_CLASS_SCORES = ("precision", "recall", "f1")


def shared_scores(entry: dict[str, Any]) -> dict[str, Any]:
    """A model's JSON entry with every score rounded by :func:`~pcevolve.evaluation.shipped.shared_rate`: for a model
    trained on the private samples, whose exact scores are not the release's."""
    out = {**entry, **{key: shared_rate(entry[key]) for key in _SCORES if key in entry}}
    if "per_class" in entry:
        out["per_class"] = {name: {**scores, **{key: shared_rate(scores[key]) for key in _CLASS_SCORES}}
                            for name, scores in entry["per_class"].items()}
    return out


def score_lines(lines: dict[str, LabeledDataset], test: LabeledDataset, *, line_labels: Mapping[str, str],
                models: Mapping[str, str],
                probabilities: Callable[[str, LabeledDataset], np.ndarray]) -> list[ModelResult]:
    """Every model on every line (key → training set), scored on ``test``: the loop both modalities' judges share.

    ``probabilities(model, train)`` fits ``model`` on ``train`` and returns its class probabilities on ``test``; a
    ``ValueError`` (one class only, nothing to learn from) becomes a result with ``error`` and no scores.
    """
    classes = len(test.class_names)
    positive = minority_class(test.labels, classes)
    results = []
    for line, train in lines.items():
        for model in models:
            started = time.perf_counter()
            names = {"line_label": line_labels[line], "model_label": models[model]}
            try:
                proba = probabilities(model, train)
            except ValueError as error:
                results.append(ModelResult(line, model, None, len(train), **names, error=str(error),
                                           seconds=time.perf_counter() - started))
                continue
            results.append(ModelResult(line, model, class_scores(test.labels, proba, positive_class=positive),
                                       len(train), **names, seconds=time.perf_counter() - started))
    return results


def utility_lines(lines: dict[str, LabeledDataset], test: LabeledDataset, schema: TableSchema, *,
                  seed: int = 0) -> list[ModelResult]:
    """Every model of :data:`MODELS` on every line (key of :data:`LINES` → training set), tested on ``test``."""
    classes = len(test.class_names)

    def probabilities(model: str, train: LabeledDataset) -> np.ndarray:
        x_train, x_test = model_matrix(train.samples, test.samples, schema)
        return fit_probabilities(model, x_train, train.labels, x_test, classes=classes, seed=seed)

    return score_lines(lines, test, line_labels=LINES, models=MODELS, probabilities=probabilities)


# ---------------------------------------------------------------------------------------------------- fidelity


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


# ----------------------------------------------------------------------------------------------------- privacy


def membership_split(private_labels: np.ndarray, test_labels: np.ndarray, *, classes: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Members (private row indices) and as many non-members (test row indices), both sorted.

    n = min(private rows, test rows). Members: every private row, or a seeded choice of n of them. Non-members:
    per class as many test rows as there are members of that class (a seeded choice), where the test set has that
    many; the shortfall is a seeded choice among the test rows left, so the counts are equal and the class mix is
    as close to the members' as the test set allows.
    """
    p, t = np.asarray(private_labels, dtype=np.int64), np.asarray(test_labels, dtype=np.int64)
    n = min(len(p), len(t))
    members = np.sort(rng.choice(len(p), n, replace=False)) if len(p) > n else np.arange(len(p))
    wanted = np.bincount(p[members], minlength=classes)
    chosen = [rng.permutation(np.flatnonzero(t == k))[: wanted[k]] for k in range(classes)]
    taken = np.concatenate(chosen).astype(np.int64) if chosen else np.zeros(0, np.int64)
    left = np.setdiff1d(np.arange(len(t)), taken)
    fill = rng.choice(left, n - len(taken), replace=False) if n > len(taken) else np.zeros(0, np.int64)
    return members.astype(np.int64), np.sort(np.concatenate([taken, fill])).astype(np.int64)


def membership_attack(members: np.ndarray, non_members: np.ndarray, synthetic: np.ndarray, schema: TableSchema, *,
                      rng: np.random.Generator, resamples: int = ATTACK_RESAMPLES, epsilon: float | None = None,
                      delta: float | None = None) -> AttackResult:
    """The distance-to-closest-record attack: score = −(distance to the nearest synthetic row), in
    :func:`attack_space`; evaluated with bootstrap intervals drawn from ``rng``."""
    space = [attack_space(rows, schema, synthetic) for rows in (members, non_members, synthetic)]
    _, member_distance = nearest_neighbours(space[0], space[2])
    _, non_member_distance = nearest_neighbours(space[1], space[2])
    return evaluate_attack(-member_distance, -non_member_distance, attack="dcr", rng=rng, resamples=resamples,
                           epsilon=epsilon, delta=delta)


def _row_keys(rows: np.ndarray) -> list[bytes]:
    # + 0.0 turns -0.0 into 0.0: equal values must have equal bytes.
    return [row.tobytes() for row in np.ascontiguousarray(np.asarray(rows, dtype=np.float64) + 0.0)]


def exact_copies(candidates: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Indices (ascending) of the candidate rows equal in every column to some reference row."""
    known = set(_row_keys(reference))
    return np.array([i for i, key in enumerate(_row_keys(candidates)) if key in known], dtype=np.int64)


@dataclass(frozen=True)
class PrivacyJudgement:
    """The membership attack and the copy check.

    Attributes:
        attack: The distance-to-closest-record attack's result.
        members: Members (= non-members) in the attack.
        private_copies: Synthetic rows equal in every feature column to a private row.
        test_copies: Synthetic rows equal in every feature column to a test row (the chance baseline).
        private_rows: Rows of the private table.
    """

    attack: AttackResult
    members: int
    private_copies: int
    test_copies: int
    private_rows: int

    def to_json(self) -> dict[str, Any]:
        """Shareable: the AUC and success rounded (:func:`~pcevolve.evaluation.shipped.shared_rate`), whether any
        private row was copied, the test copy count."""
        auc, success = self.attack.auc, self.attack.success
        return {"attack": "distance to closest record",
                "auc": shared_rate(auc.value), "auc_interval": [shared_rate(auc.low), shared_rate(auc.high)],
                "success": shared_rate(success.value), "exceeds_dp_bound": self.attack.exceeds_dp_bound,
                "confidence": self.attack.confidence, "auc_decimals": AUC_DECIMALS,
                "private_rows_copied": self.private_copies > 0, "test_rows_copied": self.test_copies}

    def to_secure_json(self) -> dict[str, Any]:
        return {"attack": self.attack.to_json(curve=True), "members": self.members, "non_members": self.members,
                "private_copies": self.private_copies, "test_copies": self.test_copies,
                "private_rows": self.private_rows}


# -------------------------------------------------------------------------------------------------- the verdict


@dataclass(frozen=True)
class TableJudgement:
    """Every result of :func:`judge_tables`.

    Attributes:
        class_names, feature_names: The table's classes (label order) and feature columns (schema order).
        minority_class: The test set's smallest class (the binary AUC's positive class; marked in the report).
        synthetic_per_class, test_per_class: Rows per class.
        utility: Every (line, model) result; the ``"real"`` line only with private rows.
        columns: Per-column marginals.
        correlation: Correlation difference synthetic vs test.
        correlation_real: The same for the private rows vs test (None without them).
        privacy: The attack and copy check (None without private rows).
        seed: Seeds the models, the attack's split and its bootstrap.
        seconds: Time of each judge.
    """

    class_names: tuple[str, ...]
    feature_names: tuple[str, ...]
    minority_class: int
    synthetic_per_class: tuple[int, ...]
    test_per_class: tuple[int, ...]
    utility: tuple[ModelResult, ...]
    columns: tuple[ColumnFidelity, ...]
    correlation: CorrelationDifference
    correlation_real: CorrelationDifference | None
    privacy: PrivacyJudgement | None
    seed: int
    seconds: dict[str, float] = field(default_factory=dict)

    def result(self, line: str, model: str) -> ModelResult | None:
        return next((r for r in self.utility if r.line == line and r.model == model), None)

    def to_json(self) -> dict[str, Any]:
        """What may leave the secure zone: no private row count, no exact attack figure, no timing."""
        names = self.class_names
        return {
            "class_names": list(names), "feature_names": list(self.feature_names),
            "minority_class": names[self.minority_class],
            "synthetic_per_class": dict(zip(names, self.synthetic_per_class, strict=True)),
            "test_per_class": dict(zip(names, self.test_per_class, strict=True)),
            "utility": shareable_utility(self.utility, names),
            "fidelity": {"columns": [c.to_json() for c in self.columns],
                         "mean_tvd": float(np.mean([c.tvd for c in self.columns])),
                         "correlation": self.correlation.to_json(),
                         "correlation_real_reference": (None if self.correlation_real is None
                                                        else self.correlation_real.to_shared_json())},
            "privacy": None if self.privacy is None else {"caveat": PRIVATE_FIGURES_CAVEAT, **self.privacy.to_json()},
            "seed": self.seed,
        }

    def to_secure_json(self) -> dict[str, Any]:
        """The exact private-derived figures :meth:`to_json` leaves out or rounds, and the timings."""
        return {"privacy": None if self.privacy is None else self.privacy.to_secure_json(),
                "utility": [{**r.to_json(self.class_names), "seconds": r.seconds} for r in self.utility],
                "fidelity_real_reference": {
                    "tvd": {c.name: c.tvd_real for c in self.columns},
                    "correlation": None if self.correlation_real is None else self.correlation_real.to_json()},
                "seconds": dict(self.seconds)}


def _check_sets(schema: TableSchema, **sets: LabeledDataset | None) -> tuple[str, ...]:
    names = None
    for what, dataset in sets.items():
        if dataset is None:
            continue
        _rows(dataset.samples, schema)
        if names is not None and dataset.class_names != names:
            raise ValueError(f"the {what} set's classes {list(dataset.class_names)} differ from {list(names)}; read "
                             "every table with the same class_names")
        names = dataset.class_names
    assert names is not None
    return names


def judge_tables(synthetic: LabeledDataset, test: LabeledDataset, schema: TableSchema, *,
                 private: LabeledDataset | None = None, public: np.ndarray | None = None, seed: int = 0,
                 epsilon: float | None = None, delta: float | None = None,
                 resamples: int = ATTACK_RESAMPLES) -> TableJudgement:
    """Judge a synthetic table against a real test table (and, given, the private rows it was made from).

    Args:
        synthetic: The synthetic rows.
        test: Real held-out rows, never used to make the synthetic set (the judge).
        schema: The columns of all of them.
        private: The private rows: the real reference lines, the attack's members, the copy check.
        public: Unlabelled public rows (N, F): the numeric columns' bins.
        seed: Seeds the gradient-boosted trees, the attack's choice of rows and its bootstrap.
        epsilon, delta: The release's guarantee: flags an attack that beats what (ε, δ)-DP allows.
        resamples: Bootstrap resamples of the attack's statistics.

    Raises:
        ValueError: The sets have different classes or not the schema's columns.
    """
    names = _check_sets(schema, synthetic=synthetic, test=test, private=private)
    classes = len(names)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    lines = {"synthetic": synthetic, **({} if private is None else {"real": private})}
    utility = utility_lines(lines, test, schema, seed=seed)
    seconds["utility"] = time.perf_counter() - started

    started = time.perf_counter()
    columns = column_fidelity(synthetic.samples, test.samples, schema,
                              private=None if private is None else private.samples, public=public)
    correlation = correlation_difference(synthetic.samples, test.samples, schema)
    correlation_real = None if private is None else correlation_difference(private.samples, test.samples, schema)
    seconds["fidelity"] = time.perf_counter() - started

    privacy = None
    if private is not None:
        started = time.perf_counter()
        members, non_members = membership_split(private.labels, test.labels, classes=classes,
                                                rng=np.random.default_rng([seed, 13]))
        attack = membership_attack(private.samples[members], test.samples[non_members], synthetic.samples, schema,
                                   rng=np.random.default_rng([seed, 17]), resamples=resamples, epsilon=epsilon,
                                   delta=delta)
        privacy = PrivacyJudgement(attack=attack, members=len(members),
                                   private_copies=len(exact_copies(synthetic.samples, private.samples)),
                                   test_copies=len(exact_copies(synthetic.samples, test.samples)),
                                   private_rows=len(private))
        seconds["privacy"] = time.perf_counter() - started
    return TableJudgement(
        class_names=names, feature_names=schema.names, minority_class=minority_class(test.labels, classes),
        synthetic_per_class=tuple(np.bincount(synthetic.labels, minlength=classes).tolist()),
        test_per_class=tuple(np.bincount(test.labels, minlength=classes).tolist()),
        utility=tuple(utility), columns=tuple(columns), correlation=correlation, correlation_real=correlation_real,
        privacy=privacy, seed=seed, seconds=seconds)


def judge_table_files(synthetic_csv: str | os.PathLike[str], test_csv: str | os.PathLike[str],
                      schema: TableSchema, *, private_csv: str | os.PathLike[str] | None = None,
                      public_csv: str | os.PathLike[str] | None = None, seed: int = 0) -> dict[str, Any]:
    """:func:`judge_tables` on CSV files: ``TableJudgement.to_json()`` with the exact figures under ``"secure"``.

    Classes come from the private file when given, else from the test file; the other files are read with those
    classes (a label they lack is an error; the synthetic file may miss a class). The result holds private-derived
    exact figures: keep it where the private data is (research and benchmarks), not in a shared report.

    Raises:
        pcevolve.data.DataError: A file is missing or does not fit the schema (each problem names row and column).
    """
    private = None if private_csv is None else read_labeled_table(private_csv, schema)
    test = read_labeled_table(test_csv, schema, class_names=None if private is None else private.class_names)
    synthetic = read_labeled_table(synthetic_csv, schema, class_names=test.class_names, min_per_class=0)
    public = None if public_csv is None else read_unlabeled_table(public_csv, schema).samples
    judgement = judge_tables(synthetic, test, schema, private=private, public=public, seed=seed)
    return {**judgement.to_json(), "secure": judgement.to_secure_json()}
