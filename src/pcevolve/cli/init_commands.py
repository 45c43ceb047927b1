"""``pcevolve init PRIVATE --public POOL [--test DIR] [--epsilon 8] [--out config.yaml]``: a config from the data.

The data is checked as ``pcevolve data check`` would (every bad file named, exit 1, nothing written); the
config is written atomically with each chosen setting's reason beside it, and validated before it is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
import yaml

from pcevolve.cli.flags import (
    EPSILON_HELP,
    PRIVATE_HELP,
    ClassesFlag,
    FullFlag,
    LabelColumnFlag,
    NameFlag,
    PublicFlag,
    SchemaFlag,
    SetFlag,
    TestFlag,
)
from pcevolve.config import ConfigError, RunConfig, check_budget
from pcevolve.data import DataError
from pcevolve.data.errors import PathKindError, problem_lines
from pcevolve.io import atomic_write_text
from pcevolve.starters import Starter, StarterError, StarterUsageError, choose_config
from pcevolve.starters.common import Choice

def parse_settings(items: list[str] | None) -> dict[str, Any]:
    """``["a.b=1", "c=x"]`` → ``{"a.b": 1, "c": "x"}``; each value read as YAML (numbers, true/false, lists)."""
    settings: dict[str, Any] = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            typer.echo(f"error: --set {item!r}: expected KEY=VALUE, e.g. search.synthetic_per_class=200", err=True)
            raise typer.Exit(2)
        try:
            settings[key.strip()] = yaml.safe_load(text) if text.strip() else None
        except yaml.YAMLError:
            settings[key.strip()] = text
    return settings


def with_label_column(settings: dict[str, Any], label_column: str | None, images: bool) -> dict[str, Any]:
    """``--label-column X`` as the setting ``data.label_column`` (for a CSV table or JSONL texts); with image
    folders, whose classes are the folders, it is refused (exit 2) rather than written unused into the config."""
    if label_column is None:
        return settings
    if images:
        typer.echo("error: --label-column names the label field of a CSV table or JSONL texts; image classes are the "
                   "class folders of PRIVATE: leave it out", err=True)
        raise typer.Exit(2)
    return {**settings, "data.label_column": label_column}


def with_classes(settings: dict[str, Any], classes: str | None) -> dict[str, Any]:
    """``--classes a,b`` as the setting ``data.classes`` (each name read as a YAML scalar, as ``--set`` reads a
    list); given beside ``--set data.classes=...`` it is refused (exit 2) rather than one silently winning."""
    if classes is None:
        return settings
    if "data.classes" in settings:
        typer.echo("error: --classes and --set data.classes=... both declare the classes: give one", err=True)
        raise typer.Exit(2)
    try:
        names = yaml.safe_load(f"[{classes}]")
    except yaml.YAMLError:
        names = None
    if not isinstance(names, list) or not names:
        typer.echo(f"error: --classes {classes!r}: expected class names separated by commas, e.g. --classes bad,good",
                   err=True)
        raise typer.Exit(2)
    return {**settings, "data.classes": names}


def with_schema(settings: dict[str, Any], schema: Path | None) -> dict[str, Any]:
    """``--schema FILE`` as the setting ``data.schema_file`` (absolute: the run folder keeps it); beside
    ``--set data.schema_file=...`` it is refused (exit 2)."""
    if schema is None:
        return settings
    if "data.schema_file" in settings:
        typer.echo("error: --schema and --set data.schema_file=... both name the schema: give one", err=True)
        raise typer.Exit(2)
    if not schema.is_file():
        typer.echo(f"error: --schema {schema}: no such file (relative paths are read from the current folder, "
                   f"{Path.cwd()})", err=True)
        raise typer.Exit(2)
    return {**settings, "data.schema_file": str(schema.resolve())}


def starter_config(starter: Starter) -> RunConfig:
    """The starter's config for a run, refused (exit 1, naming the flag that declares it) while a choice in it was
    read off the private data — the classes of a table or texts (:meth:`Starter.confirmed`)."""
    from pcevolve.starters.common import classes_argument

    def declare(choice: Choice) -> str:
        if choice.key == "data.classes":
            return (f"declare them with --classes {classes_argument(choice.value)} (the values found there: check "
                    "that this is the task's whole list), or write a config to review with `pcevolve init`")
        if choice.key == "data.schema_file":
            return ("declare the columns' types, bounds and categories with --schema FILE (bounds a domain expert "
                    "would state, categories that are public knowledge); `pcevolve init` drafts one from your table "
                    "for you to check")
        return f"declare it with --set {choice.key}=..."

    try:
        return starter.confirmed(declare)
    except StarterError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None


def budget_or_exit(epsilon: float | None) -> None:
    """``--epsilon`` checked alone, before any data is read: a bad one exits 2 naming the allowed range."""
    try:
        check_budget(epsilon, source="--epsilon")
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def starter_or_exit(private: Path, *, public: Path | None, test: Path | None, full: Path | None,
                    epsilon: float, name: str | None, settings: dict[str, Any] | None = None) -> Starter:
    """:func:`choose_config`, with every problem printed one per line (no traceback) and exit code 2 when the
    command line needs fixing (a path, a pool not given, a class list not declared), else 1."""
    try:
        return choose_config(private, public=public, test=test, full=full, epsilon=epsilon, name=name,
                             overrides=settings)
    except DataError as exc:  # the paths given (PathKindError): fix the command line; else the files
        for line in problem_lines(exc.problems):
            typer.echo(line, err=True)
        typer.echo(f"{len(exc.problems)} problem{'s' if len(exc.problems) != 1 else ''} found; nothing was written",
                   err=True)
        raise typer.Exit(2 if isinstance(exc, PathKindError) else 1) from None
    except StarterError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2 if isinstance(exc, StarterUsageError) else 1) from None
    except ConfigError as exc:  # the settings given on the command line (--set, --epsilon, --name) do not validate
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def init(
    private: Path = typer.Argument(..., help=PRIVATE_HELP),
    public: PublicFlag = None,
    test: TestFlag = None,
    full: FullFlag = None,
    epsilon: float = typer.Option(8.0, "--epsilon", help=EPSILON_HELP),
    name: NameFlag = None,
    label_column: LabelColumnFlag = None,
    classes: ClassesFlag = None,
    schema: SchemaFlag = None,
    out: Path = typer.Option(Path("config.yaml"), "--out", help="Config file to write."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out file."),
    settings: SetFlag = None,
) -> None:
    """Check your data and write a commented run configuration for it (spends no privacy budget)."""
    if out.exists() and not force:
        typer.echo(f"error: {out} already exists; choose another --out or pass --force to replace it", err=True)
        raise typer.Exit(1)
    budget_or_exit(epsilon)
    overrides = with_schema(with_classes(with_label_column(parse_settings(settings), label_column, private.is_dir()),
                                         classes), schema)
    starter = starter_or_exit(private, public=public, test=test, full=full, epsilon=epsilon, name=name,
                              settings=overrides)
    for line in starter.findings:
        typer.echo(line)
    drafted = _write_drafts(starter, out, force=force)
    for choice in drafted.proposals:
        what = ("check it is the task's whole list" if choice.key == "data.classes" else
                "check its bounds and categories are public knowledge")
        typer.echo(f"to confirm: {choice.key} = {choice.value} was read off your private data; {what} (running "
                   f"{out} declares it)")
    atomic_write_text(out, drafted.yaml_text(source=f"pcevolve init {private}"))
    typer.echo(f"wrote {out}; next: `pcevolve budget plan --config {out}` (what each step would spend), "
               f"then `pcevolve run {out}`")


def _write_drafts(starter: Starter, out: Path, *, force: bool) -> Starter:
    """Write each draft the starter holds beside the config (``OUT.schema.yaml``) and point its choice at it; an
    existing file there is refused (exit 1) unless ``--force``."""
    from pcevolve.starters.table import DRAFT_NOTE

    for key, draft in starter.drafts.items():
        target = out.with_name(f"{out.stem}.schema.yaml")
        if target.exists() and not force:
            typer.echo(f"error: {target} already exists; choose another --out or pass --force to replace it", err=True)
            raise typer.Exit(1)
        atomic_write_text(target, draft.text(note=DRAFT_NOTE))
        typer.echo(f"wrote {target}: a schema drafted from your private table — check it before you run")
        starter = starter.placing(key, str(target.resolve()))
    return starter
