"""``evaluate_text_run``: judge a finished text run (``RUN/synthetic.jsonl``) against real test texts.

Reading rules, as for tables (:mod:`~pcevolve.evaluation.table_run`): ``RUN/config.yaml`` says where the private and
public texts are (``data.private``, ``data.public``; relative paths are relative to the working directory, as for
``pcevolve run``) and which fields hold the text and the label (``data.text_column``, ``data.label_column``; the
pool's text is ``data.public_text_column`` when set); every file — private, public, test, synthetic — is read with
those fields (JSON Lines, or CSV by the ``.csv`` suffix). Class names, order and label type come from the private
texts read against ``data.classes``; the test texts must have exactly those classes, the synthetic texts no other,
and a JSON Lines file's labels that type. Every problem is one :class:`~pcevolve.evaluation.inputs.EvaluationError`
naming the path.

The judges are those of :mod:`~pcevolve.evaluation.text_judgement`. They read private texts directly: their exact
figures go to ``RUN/secure/evaluation.json``; :meth:`TextRunEvaluation.to_json` is what the shared report carries
(the private set's size by the run's noisy DP counts, every figure computed on the private texts rounded as
:mod:`~pcevolve.evaluation.shipped` rounds them, only whether a private text was copied, every file by its name only).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.config import DataConfig, RunConfig
from pcevolve.data import DataError, LabeledDataset
from pcevolve.data.text import read_labeled_texts, read_unlabeled_texts
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
from pcevolve.evaluation.text_judgement import PRIVATE_FIGURES_CAVEAT, TextJudgement, judge_texts
from pcevolve.privacy import BudgetLedger

TEXT_EVALUATION_FORMAT = "pcevolve.evaluation.text"
TEXT_EVALUATION_VERSION = 1
#: The file a text run delivers.
SYNTHETIC_TEXTS = "synthetic.jsonl"
#: Files a finished text run folder must hold for an evaluation.
REQUIRED_TEXT_RUN_FILES = ("config.yaml", "ledger.json", SYNTHETIC_TEXTS)


def text_field(data: DataConfig) -> str:
    """The field holding each record's text (``data.text_column``; ``"text"`` for a config that predates it)."""
    return str(getattr(data, "text_column", "text"))


def public_text_field(data: DataConfig) -> str:
    """The field holding each text of the public pool (``data.public_text_column``, else :func:`text_field`)."""
    return str(getattr(data, "public_text_column", None) or text_field(data))


@dataclass
class TextRunEvaluation(JudgedRun):
    """A text run, what it was judged against, and the judgement.

    Attributes:
        folder: The run folder.
        config: The run's resolved configuration.
        synthetic: The delivered texts (``RUN/synthetic.jsonl``).
        private: The private texts (the real reference, the attack's members, the copy check; never shown).
        test: The real held-out texts (the judge).
        test_path: Where the test texts were read from.
        public_texts: Texts of the public pool (None without one).
        ledger: The run's privacy ledger.
        dp_counts: The run's noisy (DP) per-class counts (``release.npz``), or None.
        judgement: The judges' results.
        seconds: Time of each step.
        public: The public texts themselves (None without them): the report shows synthetic texts beside their
            nearest public texts.
    """

    folder: Path
    config: RunConfig
    synthetic: LabeledDataset
    private: LabeledDataset
    test: LabeledDataset
    test_path: str
    public_texts: int | None
    ledger: BudgetLedger
    dp_counts: np.ndarray | None
    judgement: TextJudgement
    seconds: dict[str, float] = field(default_factory=dict)
    public: np.ndarray | None = field(default=None, repr=False)

    def paths(self) -> dict[str, str | None]:
        """Where the run and every text file were read from, in full (for ``secure/`` only)."""
        data = self.config.data
        return {"run": str(self.folder), "synthetic": str(self.folder / SYNTHETIC_TEXTS), "private": str(data.private),
                "test": self.test_path, "public": None if data.public is None else str(data.public)}

    def to_json(self) -> dict[str, Any]:
        """Every figure that may leave the secure zone (``report/evaluation.json``); each file by its name only."""
        data = self.config.data
        ledger = self.ledger
        name = self.path_names()
        return {
            **self.shared_head(TEXT_EVALUATION_FORMAT, TEXT_EVALUATION_VERSION, "text"),
            "data": {"class_names": list(self.class_names), "text_field": text_field(data),
                     "label_field": data.label_column,
                     "synthetic": {"path": name["synthetic"], "per_class": list(self.judgement.synthetic_per_class)},
                     # Exact private counts are not DP: a shared report carries the release's noisy counts.
                     "private": {"path": name["private"], "per_class_dp_estimate": self.dp_private_counts()},
                     "test": {"path": name["test"], "per_class": list(self.judgement.test_per_class)},
                     "public": None if self.public_texts is None else {"path": name["public"],
                                                                       "texts": self.public_texts}},
            "judgement": self.judgement.to_json(),
            "caveat": PRIVATE_FIGURES_CAVEAT,
            "ledger": ledger_json(ledger, self.folder),
            "audit": audit_json(self.folder),
        }

    def to_secure_json(self) -> dict[str, Any]:
        """The exact private-derived figures a shared report leaves out (``secure/evaluation.json``)."""
        return self.secure_json(TEXT_EVALUATION_FORMAT, TEXT_EVALUATION_VERSION)


