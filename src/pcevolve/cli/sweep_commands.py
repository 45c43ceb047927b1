"""``pcevolve sweep CONFIG --epsilons 0.5 1 2 4 8 [--max-epsilon E]`` and ``pcevolve sweep --resume SWEEP``.

The pipeline at each ε on the same private data, under one ledger for them all, each run judged on the test data,
then the privacy–utility curve (:mod:`pcevolve.sweep`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from pcevolve.cli.flags import ClassesFlag, LabelColumnFlag, NameFlag, PublicFlag, SchemaFlag, SetFlag
from pcevolve.cli.init_commands import (
    parse_settings,
    with_classes,
    with_label_column,
    with_schema,
)
from pcevolve.cli.run_commands import source_config, source_kind, step_lines
from pcevolve.config import ConfigError, RunConfig
from pcevolve.config.schema import MAX_EPSILON
from pcevolve.data import DataError
from pcevolve.randomness import NOT_DP_WARNING

if TYPE_CHECKING:  # imported by the command (see cli/main.py)
    from pcevolve.sweep import SweepOutcome


def sweep(
    arguments: list[str] | None = typer.Argument(None, help="A run configuration (YAML), each run being it at one "
                                                 "ε; or your private data (a folder of class folders, a CSV table or "
                                                 "a JSONL file of texts: then give --public), for settings chosen "
                                                 "from the data as `pcevolve run` chooses them. Omit with --resume.",
                                                 metavar="CONFIG|PRIVATE"),
    public: PublicFlag = None,
    label_column: LabelColumnFlag = None,
    classes: ClassesFlag = None,
    schema: SchemaFlag = None,
    name: NameFlag = None,
    epsilons: str | None = typer.Option(None, "--epsilons", help="The ε of each run: --epsilons 0.5 1 2 4 8 (or "
                                        "0.5,1,2,4,8)."),
    max_epsilon: float | None = typer.Option(None, "--max-epsilon", help="Refuse to start when the runs together "
                                             "(the accountant's composition) would spend more than this ε. Default: "
                                             "what the plan composes to."),
    test: Path | None = typer.Option(None, "--test", help="Real held-out data each run is judged on (default: the "
                                     "config's data.test)."),
    full: Path | None = typer.Option(None, "--full", help="Image runs: a full real training set, the upper line "
                                     "(default: the config's data.full)."),
    epochs: int | None = typer.Option(None, "--epochs", min=1, help="Image runs: the judges' CNN epochs."),
    evaluate: bool = typer.Option(True, "--evaluate/--no-evaluate", help="Judge each run and draw the curve."),
    out: Path | None = typer.Option(None, "--out", help="The sweep folder (default: RUNS_ROOT/NAME-sweep)."),
    settings: SetFlag = None,
    resume: Path | None = typer.Option(None, "--resume", help="Continue the sweep in this folder."),
    runs_root: Path = typer.Option(Path("runs"), "--runs-root", help="Where the sweep folder is created."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress reports."),
) -> None:
    """Run a config at several ε under one ledger, judge each run and draw the privacy–utility curve.

    Runs on the same private data compose: the sweep's ledger is the accountant's composition of all of them, and a
    synthetic set chosen after comparing their test scores carries that ε, not its own (the attack figures are
    computed on the private data without noise: a choice steered by them is covered by no ε). Exit code 2: the
    command line needs fixing; 1: the files, the budget or a run.
    """
    config_path, values = _split_arguments(arguments or [], epsilons)
    console = Console(stderr=True)
    if resume is not None and (config_path is not None or values or max_epsilon is not None or settings
                               or out is not None or public is not None or label_column or classes or schema
                               or name):
        _usage("--resume continues a sweep with the ε values, cap and settings it was started with; give only "
               "--resume SWEEP (and --test/--full/--epochs for its judges)")
    if resume is None and (config_path is None or not values):
        _usage("give a CONFIG file (or PRIVATE data and --public) and --epsilons, e.g. pcevolve sweep "
               "configs/demo.yaml --epsilons 1 2 4 8")
    if any(item.partition("=")[0].strip() in ("privacy.epsilon", "name") for item in settings or []):
        _usage("--set privacy.epsilon / name: each run of a sweep takes its ε from --epsilons and its name from it "
               "(eps-1, eps-8); drop the --set")
    from pcevolve.pipeline import RunError
    from pcevolve.privacy import LedgerError
    from pcevolve.sweep import SweepError, SweepPlanError, create_sweep, open_sweep, run_sweep
    from pcevolve.sweep.run import check_judging

    try:
        if resume is not None:
            opened = open_sweep(resume)
        else:
            assert config_path is not None and values
            config = _base_config(config_path, public=public, test=test, full=full, label_column=label_column,
                                  classes=classes, schema=schema, name=name, settings=settings, console=console)
            if max_epsilon is not None and not 0 < max_epsilon <= MAX_EPSILON:
                _usage(f"--max-epsilon must be in (0, {MAX_EPSILON:g}], got {max_epsilon:g}")
            if evaluate:
                check_judging(config, test, full)  # before the folder: a missing test set fails in a second
            opened, plan = create_sweep(config, values, out=out, root=runs_root, max_epsilon=max_epsilon)
            alone = ", ".join(f"{name} ε {p.total.epsilon:.3g}" for name, p in zip(plan.names, plan.plans))
            console.print(f"sweep of {len(plan.members)} runs ({alone}) compose to ε {plan.total.epsilon:.3f} at "
                          f"δ = {plan.total.delta:g}; cap {opened.ledger.total_epsilon:.3f}", highlight=False)
    except SweepPlanError as exc:
        _usage(str(exc))
    except (ConfigError, DataError, SweepError, LedgerError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    console.print(f"sweep in {opened.folder.path}; continue an interrupted one with "
                  f"`pcevolve sweep --resume {opened.folder.path}`", highlight=False)
    from pcevolve.evaluation import EvaluationError

    try:
        outcome = run_sweep(opened, test=test, full=full, evaluate=evaluate, epochs=epochs, progress=not quiet,
                            say=step_lines(console, quiet))
    except KeyboardInterrupt:
        typer.echo(f"\nstopped; continue with: pcevolve sweep --resume {opened.folder.path}", err=True)
        raise typer.Exit(130) from None
    except (ConfigError, DataError, RunError, LedgerError, EvaluationError, SweepError, OSError) as exc:
        typer.echo(f"error: {exc}\ncontinue with: pcevolve sweep --resume {opened.folder.path}", err=True)
        raise typer.Exit(1) from None
    print_sweep(outcome, Console())


def _base_config(source: Path, *, public: Path | None, test: Path | None, full: Path | None,
                 label_column: str | None, classes: str | None, schema: Path | None, name: str | None,
                 settings: list[str] | None, console: Console) -> RunConfig:
    """The config every run of the sweep starts from, as `pcevolve run SOURCE` would make it (:func:`source_config`):
    the settings are chosen once, at ε 8, and each run then takes its own ε, so the runs differ in ε alone."""
    kind = source_kind(source, None)
    assert kind is not None
    overrides = with_schema(with_classes(with_label_column(parse_settings(settings), label_column, kind == "images"),
                                         classes), schema)
    given = [flag for flag, value in (("--public", public), ("--test", test), ("--full", full), ("--name", name),
                                      ("--label-column", label_column), ("--classes", classes), ("--schema", schema),
                                      ("--set", settings))
             if value]
    return source_config(source, kind, overrides=overrides, label_column=label_column, public=public, test=test,
                         full=full, name=name, epsilon=None, given=given, console=console)


def _usage(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _split_arguments(arguments: list[str], epsilons: str | None) -> tuple[Path | None, list[float]]:
    """The config and the ε values from the command line. An option takes one value, so in ``--epsilons 0.5 1 2``
    the values after the first arrive as arguments beside CONFIG: every argument that is a number is an ε."""
    texts = [] if epsilons is None else epsilons.replace(",", " ").split()
    configs = []
    for argument in arguments:
        try:
            float(argument)
        except ValueError:
            configs.append(argument)
        else:
            texts.append(argument)
    if len(configs) > 1:
        _usage(f"give one CONFIG file, got {', '.join(configs)}")
    if texts and epsilons is None:
        _usage(f"{', '.join(texts)}: ε values follow --epsilons (pcevolve sweep CONFIG --epsilons 1 2 4 8)")
    values = []
    for text in texts:
        try:
            values.append(float(text))
        except ValueError:
            _usage(f"--epsilons: {text!r} is not a number")
    return (Path(configs[0]) if configs else None), values


def print_sweep(outcome: SweepOutcome, console: Console) -> None:
    """One row per judged run, the sweep's guarantee, and what choosing among them means."""
    from pcevolve.sweep import CHOICE_NOTE
    from pcevolve.sweep.curve import runs_table

    if not outcome.is_dp:
        console.print(f"[bold red]{NOT_DP_WARNING}[/bold red]")
    if outcome.points:
        columns, runs, references = runs_table(outcome.points)
        table = Table(title=f"pcevolve sweep — {outcome.folder}")
        for index, column in enumerate(columns):
            table.add_column(column, justify="left" if index == 0 else "right")
        for row in runs:
            table.add_row(*row)
        for label, *cells in references:
            table.add_row(f"[dim]{label}[/dim]", *cells)
        console.print(table)
    console.print(f"the sweep: (ε, δ) = ({outcome.total_epsilon:.3f}, {outcome.delta:g}) by the accountant over every "
                  f"run's releases ({outcome.folder}/ledger.json)", highlight=False)
    console.print(f"note: {CHOICE_NOTE}", highlight=False)
    if outcome.curve is not None:
        console.print(f"curve: {outcome.curve} · points: {outcome.folder}/results.json · each run's report: "
                      f"{outcome.folder}/<run>/report/report.html", highlight=False)

