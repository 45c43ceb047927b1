"""The judges of a synthetic table: utility, fidelity and privacy against real rows, as pure functions.

Every table here is a ``float64`` (N, F) array in schema order (a numeric value, or a category index), with
``int64`` labels, as :func:`pcevolve.data.tabular.read_labeled_table` returns it. :func:`judge_tables` runs all
three judges and returns a :class:`TableJudgement`; :func:`judge_table_files` does the same from CSV files.

* **Utility** (:mod:`~pcevolve.evaluation.table_utility`) — two fixed models (gradient-boosted trees, logistic
  regression) trained on the synthetic set and, as a reference line, on the private rows, tested on the real test
  set.
* **Fidelity** (:mod:`~pcevolve.evaluation.table_fidelity`) — per column, the total-variation distance between the
  synthetic and the test marginal; the mean absolute difference of their correlation matrices.
* **Privacy** (:mod:`~pcevolve.evaluation.table_privacy`) — a distance-to-closest-record membership attack, and the
  synthetic rows equal to a private row (and, as the chance baseline, to a test row).

What is computed on private data (the real reference lines and their per-class figures, the private-vs-test
fidelity reference, the attack and the private copy count) is not covered by the DP guarantee: it is an audit
inside the secure zone. :meth:`TableJudgement.to_json` holds what may leave it, rounded as
:mod:`pcevolve.evaluation.shipped` rounds every modality's private-derived figures — the attack's AUC and success
and the real reference's scores to :data:`~pcevolve.evaluation.table_privacy.AUC_DECIMALS` decimals (an exact AUC is
a ratio with denominator members × non-members, so it can pin down the private set's size), the private-vs-test
distances to 3 significant figures and at most 3 decimals — and only *whether* a private row was copied;
:meth:`TableJudgement.to_secure_json` holds the exact figures.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pcevolve.data import LabeledDataset
from pcevolve.data.table_schema import TableSchema
from pcevolve.data.tabular import read_labeled_table, read_unlabeled_table
from pcevolve.evaluation.line_scores import LinesJudgement, ModelResult, judged_classes
from pcevolve.evaluation.table_encoding import _rows
from pcevolve.evaluation.table_fidelity import (
    ColumnFidelity,
    CorrelationDifference,
    column_fidelity,
    correlation_difference,
)
from pcevolve.evaluation.table_privacy import (
    ATTACK_RESAMPLES,
    PrivacyJudgement,
    exact_copies,
    membership_attack,
)
from pcevolve.evaluation.members import membership_split
from pcevolve.evaluation.table_utility import utility_lines

#: What a shared report must say about the figures in it that come from the private rows.
PRIVATE_FIGURES_CAVEAT = (
    "Not covered by the differential-privacy guarantee: these figures are computed on the private rows themselves — "
    "the real-reference models (trained on the private rows) and their per-class scores, the private-vs-test "
    "fidelity reference, the membership attack and the check for copied private rows. Read them as an audit of this "
    "run, not as released statistics. They are rounded (scores and AUCs to two decimals, distances to three "
    "decimals at most); the exact figures and counts (private rows, attack members, copied rows) stay in the run's "
    "secure/evaluation.json."
)


@dataclass(frozen=True)
class TableJudgement(LinesJudgement):
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

    def to_json(self) -> dict[str, Any]:
        """What may leave the secure zone: no private row count, no exact attack figure, no timing."""
        return {
            "class_names": list(self.class_names), "feature_names": list(self.feature_names), **self.lines_json(),
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
                "utility": self.secure_utility(),
                "fidelity_real_reference": {
                    "tvd": {c.name: c.tvd_real for c in self.columns},
                    "correlation": None if self.correlation_real is None else self.correlation_real.to_json()},
                "seconds": dict(self.seconds)}


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
    classes = judged_classes("table", lambda _, dataset: _rows(dataset.samples, schema), synthetic, test, private)
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
        split = membership_split(private.labels, test.labels, classes=len(test.class_names),
                                 rng=np.random.default_rng([seed, 13]))
        attack = membership_attack(private.samples[split.members], test.samples[split.non_members],
                                   synthetic.samples, schema, rng=np.random.default_rng([seed, 17]),
                                   resamples=resamples, epsilon=epsilon, delta=delta, groups=split.members)
        privacy = PrivacyJudgement(attack=attack, members=len(split),
                                   private_copies=len(exact_copies(synthetic.samples, private.samples)),
                                   test_copies=len(exact_copies(synthetic.samples, test.samples)),
                                   private_rows=len(private))
        seconds["privacy"] = time.perf_counter() - started
    return TableJudgement(
        **classes, feature_names=schema.names, utility=tuple(utility), columns=tuple(columns),
        correlation=correlation, correlation_real=correlation_real, privacy=privacy, seed=seed, seconds=seconds)


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
