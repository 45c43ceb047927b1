"""``pcevolve evaluate RUN_DIR [--test PATH] [--full DIR]``: judge a finished run and write RUN_DIR/report/.

The judge is the one of the run's ``data.modality`` (:data:`pcevolve.report.judges.JUDGES`): for images ``--test`` is a
folder with one folder per class, for tables a CSV file with the label column, for texts a JSON Lines (or CSV) file
with the text and label fields; without ``--test`` the run's ``data.test`` is used.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from pcevolve.catalog.modalities import MODALITY_TRAITS, modality_spec
from pcevolve.evaluation.settings import EvaluationSettings

if TYPE_CHECKING:  # imported by the commands that use them (see cli/main.py)
    from pcevolve.evaluation import RunEvaluation, TableRunEvaluation, TextRunEvaluation


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


def print_headline(evaluation: RunEvaluation, console: Console) -> None:
    """The headline table: each line's accuracy, the original method's comparisons, the strongest attack, hints."""
    from pcevolve.report.build import comparison_text, interval, pct

    head = evaluation.headline()
    table = Table(title=f"pcevolve evaluate — {evaluation.inputs.folder}")
    for column, justify in (("training set", "left"), ("CNN acc.", "right"), ("probe acc.", "right")):
        table.add_column(column, justify=justify)
    for key, line in head["lines"].items():
        name = f"[bold]{line['label']}[/bold]" if key == "synthetic" else line["label"]
        table.add_row(name, pct(line["cnn_accuracy"]), pct(line["probe_accuracy"]))
    console.print(table)
    compare = Table(title="against the original method's reported figures (CNN)")
    for column in ("comparison", "ours", "original"):
        compare.add_column(column)
    seed = head["seed"]
    for key, label in (("delta_over_fewshot", "Δ over few-shot real"), ("gap_to_full", "gap to full real"),
                       ("synthetic_aug_over_fewshot", "synthetic + aug. over few-shot real")):
        compare.add_row(label, comparison_text(head["comparisons"]["cnn"][key]), seed[key]["text"])
    attack = head["attack_success"]
    compare.add_row("attack success (strongest)", f"{interval(attack)} {attack['space']}/{attack['attack']}",
                    seed["attack_success"]["text"])
    console.print(compare)
    claim = "" if evaluation.inputs.ledger.is_dp else " — NOT DP: the run used reproducible noise"
    console.print(f"(ε, δ) = ({evaluation.epsilon:.3f}, {evaluation.delta:g}){claim}; worst class: "
                  f"{evaluation.per_class()[0]['class']}", soft_wrap=True)
    for hint in evaluation.hints:
        if hint.fired:
            console.print(f"[yellow]hint ({hint.rule}):[/yellow] {hint.advice} ({hint.observed})", soft_wrap=True)


def print_table_headline(evaluation: TableRunEvaluation, console: Console) -> None:
    """A tabular run's headline: both models trained on synthetic vs private rows, fidelity, the attack."""
    from pcevolve.report.build import pct

    judgement = evaluation.judgement
    table = Table(title=f"pcevolve evaluate — {evaluation.folder}")
    for column, justify in (("trained on", "left"), ("model", "left"), ("ROC AUC", "right"), ("accuracy", "right"),
                            ("macro-F1", "right")):
        table.add_column(column, justify=justify)
    for result in judgement.utility:
        scores = result.scores
        name = "synthetic" if result.line == "synthetic" else "private rows (reference, not DP)"
        table.add_row(f"[bold]{name}[/bold]" if result.line == "synthetic" else name, result.model,
                      "—" if scores is None or scores.auc is None else f"{scores.auc:.3f}",
                      "—" if scores is None else pct(scores.accuracy), "—" if scores is None else pct(scores.macro_f1))
    console.print(table)
    shared = judgement.to_json()
    fidelity = shared["fidelity"]
    console.print(f"fidelity: mean TVD per column {fidelity['mean_tvd']:.3f}; mean correlation difference "
                  f"{_number(fidelity['correlation']['mean_abs_difference'])}", soft_wrap=True, highlight=False)
    privacy = shared["privacy"]
    if privacy is not None:
        copied = "YES" if privacy["private_rows_copied"] else "none"
        console.print(f"membership attack AUC {privacy['auc']:.2f} (0.5: the attacker cannot tell); synthetic rows "
                      f"copied from the private table: {copied}", soft_wrap=True, highlight=False)
    claim = "" if evaluation.ledger.is_dp else " — NOT DP: the run used reproducible noise"
    console.print(f"(ε, δ) = ({evaluation.epsilon:.3f}, {evaluation.delta:g}){claim}; smallest test class: "
                  f"{judgement.class_names[judgement.minority_class]}", soft_wrap=True)


def print_text_headline(evaluation: TextRunEvaluation, console: Console) -> None:
    """A text run's headline: both probes trained on synthetic vs private texts, the MMD, the attack and copies."""
    from pcevolve.report.build import pct

    judgement = evaluation.judgement
    table = Table(title=f"pcevolve evaluate — {evaluation.folder}")
    for column, justify in (("trained on", "left"), ("probe", "left"), ("accuracy", "right"),
                            ("macro-F1", "right")):
        table.add_column(column, justify=justify)
    for result in judgement.utility:
        scores = result.scores
        name = "synthetic" if result.line == "synthetic" else "private texts (reference, not DP)"
        table.add_row(f"[bold]{name}[/bold]" if result.line == "synthetic" else name, result.model,
                      "—" if scores is None else pct(scores.accuracy), "—" if scores is None else pct(scores.macro_f1))
    console.print(table)
    shared = judgement.to_json()
    mmd = shared["distribution"]["synthetic"]["overall"]
    console.print(f"distribution: MMD² to the real test texts {_number(mmd, 4)} (LSA space; about 0: alike)",
                  soft_wrap=True, highlight=False)
    privacy = shared["privacy"]
    if privacy is not None:
        copied = "YES" if privacy["private_texts_copied"] else "none"
        near = "YES" if privacy["private_texts_near_copied"] else "none"
        console.print(f"membership attack AUC {privacy['auc']:.2f} (0.5: the attacker cannot tell); synthetic texts "
                      f"copied from the private texts: {copied}; nearly copied (similarity ≥ "
                      f"{privacy['near_duplicate_cosine']:g}): {near}", soft_wrap=True, highlight=False)
    claim = "" if evaluation.ledger.is_dp else " — NOT DP: the run used reproducible noise"
    console.print(f"(ε, δ) = ({evaluation.epsilon:.3f}, {evaluation.delta:g}){claim}; smallest test class: "
                  f"{judgement.class_names[judgement.minority_class]}", soft_wrap=True)


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


if __name__ == "__main__":  # python -m pcevolve.cli.evaluate_commands RUN_DIR --test PATH
    typer.run(evaluate)
