"""``evaluate_table_run``: judge a finished tabular run (``RUN/synthetic.csv``) against a real test table.

Reading rules, as for images (:mod:`~pcevolve.evaluation.inputs`): ``RUN/config.yaml`` says where the private and
public tables are (``data.private``, ``data.public``; relative paths are relative to the working directory, as for
``pcevolve run``) and gives the schema (``data.schema_file``, else drafted from the public table — never from the
private rows). Class names and order come from the private table; the test table must have exactly those classes,
the synthetic table no other. Every problem is one :class:`~pcevolve.evaluation.inputs.EvaluationError` naming the
path.

The judges are those of :mod:`~pcevolve.evaluation.table_judgement`. They read private rows directly: their exact
figures go to ``RUN/secure/evaluation.json``; :meth:`TableRunEvaluation.to_json` is what the shared report carries
(the private table's size by the run's noisy DP counts, every figure computed on the private rows rounded as
:mod:`~pcevolve.evaluation.shipped` rounds them, only whether a private row was copied, every file by its name only).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.config import RunConfig
from pcevolve.data import DataError, LabeledDataset
from pcevolve.data.table_schema import TableSchema
from pcevolve.data.tabular import read_labeled_table, read_unlabeled_table
from pcevolve.evaluation.inputs import (
    EvaluationError,
    JudgedRun,
    audit_json,
    ledger_json,
    one_line,
    open_run_folder,
    read_dp_counts,
    read_ledger,
)
from pcevolve.evaluation.table_judgement import (
    PRIVATE_FIGURES_CAVEAT,
    TableJudgement,
    judge_tables,
)
from pcevolve.modalities.tabular import table_schema
from pcevolve.privacy import BudgetLedger

TABLE_EVALUATION_FORMAT = "pcevolve.evaluation.tabular"
TABLE_EVALUATION_VERSION = 1
#: Files a finished tabular run folder must hold for an evaluation.
REQUIRED_TABLE_RUN_FILES = ("config.yaml", "ledger.json", "synthetic.csv")


@dataclass
class TableRunEvaluation(JudgedRun):
    """A tabular run, what it was judged against, and the judgement.

    Attributes:
        folder: The run folder.
        config: The run's resolved configuration.
        schema: The table's columns (from public data).
        synthetic: The delivered rows (``RUN/synthetic.csv``).
        private: The private rows (the real reference, the attack's members, the copy check; never shown).
        test: The real held-out rows (the judge).
        test_path: Where the test table was read from.
        public_rows: Rows of the public table (None without one).
        ledger: The run's privacy ledger.
        dp_counts: The run's noisy (DP) per-class counts (``release.npz``), or None.
        judgement: The judges' results.
        seconds: Time of each step.
        public: The public rows themselves (None without them): the report shows synthetic rows beside their
            nearest public rows.
    """

    folder: Path
    config: RunConfig
    schema: TableSchema
    synthetic: LabeledDataset
    private: LabeledDataset
    test: LabeledDataset
    test_path: str
    public_rows: int | None
    ledger: BudgetLedger
    dp_counts: np.ndarray | None
    judgement: TableJudgement
    seconds: dict[str, float] = field(default_factory=dict)
    public: np.ndarray | None = field(default=None, repr=False)

    def paths(self) -> dict[str, str | None]:
        """Where the run and every table were read from, in full (for ``secure/`` only)."""
        data = self.config.data
        return {"run": str(self.folder), "synthetic": str(self.folder / "synthetic.csv"), "private": str(data.private),
                "test": self.test_path, "public": None if data.public is None else str(data.public)}

    def to_json(self) -> dict[str, Any]:
        """Every figure that may leave the secure zone (``report/evaluation.json``); each file by its name only."""
        ledger = self.ledger
        name = self.path_names()
        return {
            **self.shared_head(TABLE_EVALUATION_FORMAT, TABLE_EVALUATION_VERSION, "tabular"),
            "data": {"class_names": list(self.class_names), "label_column": self.schema.label_column,
                     "schema": self.schema.to_json(),
                     "synthetic": {"path": name["synthetic"], "per_class": list(self.judgement.synthetic_per_class)},
                     # Exact private counts are not DP: a shared report carries the release's noisy counts.
                     "private": {"path": name["private"], "per_class_dp_estimate": self.dp_private_counts()},
                     "test": {"path": name["test"], "per_class": list(self.judgement.test_per_class)},
                     "public": (None if self.public_rows is None
                                else {"path": name["public"], "rows": self.public_rows})},
            "judgement": self.judgement.to_json(),
            "caveat": PRIVATE_FIGURES_CAVEAT,
            "ledger": ledger_json(ledger, self.folder),
            "audit": audit_json(self.folder),
        }

    def to_secure_json(self) -> dict[str, Any]:
        """The exact private-derived figures a shared report leaves out (``secure/evaluation.json``)."""
        return self.secure_json(TABLE_EVALUATION_FORMAT, TABLE_EVALUATION_VERSION)


def _read_table(path: str | os.PathLike[str], what: str, schema: TableSchema,
                class_names: tuple[str, ...] | None, *, min_per_class: int = 2) -> LabeledDataset:
    if not Path(path).is_file():
        raise EvaluationError(f"{what} {path} does not exist or is not a file")
    try:
        return read_labeled_table(path, schema, class_names=class_names, min_per_class=min_per_class)
    except (DataError, ValueError, OSError) as error:
        raise EvaluationError(f"{what} {path}: {one_line(error)}") from None


def evaluate_table_run(run_dir: str | os.PathLike[str], test_csv: str | os.PathLike[str] | None = None, *,
                       seed: int = 0) -> TableRunEvaluation:
    """Judge a finished tabular run on utility, fidelity and privacy (see :mod:`~pcevolve.evaluation.table_judgement`).

    Args:
        run_dir: The run folder.
        test_csv: Real held-out rows with the label column; default the run's ``data.test``.
        seed: Seeds the models, the attack's choice of rows and its bootstrap.

    Raises:
        EvaluationError: The run or a table is missing, unreadable or does not fit (one line naming the path).
    """
    started = time.perf_counter()
    folder, config = open_run_folder(run_dir, required=REQUIRED_TABLE_RUN_FILES)
    data = config.data
    where = f"(in {folder / 'config.yaml'})"
    if data.modality != "tabular":
        raise EvaluationError(f"run {folder} holds {data.modality} samples (data.modality {where}), not a table")
    test_path = test_csv if test_csv is not None else data.test
    if test_path is None:
        raise EvaluationError(f"no test table: give --test TEST.csv (data.test {where} is empty)")
    try:
        schema = table_schema(data)
    except (DataError, ValueError, OSError) as error:
        raise EvaluationError(f"table schema of run {folder}: {one_line(error)}") from None
    if not Path(data.private).is_file():
        raise EvaluationError(f"private table {data.private} (data.private {where}) does not exist; run the "
                              "evaluation from the folder the run was started in")
    private = _read_table(data.private, "private table", schema, data.classes, min_per_class=0)  # as the run did
    names = private.class_names
    synthetic = _read_table(folder / "synthetic.csv", "synthetic table", schema, names, min_per_class=0)
    test = _read_table(test_path, "test table", schema, names)
    public = None
    if data.public is not None:
        try:
            public = read_unlabeled_table(data.public, schema).samples
        except (DataError, ValueError, OSError) as error:
            raise EvaluationError(f"public table {data.public}: {one_line(error)}") from None
    ledger = read_ledger(folder)
    read_seconds = time.perf_counter() - started
    judgement = judge_tables(synthetic, test, schema, private=private, public=public, seed=seed,
                             epsilon=ledger.spent(), delta=ledger.delta)
    return TableRunEvaluation(folder=folder, config=config, schema=schema, synthetic=synthetic, private=private,
                              test=test, test_path=str(test_path), public_rows=None if public is None else len(public),
                              ledger=ledger, dp_counts=read_dp_counts(folder), judgement=judgement,
                              seconds={"read": read_seconds, "total": time.perf_counter() - started}, public=public)
