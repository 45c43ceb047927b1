"""``pcevolve evaluate RUN_DIR --test DIR [--full DIR]``: judge a finished run and write RUN_DIR/report/."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from pcevolve.evaluation import (
    EvaluationError,
    EvaluationSettings,
    RunEvaluation,
    evaluate_run,
)
from pcevolve.report import PrivateSampleInReport, write_report
from pcevolve.report.build import comparison_text, interval, pct


def evaluate(
    run_dir: Path = typer.Argument(..., help="A finished run folder (pcevolve run output)."),
    test: Path = typer.Option(..., "--test", help="Real held-out test images, one folder per class."),
    full: Path | None = typer.Option(None, "--full", help="Full real training set: the upper reference line."),
    epochs: int = typer.Option(EvaluationSettings.cnn_epochs, "--epochs", min=1,
                               help="CNN epochs, the same for every line."),
    full_max: int = typer.Option(EvaluationSettings.full_max, "--full-max", min=2,
                                 help="Most full-set images used (seeded choice)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seeds every choice and model of the evaluation."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress reports."),
) -> None:
    """Utility, distribution and privacy of a run's synthetic set, class by class; writes RUN_DIR/report/."""
    settings = EvaluationSettings(seed=seed, cnn_epochs=epochs, full_max=full_max)
    try:
        evaluation = evaluate_run(run_dir, test, full, settings=settings, progress=not quiet)
        folder = write_report(evaluation)
    except (EvaluationError, PrivateSampleInReport) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    console = Console()
    print_headline(evaluation, console)
    console.print(f"report: {folder / 'report.html'} · {folder / 'report.md'} · {folder / 'evaluation.json'}; "
                  f"exact private figures and timings: {evaluation.inputs.folder / 'secure' / 'evaluation.json'}",
                  soft_wrap=True, highlight=False)


def print_headline(evaluation: RunEvaluation, console: Console) -> None:
    """The headline table: each line's accuracy, the original method's comparisons, the strongest attack, hints."""
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


if __name__ == "__main__":  # python -m pcevolve.cli.evaluate_commands RUN_DIR --test DIR
    typer.run(evaluate)
