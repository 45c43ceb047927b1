"""``pcevolve run CONFIG``, ``pcevolve run PRIVATE --public POOL`` and ``pcevolve run --resume RUN_DIR``.

The whole pipeline, then a one-screen summary.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from pcevolve.catalog.modalities import MODALITY_TRAITS
from pcevolve.cli.flags import (
    EPSILON_HELP,
    ClassesFlag,
    FullFlag,
    LabelColumnFlag,
    NameFlag,
    PublicFlag,
    SchemaFlag,
    SetFlag,
    TestFlag,
)
from pcevolve.cli.init_commands import (
    budget_or_exit,
    parse_settings,
    starter_config,
    starter_or_exit,
    with_classes,
    with_label_column,
    with_schema,
)
from pcevolve.config import ConfigError, RunConfig, load_config, with_settings
from pcevolve.data import DataError
from pcevolve.randomness import FLOATING_POINT_NOTE, NOT_DP_WARNING
from pcevolve.starters import run_name

if TYPE_CHECKING:  # imported by the commands that use them (see cli/main.py)
    from pcevolve.pipeline import RunOutcome


def run(
    source: Path | None = typer.Argument(None, help="A run configuration (YAML), or your private data (a folder "
                                         "of class folders, a CSV table or a JSONL file of texts) for a one-line "
                                         "run (then give --public). Omit with --resume."),
    public: PublicFlag = None,
    test: TestFlag = None,
    full: FullFlag = None,
    epsilon: float | None = typer.Option(None, "--epsilon", help=EPSILON_HELP + " [default: 8.0]"),
    name: NameFlag = None,
    label_column: LabelColumnFlag = None,
    classes: ClassesFlag = None,
    schema: SchemaFlag = None,
    settings: SetFlag = None,
    resume: Path | None = typer.Option(None, "--resume", help="Continue the run in this folder."),
    executor: str | None = typer.Option(None, "--executor", help="Where the bulk work (public encoding, the "
                                        "search's evaluations) runs: local, or ray (the cluster at RAY_ADDRESS, "
                                        "else one started on this machine). Overrides the config, also on "
                                        "--resume; the results are the same."),
    runs_root: Path = typer.Option(Path("runs"), "--runs-root", help="Where new run folders are created."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress reports."),
) -> None:
    """Turn the private folder into a DP synthetic dataset in runs/NAME/ (resumable after a crash).

    `pcevolve run CONFIG [--epsilon 1] [--set KEY=VALUE]` runs a configuration file, with these settings on top;
    `pcevolve run PRIVATE --public POOL [--epsilon 8]` chooses the configuration from the data first, as
    `pcevolve init` would, and runs it. Exit code 2: the command line needs fixing; 1: the files or the run.
    """
    console = Console(stderr=True)
    kind = source_kind(source, resume)
    flags = {"--public": public, "--test": test, "--full": full, "--epsilon": epsilon, "--name": name,
             "--label-column": label_column, "--classes": classes, "--schema": schema, "--set": settings or None}
    given = [flag for flag, value in flags.items() if value is not None]
    if resume is not None and given:
        _usage(f"--resume continues a run with the settings it was started with; {', '.join(given)} cannot change "
               "them. Start a new run instead (another --name), or resume without them")
    set_settings = parse_settings(settings)
    overrides = with_schema(with_classes(with_label_column(set_settings, label_column, kind == "images"), classes),
                            schema)
    budget_or_exit(epsilon)
    planned = name if name is not None else run_name(source) if kind not in ("config", None) and source else None
    if planned is not None and (runs_root / planned).exists():  # before the data is read or the settings chosen
        _usage(f"{runs_root / planned} already exists: continue it with `pcevolve run --resume {runs_root / planned}`,"
               " or give the new run another --name")
    # Only now the pipeline (and torch): the command line is refused in about a second when it is wrong.
    from pcevolve.pipeline import RunError, discard_if_unstarted, open_run, run_pipeline
    from pcevolve.privacy import LedgerError
    try:
        if kind is not None:
            assert source is not None
            config = source_config(source, kind, overrides=overrides, label_column=label_column, public=public,
                                   test=test, full=full, name=name, epsilon=epsilon, given=given, console=console,
                                   set_keys=set(set_settings))
        else:
            config = None
        if config is not None and executor is not None:  # checked before a folder exists
            config = _executor_or_exit(config, executor)
        config, folder, resumed = open_run(config, root=runs_root, resume=resume)
        if resumed and executor is not None:
            config = _executor_or_exit(config, executor)
    except (ConfigError, DataError, RunError, LedgerError, OSError) as exc:  # OSError: an unwritable runs root
        typer.echo(f"error: {_describe(exc)}", err=True)
        raise typer.Exit(1) from None
    console.print(f"{'resuming' if resumed else 'starting'} run [bold]{config.name}[/bold] in {folder.path}")
    try:
        outcome = run_pipeline(config, folder, progress=not quiet,
                               say=step_lines(console, quiet))
    except KeyboardInterrupt:
        if not resumed and discard_if_unstarted(folder):
            typer.echo(f"\nstopped before any budget was spent; {folder.path} was removed", err=True)
        else:
            typer.echo(f"\nstopped; continue with: pcevolve run --resume {folder.path}", err=True)
        raise typer.Exit(130) from None
    except BaseException as exc:
        # Whatever raised it: a new run that spent nothing leaves no folder to block its name.
        removed = not resumed and discard_if_unstarted(folder)
        if not isinstance(exc, (ConfigError, DataError, RunError, LedgerError, OSError)):
            raise  # a bug: its traceback is what a report needs
        typer.echo(f"error: {_describe(exc)}", err=True)
        if removed:
            typer.echo(f"nothing was spent; {folder.path} was removed", err=True)
        raise typer.Exit(1) from None
    try:
        print_summary(outcome, Console())
    except KeyboardInterrupt:  # the run itself is finished and saved
        typer.echo(f"\nstopped; the run is finished: pcevolve run --resume {folder.path} prints its summary", err=True)
        raise typer.Exit(130) from None
    if kind not in ("config", None):
        Console().print(f"the configuration chosen from your data is in {outcome.folder}/config.yaml; resume an "
                        f"interrupted run with `pcevolve run --resume {outcome.folder}`")


#: A first argument with one of these suffixes is a run configuration; anything else is data (data/kinds.py).
CONFIG_SUFFIXES = (".yaml", ".yml")


def step_lines(console: Console, quiet: bool) -> Callable[[str], None]:
    """What prints a run's step lines: every one, or with ``--quiet`` its warnings alone."""
    def say(text: str) -> None:
        if not quiet or text.startswith("warning"):
            console.print(f"[cyan]»[/cyan] {text}", highlight=False)

    return say


