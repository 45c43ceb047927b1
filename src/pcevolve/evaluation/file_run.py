"""A file run's evaluation: a tabular or text run, whose synthetic samples are one file, judged against real test data.

:func:`evaluate_file_run` reads it as images are read (:mod:`~pcevolve.evaluation.inputs`): ``RUN/config.yaml`` says
where the private and public data are (relative paths are relative to the working directory, as for ``pcevolve run``);
class names and order come from the private data, the test data must have exactly those classes, the synthetic data no
other; every problem is one :class:`~pcevolve.evaluation.inputs.EvaluationError` naming the path. How a modality reads
its files and judges them is its :class:`FileRunFiles`.

The judges read private samples directly: their exact figures go to ``RUN/secure/evaluation.json``;
:meth:`FileRunEvaluation.to_json` is what the shared report carries (the private set's size by the run's noisy DP
counts, every figure computed on the private samples rounded as :mod:`~pcevolve.evaluation.shipped` rounds them, only
whether a private sample was copied, every file by its name only).
"""

from __future__ import annotations

import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

import numpy as np

from pcevolve.config import RunConfig
from pcevolve.data import DataError, LabeledDataset
from pcevolve.evaluation.inputs import (
    EvaluationError,
    JudgedRun,
    audit_json,
    delivery_note,
    ledger_json,
    one_line,
    open_run_folder,
    read_dp_counts,
    read_ledger,
)
from pcevolve.privacy import BudgetLedger

#: A modality's judgement (``TableJudgement``, ``TextJudgement``).
Judgement = TypeVar("Judgement")


@dataclass(frozen=True)
class FileRunKind:
    """How one modality's file runs are named: their ``data.modality``, the file a run delivers, a set in messages
    (``noun``: "private table", "test texts"; ``plural``: "texts do not exist", else "a table does not"), the test
    file ``--test`` asks for, the samples (``unit``, plural: the key of the public set's size in the JSON), the
    evaluation JSON's ``format`` and ``version``, and the judges' ``caveat`` on figures computed on private samples."""

    modality: str
    synthetic_file: str
    noun: str
    plural: bool
    test_file: str
    unit: str
    format: str
    version: int
    caveat: str


@dataclass
class FileRunEvaluation(JudgedRun, ABC, Generic[Judgement]):
    """A file run, what it was judged against, and the judgement (a modality's class adds its own fields).

    Attributes:
        folder: The run folder.
        config: The run's resolved configuration.
        synthetic: The delivered samples (``RUN/`` :attr:`FileRunKind.synthetic_file`).
        private: The private samples (the real reference, the attack's members, the copy check; never shown).
        test: The real held-out samples (the judge).
        test_path: Where the test samples were read from.
        ledger: The run's privacy ledger.
        dp_counts: The run's noisy (DP) per-class counts (``release.npz``), or None.
        judgement: The judges' results (their ``to_json``, ``to_secure_json``, ``seconds`` and per-class counts).
        seconds: Time of each step.
        public: The public samples themselves (None without them): the report shows synthetic samples beside their
            nearest public ones.
    """

    kind: ClassVar[FileRunKind]  # set by each modality's class

    folder: Path
    config: RunConfig
    synthetic: LabeledDataset
    private: LabeledDataset
    test: LabeledDataset
    test_path: str
    ledger: BudgetLedger
    dp_counts: np.ndarray | None
    judgement: Judgement
    seconds: dict[str, float] = field(default_factory=dict)
    public: np.ndarray | None = field(default=None, repr=False)

    def paths(self) -> dict[str, str | None]:
        """Where the run and every set were read from, in full (for ``secure/`` only)."""
        data = self.config.data
        return {"run": str(self.folder), "synthetic": str(self.folder / self.kind.synthetic_file),
                "private": str(data.private), "test": self.test_path,
                "public": None if data.public is None else str(data.public)}

    @abstractmethod
    def described_data(self) -> dict[str, Any]:
        """The modality's own fields of the JSON's ``data`` (after ``class_names``): how its files are read."""

    def to_json(self) -> dict[str, Any]:
        """Every figure that may leave the secure zone (``report/evaluation.json``); each file by its name only."""
        name = self.path_names()
        judgement = self.judgement
        return {
            **self.shared_head(self.kind.format, self.kind.version, self.kind.modality),
            "data": {"class_names": list(self.class_names), **self.described_data(),
                     "synthetic": {"path": name["synthetic"], "per_class": list(judgement.synthetic_per_class)},
                     # Exact private counts are not DP: a shared report carries the release's noisy counts.
                     "private": {"path": name["private"], "per_class_dp_estimate": self.dp_private_counts()},
                     "test": {"path": name["test"], "per_class": list(judgement.test_per_class)},
                     "public": (None if self.public is None
                                else {"path": name["public"], self.kind.unit: len(self.public)})},
            "judgement": judgement.to_json(),
            # How the delivered samples were made without a public pool (the delivery stage's own words), or None.
            "made_by": delivery_note(self.folder, "made_by"),
            "pool": delivery_note(self.folder, "pool"),
            "caveat": self.kind.caveat,
            "ledger": ledger_json(self.ledger, self.folder),
            "audit": audit_json(self.folder),
        }

    def to_secure_json(self) -> dict[str, Any]:
        """The exact private-derived figures a shared report leaves out (``secure/evaluation.json``)."""
        return self.secure_json(self.kind.format, self.kind.version)


