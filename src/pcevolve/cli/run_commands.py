"""``pcevolve run CONFIG``, ``pcevolve run PRIVATE --public POOL`` and ``pcevolve run --resume RUN_DIR``.

The whole pipeline, then a one-screen summary.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from pcevolve.cli.init_commands import (
    EPSILON_HELP,
    FULL_HELP,
    LABEL_HELP,
    NAME_HELP,
    PUBLIC_HELP,
    SET_HELP,
    TEST_HELP,
    parse_settings,
    starter_or_exit,
    with_label_column,
)
from pcevolve.config import ConfigError, RunConfig, load_config, parse_config, with_dotted
from pcevolve.data import DataError
from pcevolve.randomness import FLOATING_POINT_NOTE, NOT_DP_WARNING

if TYPE_CHECKING:  # imported by the commands that use them (see cli/main.py)
    from pcevolve.pipeline import RunOutcome


def run(
    source: Path | None = typer.Argument(None, help="A run configuration (YAML), or your private data (a folder "
                                         "of class folders, a CSV table or a JSONL file of texts) for a one-line "
                                         "run (then give --public). Omit with --resume."),
    public: Path | None = typer.Option(None, "--public", help=PUBLIC_HELP),
    test: Path | None = typer.Option(None, "--test", help=TEST_HELP),
    full: Path | None = typer.Option(None, "--full", help=FULL_HELP),
    epsilon: float | None = typer.Option(None, "--epsilon", help=EPSILON_HELP + " [8]"),
    name: str | None = typer.Option(None, "--name", help=NAME_HELP),
    label_column: str | None = typer.Option(None, "--label-column", help=LABEL_HELP),
    settings: list[str] | None = typer.Option(None, "--set", help=SET_HELP),
    resume: Path | None = typer.Option(None, "--resume", help="Continue the run in this folder."),
    executor: str | None = typer.Option(None, "--executor", help="Where the bulk work (public encoding, the "
                                        "search's evaluations) runs: local, or ray (the cluster at RAY_ADDRESS, "
                                        "else one started on this machine). Overrides the config, also on "
                                        "--resume; the results are the same."),
    runs_root: Path = typer.Option(Path("runs"), "--runs-root", help="Where new run folders are created."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress reports."),
) -> None:
    """Turn the private folder into a DP synthetic dataset in runs/NAME/ (resumable after a crash).

    `pcevolve run CONFIG` runs a configuration file; `pcevolve run PRIVATE --public POOL [--epsilon 8]` chooses
    the configuration from the data first, as `pcevolve init` would, and runs it.
    """
    from pcevolve.pipeline import RunError, discard_if_unstarted, open_run, run_pipeline
    from pcevolve.privacy import LedgerError

    console = Console(stderr=True)
    if source is None and resume is None:
        typer.echo("error: give a CONFIG file or your PRIVATE data folder, or --resume RUN_DIR", err=True)
        raise typer.Exit(2)
    from_data = source is not None and (source.is_dir() or source.suffix.lower() in (".csv", ".jsonl"))
    data_flags = {"--public": public, "--test": test, "--full": full, "--epsilon": epsilon, "--name": name,
                  "--label-column": label_column, "--set": settings or None}
    if not from_data and any(value is not None for value in data_flags.values()):
        given = ", ".join(flag for flag, value in data_flags.items() if value is not None)
        typer.echo(f"error: {given} choose the configuration from a data folder (`pcevolve run PRIVATE --public "
                   "POOL`); with a config file set them in the file", err=True)
        raise typer.Exit(2)
    try:
        if from_data:
            assert source is not None
            starter = starter_or_exit(source, public=public, test=test, full=full,
                                      epsilon=8.0 if epsilon is None else epsilon, name=name,
                                      settings=with_label_column(parse_settings(settings), label_column))
            for line in starter.findings:
                console.print(line, highlight=False)
            for choice in starter.choices:
                console.print(f"  {choice.key} = {choice.value}  [dim]({choice.why})[/dim]", highlight=False)
            config = starter.config
        else:
            config = load_config(source) if source is not None else None
        config, folder, resumed = open_run(config, root=runs_root, resume=resume)
        if executor is not None:
            config = with_executor(config, executor)
    except (ConfigError, DataError, RunError, LedgerError, OSError) as exc:  # OSError: an unwritable runs root
        typer.echo(f"error: {_describe(exc)}", err=True)
        raise typer.Exit(1) from None
    console.print(f"{'resuming' if resumed else 'starting'} run [bold]{config.name}[/bold] in {folder.path}")
    try:
        outcome = run_pipeline(config, folder, progress=not quiet,
                               say=lambda text: console.print(f"[cyan]»[/cyan] {text}"))
    except (ConfigError, DataError, RunError, LedgerError, FileNotFoundError, OSError) as exc:
        typer.echo(f"error: {_describe(exc)}", err=True)
        if not resumed and discard_if_unstarted(folder):
            typer.echo(f"nothing was spent; {folder.path} was removed", err=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        if not resumed and discard_if_unstarted(folder):
            typer.echo(f"\nstopped before any budget was spent; {folder.path} was removed", err=True)
        else:
            typer.echo(f"\nstopped; continue with: pcevolve run --resume {folder.path}", err=True)
        raise typer.Exit(130) from None
    try:
        print_summary(outcome, Console())
    except KeyboardInterrupt:  # the run itself is finished and saved
        typer.echo(f"\nstopped; the run is finished: pcevolve run --resume {folder.path} prints its summary", err=True)
        raise typer.Exit(130) from None
    if from_data:
        Console().print(f"the configuration chosen from your data is in {outcome.folder}/config.yaml; resume an "
                        f"interrupted run with `pcevolve run --resume {outcome.folder}`")


def _describe(exc: BaseException) -> str:
    """One line for the user: an OS error names its file and what went wrong (a full disk says so)."""
    if isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError):
        where = f"{exc.filename}: " if exc.filename else ""
        hint = " — free some space, then resume" if exc.errno == errno.ENOSPC else ""
        return f"{where}{exc.strerror or exc}{hint}"
    return str(exc)


def print_summary(outcome: RunOutcome, console: Console) -> None:
    """ε per stage, time per stage that reads no private data, what was written; a warning when it is not DP."""
    from pcevolve.pipeline.stages import STAGES

    if not outcome.is_dp:
        console.print(f"[bold red]{NOT_DP_WARNING}[/bold red]")
    table = Table(title=f"pcevolve run — {outcome.folder}", show_lines=False)
    table.add_column("stage")
    table.add_column("ε spent", justify="right")
    table.add_column("seconds", justify="right")
    for stage in ("data", *(s.name for s in STAGES)):
        if stage not in outcome.seconds and stage not in outcome.private_stages:
            continue
        spent = outcome.epsilon.get(stage, None)
        shown = f"{outcome.seconds[stage]:.0f}" if stage in outcome.seconds else "secure/"
        table.add_row(stage, "" if spent is None else f"{spent:.3f}", shown)
    table.add_row("[bold]total[/bold]", f"[bold]{outcome.total_epsilon:.3f}[/bold]", "secure/")
    console.print(table)
    claim = (f"by the accountant (composed, not summed); {FLOATING_POINT_NOTE}" if outcome.is_dp
             else "— NOT DP (reproducible noise)")
    console.print(f"(ε, δ) = ({outcome.total_epsilon:.3f}, {outcome.delta:g}) {claim}")
    if outcome.private_stages:
        console.print(f"times of the stages that read private data ({', '.join(outcome.private_stages)}) and the "
                      f"total are in {outcome.folder}/secure/timings.json: they grow with the private batch sizes, "
                      "so they stay in the secure zone")
    counts = ", ".join(f"{name} {count}" for name, count in zip(outcome.class_names, outcome.synthetic_counts,
                                                                 strict=True))
    console.print(f"synthetic set: {sum(outcome.synthetic_counts)} {outcome.noun}s ({counts}) in {outcome.delivered}")
    console.print(f"search: {outcome.generations} generations, DP fitness {outcome.best_fitness:.4f} "
                  f"(one-shot DP Gaussian baseline {outcome.baseline_fitness:.4f}); "
                  f"decoded samples re-encoded into their class: {outcome.reencode_agreement:.1%}")
    console.print(f"ledger: {outcome.folder}/ledger.json · curve: {outcome.folder}/fitness_curve.png · "
                  f"records: {outcome.folder}/records.jsonl")
    console.print(f"to hand the synthetic set on without the rest of the run folder: pcevolve export {outcome.folder} "
                  "OUT_FOLDER")


def with_executor(config: RunConfig, name: str) -> RunConfig:
    """``config`` with ``executor.name`` set to ``name`` (validated: an unknown name or a missing Ray is a
    :class:`ConfigError`). The executor is not part of the config's hash, so a resumed run may change it."""
    return parse_config(with_dotted(config.model_dump(mode="json"), {"executor.name": name}), source="--executor")
