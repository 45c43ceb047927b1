"""``pcevolve run CONFIG`` and ``pcevolve run --resume RUN_DIR``: the whole pipeline, then a one-screen summary."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from pcevolve.config import ConfigError, load_config
from pcevolve.data import DataError
from pcevolve.pipeline import RunError, RunOutcome, open_run, run_pipeline
from pcevolve.privacy import LedgerError
from pcevolve.randomness import NOT_DP_WARNING


def run(
    config_path: Path | None = typer.Argument(None, help="Run configuration (YAML). Omit with --resume."),
    resume: Path | None = typer.Option(None, "--resume", help="Continue the run in this folder."),
    runs_root: Path = typer.Option(Path("runs"), "--runs-root", help="Where new run folders are created."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
) -> None:
    """Turn the private folder into a DP synthetic dataset in runs/NAME/ (resumable after a crash)."""
    console = Console(stderr=True)
    if config_path is None and resume is None:
        typer.echo("error: give a CONFIG file, or --resume RUN_DIR", err=True)
        raise typer.Exit(2)
    try:
        config = load_config(config_path) if config_path is not None else None
        config, folder, resumed = open_run(config, root=runs_root, resume=resume)
        console.print(f"{'resuming' if resumed else 'starting'} run [bold]{config.name}[/bold] in {folder.path}")
        outcome = run_pipeline(config, folder, progress=not quiet and sys.stderr.isatty(),
                               say=lambda text: console.print(f"[cyan]»[/cyan] {text}"))
    except (ConfigError, DataError, RunError, LedgerError, FileNotFoundError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    print_summary(outcome, Console())


def print_summary(outcome: RunOutcome, console: Console) -> None:
    """ε per stage, time per stage that reads no private data, what was written; a warning when it is not DP."""
    if not outcome.is_dp:
        console.print(f"[bold red]{NOT_DP_WARNING}[/bold red]")
    table = Table(title=f"pcevolve run — {outcome.folder}", show_lines=False)
    table.add_column("stage")
    table.add_column("ε spent", justify="right")
    table.add_column("seconds", justify="right")
    ledger_stage = {"representation": "representation", "decoder": "decoder", "release": "fitness"}
    order = ("data", "representation", "decoder", "public features", "release", "search", "delivery")
    for stage in order:
        if stage not in outcome.seconds and stage not in outcome.private_stages:
            continue
        spent = outcome.epsilon.get(ledger_stage.get(stage, ""), None)
        shown = f"{outcome.seconds[stage]:.0f}" if stage in outcome.seconds else "secure/"
        table.add_row(stage, "" if spent is None else f"{spent:.3f}", shown)
    table.add_row("[bold]total[/bold]", f"[bold]{outcome.total_epsilon:.3f}[/bold]", "secure/")
    console.print(table)
    claim = "by the accountant (composed, not summed)" if outcome.is_dp else "— NOT DP (reproducible noise)"
    console.print(f"(ε, δ) = ({outcome.total_epsilon:.3f}, {outcome.delta:g}) {claim}")
    if outcome.private_stages:
        console.print(f"times of the stages that read private data ({', '.join(outcome.private_stages)}) and the "
                      f"total are in {outcome.folder}/secure/timings.json: they grow with the private batch sizes, "
                      "so they stay in the secure zone")
    counts = ", ".join(f"{name} {count}" for name, count in zip(outcome.class_names, outcome.synthetic_counts,
                                                                 strict=True))
    console.print(f"synthetic set: {sum(outcome.synthetic_counts)} samples ({counts}) in {outcome.folder}/synthetic")
    console.print(f"search: {outcome.generations} generations, DP fitness {outcome.best_fitness:.4f} "
                  f"(one-shot DP Gaussian baseline {outcome.baseline_fitness:.4f}); "
                  f"decoded samples re-encoded into their class: {outcome.reencode_agreement:.1%}")
    console.print(f"ledger: {outcome.folder}/ledger.json · curve: {outcome.folder}/fitness_curve.png · "
                  f"records: {outcome.folder}/records.jsonl")
