"""``evaluate_text_run``: judge a finished text run (``RUN/synthetic.jsonl``) against real test texts.

A file run (:mod:`~pcevolve.evaluation.file_run`: where the texts are, how classes are matched, what the shared JSON
carries); every file — private, public, test, synthetic — is read with the run's fields for the text and the label
(``data.text_column``, ``data.label_column``; the pool's text is ``data.public_text_column`` when set), as JSON Lines
or, by the ``.csv`` suffix, CSV. Class names, order and label type come from the private texts read against
``data.classes``: a JSON Lines file's labels must have that type. The texts are judged by
:mod:`~pcevolve.evaluation.text_judgement`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcevolve.config import DataConfig, RunConfig
from pcevolve.data import LabeledDataset
from pcevolve.data.text import read_labeled_texts, read_unlabeled_texts
from pcevolve.evaluation.file_run import FileRunEvaluation, FileRunFiles, FileRunKind, evaluate_file_run
from pcevolve.evaluation.inputs import EvaluationError, one_line
from pcevolve.evaluation.text_judgement import PRIVATE_FIGURES_CAVEAT, TextJudgement, judge_texts

#: How a text run is named in its evaluation's messages and JSON.
TEXT_RUN = FileRunKind(modality="text", synthetic_file="synthetic.jsonl", noun="texts", plural=True,
                       test_file="TEST.jsonl", unit="texts", format="pcevolve.evaluation.text", version=1,
                       caveat=PRIVATE_FIGURES_CAVEAT)


def text_field(data: DataConfig) -> str:
    """The field holding each record's text (``data.text_column``; ``"text"`` for a config that predates it)."""
    return str(getattr(data, "text_column", "text"))


def public_text_field(data: DataConfig) -> str:
    """The field holding each text of the public pool (``data.public_text_column``, else :func:`text_field`)."""
    return str(getattr(data, "public_text_column", None) or text_field(data))


@dataclass
class TextRunEvaluation(FileRunEvaluation[TextJudgement]):
    """A text run, what it was judged against, and the judgement (:class:`FileRunEvaluation`'s fields)."""

    kind = TEXT_RUN

    def described_data(self) -> dict[str, Any]:
        data = self.config.data
        return {"text_field": text_field(data), "label_field": data.label_column}


def _open_texts(folder: Path, config: RunConfig) -> FileRunFiles:
    """The run's text files, read with its text and label fields, and the text judges."""
    data = config.data

    def judge(synthetic: LabeledDataset, test: LabeledDataset, **judged: Any) -> TextJudgement:
        try:
            return judge_texts(synthetic, test, **judged)
        except ValueError as error:  # e.g. fewer than two synthetic texts, or no word in any of them
            raise EvaluationError(f"run {folder}: the texts cannot be judged: {one_line(error)}") from None

    return FileRunFiles(
        labeled=lambda path, names, least: read_labeled_texts(path, text_field=text_field(data),
                                                              label_field=data.label_column, class_names=names,
                                                              min_per_class=least),
        unlabeled=lambda path: read_unlabeled_texts(path, text_field=public_text_field(data),
                                                    label_field=data.label_column).samples,
        judge=judge, evaluation=TextRunEvaluation)


def evaluate_text_run(run_dir: str | os.PathLike[str], test_path: str | os.PathLike[str] | None = None, *,
                      seed: int = 0) -> TextRunEvaluation:
    """Judge a finished text run on utility, distribution and privacy (see :mod:`~pcevolve.evaluation.text_judgement`).

    Args:
        run_dir: The run folder.
        test_path: Real held-out texts with the label field (JSONL or CSV); default the run's ``data.test``.
        seed: Seeds the SVDs, the thinning, the attack's choice of texts and its bootstrap.

    Raises:
        EvaluationError: The run or a file is missing, unreadable or does not fit (one line naming the path).
    """
    return evaluate_file_run(run_dir, test_path, seed=seed, kind=TEXT_RUN, open_files=_open_texts)
