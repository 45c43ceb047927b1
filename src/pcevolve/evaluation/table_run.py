"""``evaluate_table_run``: judge a finished tabular run (``RUN/synthetic.csv``) against a real test table.

A file run (:mod:`~pcevolve.evaluation.file_run`: where the tables are, how classes are matched, what the shared JSON
carries); a table is read with its schema (``data.schema_file``, else drafted from the public table — never from the
private rows) and judged by :mod:`~pcevolve.evaluation.table_judgement`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcevolve.config import RunConfig
from pcevolve.data import DataError
from pcevolve.data.table_schema import TableSchema
from pcevolve.data.tabular import read_labeled_table, read_unlabeled_table
from pcevolve.evaluation.file_run import FileRunEvaluation, FileRunFiles, FileRunKind, evaluate_file_run
from pcevolve.evaluation.inputs import EvaluationError, one_line
from pcevolve.evaluation.table_judgement import PRIVATE_FIGURES_CAVEAT, TableJudgement, judge_tables
from pcevolve.modalities import MODALITIES

#: How a tabular run is named in its evaluation's messages and JSON.
TABLE_RUN = FileRunKind(modality="tabular", synthetic_file="synthetic.csv", noun="table", plural=False,
                        test_file="TEST.csv", unit="rows", format="pcevolve.evaluation.tabular", version=1,
                        caveat=PRIVATE_FIGURES_CAVEAT)


@dataclass
class TableRunEvaluation(FileRunEvaluation[TableJudgement]):
    """A tabular run, what it was judged against, and the judgement: :class:`FileRunEvaluation`'s fields and
    ``schema``, the table's columns (from public data)."""

    kind = TABLE_RUN
    schema: TableSchema = field(kw_only=True)

    def described_data(self) -> dict[str, Any]:
        return {"label_column": self.schema.label_column, "schema": self.schema.to_json()}


def _open_tables(folder: Path, config: RunConfig) -> FileRunFiles:
    """The run's tables, read with its schema, and the table judges."""
    try:
        schema = MODALITIES.get_part(config.data.modality).layout(config.data)
    except (DataError, ValueError, OSError) as error:
        raise EvaluationError(f"table schema of run {folder}: {one_line(error)}") from None
    return FileRunFiles(
        labeled=lambda path, names, least: read_labeled_table(path, schema, class_names=names, min_per_class=least),
        unlabeled=lambda path: read_unlabeled_table(path, schema).samples,
        judge=lambda synthetic, test, **judged: judge_tables(synthetic, test, schema, **judged),
        evaluation=lambda **fields: TableRunEvaluation(**fields, schema=schema))


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
    return evaluate_file_run(run_dir, test_csv, seed=seed, kind=TABLE_RUN, open_files=_open_tables)