class FileRunFiles(NamedTuple):
    """How one modality reads a run's files and judges them: made for the run once its folder and test file are
    known. A read may raise ``DataError``, ``ValueError`` or ``OSError`` (:func:`evaluate_file_run` words them).

    Attributes:
        labeled: ``(path, class_names, min_per_class)`` → the private, synthetic or test set, with these classes in
            this order (None: as found).
        unlabeled: ``path`` → the public samples.
        judge: ``(synthetic, test, *, private, public, seed, epsilon, delta)`` → the modality's judgement.
        evaluation: :class:`FileRunEvaluation`'s fields → the modality's evaluation.
    """

    labeled: Callable[[str | os.PathLike[str], tuple[Any, ...] | None, int], LabeledDataset]
    unlabeled: Callable[[str | os.PathLike[str]], np.ndarray]
    judge: Callable[..., Any]
    evaluation: Callable[..., FileRunEvaluation]


def evaluate_file_run(run_dir: str | os.PathLike[str], test: str | os.PathLike[str] | None, *, seed: int,
                      kind: FileRunKind, open_files: Callable[[Path, RunConfig], FileRunFiles]) -> FileRunEvaluation:
    """Read a finished run of this ``kind`` and the real data it is judged against, with the files ``open_files``
    makes of the run (it raises :class:`~pcevolve.evaluation.inputs.EvaluationError` where the run's own settings do
    not fit), and judge it. ``test``: real held-out samples with their labels (None: the run's ``data.test``);
    ``seed`` seeds every choice and model of the judges.

    Raises:
        EvaluationError: The run or a file is missing, unreadable or does not fit (one line naming the path).
    """
    started = time.perf_counter()
    folder, config = open_run_folder(run_dir, required=("config.yaml", "ledger.json", kind.synthetic_file))
    data = config.data
    where = f"(in {folder / 'config.yaml'})"
    if data.modality != kind.modality:
        raise EvaluationError(f"run {folder} holds {data.modality} samples (data.modality {where}), not "
                              f"{kind.noun if kind.plural else 'a ' + kind.noun}")
    test_path = test if test is not None else data.test
    if test_path is None:
        raise EvaluationError(f"no test {kind.noun}: give --test {kind.test_file} (data.test {where} is empty)")
    files = open_files(folder, config)
    if not Path(data.private).is_file():
        raise EvaluationError(f"private {kind.noun} {data.private} (data.private {where}) "
                              f"{'do' if kind.plural else 'does'} not exist; run the evaluation from the folder the "
                              "run was started in")
    private = _read_labeled(files, data.private, f"private {kind.noun}", data.classes, min_per_class=0)  # as the run
    names = private.class_labels  # with the labels' JSON type (text for a CSV), which every other file must have
    synthetic = _read_labeled(files, folder / kind.synthetic_file, f"synthetic {kind.noun}", names, min_per_class=0)
    test_set = _read_labeled(files, test_path, f"test {kind.noun}", names)
    public = None
    if data.public is not None:
        try:
            public = files.unlabeled(data.public)
        except (DataError, ValueError, OSError) as error:
            raise EvaluationError(f"public {kind.noun} {data.public}: {one_line(error)}") from None
    ledger = read_ledger(folder)
    read_seconds = time.perf_counter() - started
    judgement = files.judge(synthetic, test_set, private=private, public=public, seed=seed, epsilon=ledger.spent(),
                            delta=ledger.delta)
    return files.evaluation(folder=folder, config=config, synthetic=synthetic, private=private, test=test_set,
                            test_path=str(test_path), ledger=ledger, dp_counts=read_dp_counts(folder),
                            judgement=judgement, seconds={"read": read_seconds, "total": time.perf_counter() - started},
                            public=public)


def _read_labeled(files: FileRunFiles, path: str | os.PathLike[str], what: str, class_names: tuple[Any, ...] | None,
                  *, min_per_class: int = 2) -> LabeledDataset:
    if not Path(path).is_file():
        raise EvaluationError(f"{what} {path} does not exist or is not a file")
    try:
        return files.labeled(path, class_names, min_per_class)
    except (DataError, ValueError, OSError) as error:
        raise EvaluationError(f"{what} {path}: {one_line(error)}") from None