def _usage(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def source_kind(source: Path | None, resume: Path | None) -> str | None:
    """What SOURCE is: "config", or the data's kind ("images", "csv", "jsonl"); None with --resume. Exits 2 when it
    is none of them, naming the path and what is read."""
    from pcevolve.data.kinds import kind_of

    if source is None:
        if resume is None:
            _usage("give a CONFIG file (.yaml) or your PRIVATE data (a folder of class folders, a .csv table or a "
                   ".jsonl file of texts), or --resume RUN_DIR")
        return None
    if resume is not None:
        _usage(f"--resume continues a run with its own config and data; do not give {source} as well")
    if source.suffix.lower() in CONFIG_SUFFIXES:
        if not source.is_file():
            _usage(f"{source}: no such config file (relative paths are read from the current folder, {Path.cwd()})")
        return "config"
    try:
        return kind_of(source)
    except DataError as exc:
        problem = exc.problems[0]
        _usage(f"{problem.path}: {problem.message} (relative paths are read from the current folder, {Path.cwd()})")


def _executor_or_exit(config: RunConfig, executor: str) -> RunConfig:
    try:
        return with_executor(config, executor)
    except ConfigError as exc:
        _usage(str(exc))


def _data_flags(public: Path | None, test: Path | None, full: Path | None) -> dict[str, str]:
    """--public/--test/--full as the settings they replace in a config file (absolute: the run folder keeps them)."""
    return {f"data.{key}": str(path.resolve()) for key, path in (("public", public), ("test", test), ("full", full))
            if path is not None}


def source_config(source: Path, kind: str, *, overrides: dict[str, Any], label_column: str | None,
                  public: Path | None, test: Path | None, full: Path | None, name: str | None,
                  epsilon: float | None, given: list[str], console: Console,
                  set_keys: Collection[str] = ()) -> RunConfig:
    """The config SOURCE stands for (``kind``: :func:`source_kind`'s answer): the YAML file with the command line's
    settings on top, or for data the settings chosen from it and the --public pool, as `pcevolve init` chooses them
    (each choice printed with why; at ε 8 unless --epsilon says otherwise). Exits 2 on a bad command line (a
    --label-column for an image config), 1 on bad data; a config file that cannot be read raises ConfigError."""
    if kind == "config":
        config = load_config(source)
        with_label_column({}, label_column, MODALITY_TRAITS[config.data.modality].classes_from_folders)
        return with_flags(config, {**overrides, **_data_flags(public, test, full),
                                   **({} if name is None else {"name": name}),
                                   **({} if epsilon is None else {"privacy.epsilon": epsilon})}, given, set_keys)
    starter = starter_or_exit(source, public=public, test=test, full=full, epsilon=8.0 if epsilon is None else epsilon,
                              name=name, settings=overrides)
    for line in starter.findings:
        console.print(line, highlight=False)
    config = starter_config(starter)
    for choice in starter.choices:
        console.print(f"  {choice.key} = {choice.value}  [dim]({choice.why})[/dim]", highlight=False)
    return config


#: The setting each flag of a run sets; any other key comes from --set.
FLAG_KEYS = {"data.public": "--public", "data.test": "--test", "data.full": "--full", "name": "--name",
             "privacy.epsilon": "--epsilon", "data.label_column": "--label-column", "data.classes": "--classes",
             "data.schema_file": "--schema"}


def with_flags(config: RunConfig, dotted: dict[str, object], given: list[str],
               set_keys: Collection[str] = ()) -> RunConfig:
    """``config`` with settings from the command line on top, validated together; a bad one exits 2 naming the
    key and the flag that set it (``set_keys``: the keys --set gave; the run's config.yaml records the result)."""
    def flag_of(key: str) -> str:
        return "--set" if key in set_keys else FLAG_KEYS.get(key, "--set")

    try:
        return with_settings(config, dotted, source=" / ".join(given))
    except ConfigError as exc:
        for flag in dict.fromkeys(flag_of(key) for key in dotted):  # the flag refused alone is the one to fix
            try:
                with_settings(config, {k: v for k, v in dotted.items() if flag_of(k) == flag}, source=flag)
            except ConfigError as alone:
                _usage(str(alone))
        _usage(str(exc))


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
    from pcevolve.pipeline.made_stages import MADE_STAGES

    if not outcome.is_dp:
        console.print(f"[bold red]{NOT_DP_WARNING}[/bold red]")
    table = Table(title=f"pcevolve run — {outcome.folder}", show_lines=False)
    table.add_column("stage")
    table.add_column("ε spent", justify="right")
    table.add_column("seconds", justify="right")
    for stage in ("data", *dict.fromkeys(s.name for s in (*STAGES, *MADE_STAGES))):
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
    if outcome.pool:
        console.print(outcome.pool)
    if outcome.made_by is not None:
        console.print(f"made without a public pool: {outcome.made_by}")
    else:
        search = (f"{outcome.generations} generations, DP fitness {outcome.best_fitness:.4f} (its one-shot start "
                  f"{outcome.baseline_fitness:.4f})" if outcome.generations else
                  f"not evolved — the one-shot start (the released class Gaussians, DP fitness "
                  f"{outcome.baseline_fitness:.4f}) is delivered, as the evolution never beat it in our measurements "
                  "(search.evolve: true runs it)")
        console.print(f"search: {search}; decoded samples re-encoded into their class: "
                      f"{outcome.reencode_agreement:.1%}")
    curve = f" · curve: {outcome.folder}/fitness_curve.png" if outcome.generations else ""
    console.print(f"ledger: {outcome.folder}/ledger.json{curve} · records: {outcome.folder}/records.jsonl")
    console.print(f"to hand the synthetic set on without the rest of the run folder: pcevolve export {outcome.folder} "
                  "OUT_FOLDER")


def with_executor(config: RunConfig, name: str) -> RunConfig:
    """``config`` with ``executor.name`` set to ``name`` (validated: an unknown name or a missing Ray is a
    :class:`ConfigError`). The executor is not part of the config's hash, so a resumed run may change it."""
    return with_settings(config, {"executor.name": name}, source="--executor")
