"""The judges of ``pcevolve evaluate``, one per modality: :data:`JUDGES`, keyed by a run's ``data.modality``.

A judge evaluates a finished run folder, writes ``RUN/report/`` (shareable) and ``RUN/secure/evaluation.json``
(exact private-derived figures), and returns a :class:`Verdict`. A modality's spec names its judge (its ``judge``,
:mod:`pcevolve.catalog.modalities`): the image, table and text judges are below, and :data:`JUDGES` finds each by
``data.modality`` (the run side, :data:`pcevolve.modalities.MODALITIES`, never imports this package).

Each judge joins an evaluation (:mod:`pcevolve.evaluation`) to its report, so it lives above both: the evaluation
never imports the report. The report's writers are imported inside each judge: they load the plotting libraries.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcevolve.catalog.modalities import ByModality
from pcevolve.config import ConfigError, RunConfig, load_config
from pcevolve.evaluation.evaluate import EvaluationSettings, evaluate_run
from pcevolve.evaluation.inputs import EvaluationError, one_line
from pcevolve.evaluation.table_run import evaluate_table_run
from pcevolve.evaluation.text_run import evaluate_text_run

#: Files every finished run folder holds, whatever its modality.
RUN_FILES = ("config.yaml", "ledger.json")


@dataclass(frozen=True)
class JudgeRequest:
    """What ``pcevolve evaluate`` was asked.

    Attributes:
        run_dir: The run folder.
        config: Its configuration (already read, to choose the judge).
        test: The real held-out data; None: the run's ``data.test``.
        full: Images only: a full real training set, the upper reference line.
        seed: Seeds every choice and model of the evaluation.
        epochs: Images only: CNN epochs.
        full_max: Images only: most full-set images used.
        progress: Show progress.
    """

    run_dir: Path
    config: RunConfig
    test: Path | None = None
    full: Path | None = None
    seed: int = 0
    epochs: int = EvaluationSettings.cnn_epochs
    full_max: int = EvaluationSettings.full_max
    progress: bool = False


@dataclass(frozen=True)
class Verdict:
    """A judged run: the evaluation object of its modality and where its files went."""

    modality: str
    evaluation: Any
    report: Path
    secure: Path


Judge = Callable[[JudgeRequest], Verdict]


def _test_path(request: JudgeRequest, what: str) -> Path:
    if request.test is not None:
        return request.test
    if request.config.data.test is None:
        raise EvaluationError(f"no test data: give --test {what} (data.test in {request.run_dir / 'config.yaml'} "
                              "is empty)")
    return Path(request.config.data.test)


def judge_image_run(request: JudgeRequest) -> Verdict:
    """:func:`~pcevolve.evaluation.evaluate.evaluate_run` and :func:`pcevolve.report.write_report`."""
    from pcevolve.report import write_report  # see the module docstring

    settings = EvaluationSettings(seed=request.seed, cnn_epochs=request.epochs, full_max=request.full_max)
    evaluation = evaluate_run(request.run_dir, _test_path(request, "DIR"), request.full, settings=settings,
                              progress=request.progress)
    folder = write_report(evaluation)
    return Verdict("image", evaluation, folder, evaluation.inputs.folder / "secure" / "evaluation.json")


def _judge_file_run(request: JudgeRequest, modality: str, evaluate: Callable[..., Any], write: Callable[[Any], Path],
                    *, run: str, samples: str, test_name: str) -> Verdict:
    """A table's or a text's judge: no full reference (the private samples are the real one), then evaluate, write."""
    if request.full is not None:
        raise EvaluationError(f"--full is for image runs: a {run} run is judged against its private {samples} as the "
                              "real reference")
    evaluation = evaluate(request.run_dir, _test_path(request, test_name), seed=request.seed)
    folder = write(evaluation)
    return Verdict(modality, evaluation, folder, evaluation.folder / "secure" / "evaluation.json")


def judge_table_run(request: JudgeRequest) -> Verdict:
    """:func:`~pcevolve.evaluation.table_run.evaluate_table_run` and :func:`pcevolve.report.write_table_report`."""
    from pcevolve.report.table import write_table_report  # see the module docstring

    return _judge_file_run(request, "tabular", evaluate_table_run, write_table_report, run="table", samples="rows",
                           test_name="TEST.csv")


def judge_text_run(request: JudgeRequest) -> Verdict:
    """:func:`~pcevolve.evaluation.text_run.evaluate_text_run` and :func:`pcevolve.report.text.write_text_report`."""
    from pcevolve.report.text import write_text_report  # see the module docstring

    return _judge_file_run(request, "text", evaluate_text_run, write_text_report, run="text", samples="texts",
                           test_name="TEST.jsonl")


#: The judge of each modality, by ``data.modality`` (the one its spec names).
JUDGES: ByModality[Judge] = ByModality("judge", lambda spec: spec.load("judge"))


def read_run_config(run_dir: str | os.PathLike[str]) -> tuple[Path, RunConfig]:
    """The run folder and its config, checked only as far as every modality needs (each judge checks the rest)."""
    folder = Path(run_dir)
    if not folder.is_dir():
        raise EvaluationError(f"run folder {folder} does not exist or is not a folder")
    missing = [name for name in RUN_FILES if not (folder / name).exists()]
    if missing:
        raise EvaluationError(f"run folder {folder} is not a finished pcevolve run (missing {', '.join(missing)})")
    try:
        return folder, load_config(folder / "config.yaml")
    except ConfigError as error:
        raise EvaluationError(one_line(error)) from None


def judge_run(run_dir: str | os.PathLike[str], test: str | os.PathLike[str] | None = None,
              **options: Any) -> Verdict:
    """Judge a finished run with the judge of its ``data.modality`` (``options``: the rest of :class:`JudgeRequest`).

    Raises:
        EvaluationError: The run cannot be judged (one line naming the path), including a modality with no judge.
        pcevolve.report.PrivateSampleInReport: The report would carry a private sample; nothing was written.
    """
    folder, config = read_run_config(run_dir)
    modality = config.data.modality
    if modality not in JUDGES:
        raise EvaluationError(f"run {folder} holds {modality} samples (data.modality); pcevolve evaluate judges "
                              f"{', '.join(sorted(JUDGES))} runs")
    request = JudgeRequest(run_dir=folder, config=config, test=None if test is None else Path(test), **options)
    return JUDGES[modality](request)