def _read_texts(path: str | os.PathLike[str], what: str, data: DataConfig,
                class_names: tuple[str | int | bool, ...] | None, *, min_per_class: int = 2) -> LabeledDataset:
    if not Path(path).is_file():
        raise EvaluationError(f"{what} {path} does not exist or is not a file")
    try:
        return read_labeled_texts(path, text_field=text_field(data), label_field=data.label_column,
                                  class_names=class_names, min_per_class=min_per_class)
    except (DataError, ValueError, OSError) as error:
        raise EvaluationError(f"{what} {path}: {one_line(error)}") from None


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
    started = time.perf_counter()
    folder, config = open_run_folder(run_dir, required=REQUIRED_TEXT_RUN_FILES)
    data = config.data
    where = f"(in {folder / 'config.yaml'})"
    if data.modality != "text":
        raise EvaluationError(f"run {folder} holds {data.modality} samples (data.modality {where}), not texts")
    test_file = test_path if test_path is not None else data.test
    if test_file is None:
        raise EvaluationError(f"no test texts: give --test TEST.jsonl (data.test {where} is empty)")
    if not Path(data.private).is_file():
        raise EvaluationError(f"private texts {data.private} (data.private {where}) do not exist; run the "
                              "evaluation from the folder the run was started in")
    private = _read_texts(data.private, "private texts", data, data.classes, min_per_class=0)  # as the run did
    names = private.class_labels  # the class names with the labels' JSON type, which every JSON Lines file must have
    synthetic = _read_texts(folder / SYNTHETIC_TEXTS, "synthetic texts", data, names, min_per_class=0)
    test = _read_texts(test_file, "test texts", data, names)
    public = None
    if data.public is not None:
        try:
            public = read_unlabeled_texts(data.public, text_field=public_text_field(data),
                                          label_field=data.label_column).samples
        except (DataError, ValueError, OSError) as error:
            raise EvaluationError(f"public texts {data.public}: {one_line(error)}") from None
    ledger = read_ledger(folder)
    read_seconds = time.perf_counter() - started
    try:
        judgement = judge_texts(synthetic, test, private=private, public=public, seed=seed, epsilon=ledger.spent(),
                                delta=ledger.delta)
    except ValueError as error:  # e.g. fewer than two synthetic texts, or no word in any of them
        raise EvaluationError(f"run {folder}: the texts cannot be judged: {one_line(error)}") from None
    return TextRunEvaluation(folder=folder, config=config, synthetic=synthetic, private=private, test=test,
                             test_path=str(test_file), public_texts=None if public is None else len(public),
                             ledger=ledger, dp_counts=read_dp_counts(folder), judgement=judgement,
                             seconds={"read": read_seconds, "total": time.perf_counter() - started},
                             public=public)
