"""``pcevolve evaluate RUN_DIR [--test PATH] [--full DIR]``: judge a finished run and write RUN_DIR/report/.

The judge is the one of the run's ``data.modality`` (:data:`pcevolve.report.judges.JUDGES`): for images ``--test`` is a
folder with one folder per class, for tables a CSV file with the label column, for texts a JSON Lines (or CSV) file
with the text and label fields; without ``--test`` the run's ``data.test`` is used.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from pcevolve.catalog.modalities import MODALITY_TRAITS, modality_spec
from pcevolve.evaluation.settings import EvaluationSettings


def evaluate(
    run_dir: Path = typer.Argument(..., help="A finished run folder (pcevolve run output)."),
    test: Path | None = typer.Option(None, "--test", help="Real held-out test data: for an image run a folder with "
                                     "one folder per class, for a table run a CSV file with the label column, for a "
                                     "text run a JSONL (or CSV) file with the text and label fields. Default: the "
                                     "run's data.test."),
    full: Path | None = typer.Option(None, "--full", help="Image runs: full real training set, the upper reference "
                                     "line."),
    epochs: int = typer.Option(EvaluationSettings.cnn_epochs, "--epochs", min=1,
                               help="Image runs: CNN epochs, the same for every line."),
    full_max: int = typer.Option(EvaluationSettings.full_max, "--full-max", min=2,
                                 help="Image runs: most full-set images used (seeded choice)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seeds every choice and model of the evaluation."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress reports."),
) -> None:
    """Utility, distribution and privacy of a run's synthetic set, class by class; writes RUN_DIR/report/."""
    from pcevolve.evaluation import EvaluationError
    from pcevolve.report.judges import judge_run
    from pcevolve.report import PrivateSampleInReport

    try:
        check_test_kinds(run_dir, test, full)
        verdict = judge_run(run_dir, test, full=full, seed=seed, epochs=epochs, full_max=full_max,
                            progress=not quiet)
    except (EvaluationError, PrivateSampleInReport) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    console = Console()
    # How the run's modality sums its evaluation up on the console (its spec's headline; the files are the judge's).
    modality_spec(verdict.modality).load("headline")(verdict.evaluation, console)
    folder = verdict.report
    console.print(f"report: {folder / 'report.html'} · {folder / 'report.md'} · {folder / 'evaluation.json'}; "
                  f"exact private figures and timings: {verdict.secure}", soft_wrap=True, highlight=False)


def check_test_kinds(run_dir: Path, test: Path | None, full: Path | None) -> None:
    """Check, before any file is read, that the test data (``test``, else the run's ``data.test``) and ``full`` are
    of a kind the run's modality reads (:mod:`pcevolve.data.kinds`): a JSONL test file for a table run, or a CSV one
    for an image run, is then one line naming both the file and the run, not what a reader of the other kind makes
    of it.

    Raises:
        EvaluationError: The run folder cannot be read, or a path is missing, of a type pcevolve does not read, or
            of another kind than the run's data — one line naming the path and what to give instead.
    """
    from pcevolve.data import DataError
    from pcevolve.data.kinds import Role, kind_of, run_context, split_kind_problem
    from pcevolve.evaluation import EvaluationError
    from pcevolve.report.judges import read_run_config

    folder, config = read_run_config(run_dir)
    context = run_context(folder, config.data.modality)
    if test is None and config.data.test is not None:
        test = Path(config.data.test)
    # --full beside a table or text run is the judge's to refuse (it says why); only its kind is checked here.
    splits: tuple[tuple[Role, Path | None], ...] = (("test", test), ("full", full))
    for role, path in splits:
        if role == "full" and not MODALITY_TRAITS[config.data.modality].full_real_reference:
            continue
        if path is None:
            continue
        try:
            problem = split_kind_problem(path, kind_of(path), role, config.data.modality, context)
        except DataError as error:
            problem = error.problems[0]  # kind_of names one problem
        if problem is not None:
            raise EvaluationError(str(problem))


if __name__ == "__main__":  # python -m pcevolve.cli.evaluate_commands RUN_DIR --test PATH
    typer.run(evaluate)
