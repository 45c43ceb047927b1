"""What kind of data a path holds — an image folder, a CSV file or a JSONL file — decided once, from the path.

Every command that takes data paths (``pcevolve init``, ``pcevolve run PRIVATE --public POOL``, ``pcevolve data
check``, ``pcevolve evaluate --test``) asks :func:`kind_of` first, before any file is opened, and checks that each
split's kind goes with the private data's (:func:`split_kind_problem`). A mismatch — a CSV pool for image folders, a
JSONL test file for a table run — is then one line naming both paths and what to give instead, rather than what a
reader of the wrong kind would make of the file (a JSON line read as a CSV header, 200 rows without a column).

Without a config, the private data's kind decides the run's modality (:func:`modality_of`): image folders make an
image run, a CSV table a table run, a JSONL file a text run. Which kinds a modality accepts for its pool and test set
is its spec's (:class:`pcevolve.catalog.modalities.ModalityFiles`): texts may also come as CSV files (a CSV with a
text column), so a text run accepts both; whether such a CSV has the text field is the text reader's business.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pcevolve.catalog.modalities import MODALITY_SPECS
from pcevolve.data.errors import DataError, DataProblem, PathKindError
from pcevolve.data.image_files import is_image_name

Kind = Literal["images", "csv", "jsonl"]
Role = Literal["public", "test", "full", "any"]

#: What pcevolve reads, for the message about a file it does not.
READS = ("it reads image folders (one folder per class, or a flat folder for a public pool), .csv tables (or texts "
         "in a CSV with a text column) and .jsonl texts (one JSON object per line)")

# How a path of each kind is named when it is the wrong one, and when it is the private data.
_GIVEN = {"images": "a folder", "csv": "a CSV file", "jsonl": "a JSONL file"}
_PRIVATE = {"images": "image folders", "csv": "a CSV table", "jsonl": "JSONL texts"}


def modality_of(kind: Kind) -> str:
    """The modality of a run whose private data is of ``kind`` and whose config does not say (the modality whose
    spec is the default for that kind).

    Raises:
        ValueError: No modality is the default for ``kind`` (a config's ``data.modality`` must then say which).
    """
    for spec in MODALITY_SPECS.values():
        if spec.files.default_for == kind:
            return spec.name
    raise ValueError(f"no modality reads private data of kind {kind!r} by default: set data.modality")


def _unread_file(path: Path) -> str:
    """Why a file of another type is not read, with what pcevolve reads instead."""
    suffix = path.suffix.lower()
    if is_image_name(path.name):
        return ("is one image file; pcevolve reads images by folder: give the folder holding them (one folder per "
                "class for labelled images, a flat folder for a public pool)")
    if suffix == ".json":
        return ("is a .json file, which pcevolve does not read; texts go in a JSON Lines file (.jsonl, one object "
                "per line)")
    if suffix in (".tsv", ".tab"):
        return (f"is a {suffix} file, which pcevolve does not read; save the table as CSV (commas between the "
                f"columns, a .csv name); {READS}")
    what = f"a {suffix} file" if suffix else "a file without an extension"
    return f"is {what}, which pcevolve does not read; {READS}"


def kind_of(path: str | Path) -> Kind:
    """The kind of data at ``path``: a folder is image data (class folders or a flat pool), a ``.csv`` file a table
    (or texts with a text column), a ``.jsonl`` file texts. Decided from the path alone (the suffix, case aside):
    no file is opened, so it is cheap and runs before any reader.

    Raises:
        DataError: One problem naming ``path``: it does not exist (``folder does not exist`` for a path without a
            suffix, else ``file does not exist``, as the readers say), or it is a file of a type pcevolve does not
            read (a ``.tsv``, a ``.txt``, one image file…), saying what it reads.
    """
    path = Path(path)
    if path.is_dir():
        return "images"
    if not path.exists():
        raise DataError([DataProblem(str(path), f"{'file' if path.suffix else 'folder'} does not exist")])
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix == ".jsonl":
        return "jsonl"
    raise DataError([DataProblem(str(path), _unread_file(path))])


def private_context(path: str | Path, kind: Kind) -> str:
    """``the private data is a CSV table (private.csv)``: what a mismatched split is set against."""
    return f"the private data is {_PRIVATE[kind]} ({path})"


def run_context(folder: str | Path, modality: str) -> str:
    """``runs/x is a table run``: what a mismatched test set is set against in ``pcevolve evaluate``."""
    spec = MODALITY_SPECS.get(modality)
    return f"{folder} is {spec.files.run if spec is not None else f'a {modality} run'}"


def split_kind_problem(path: str | Path, kind: Kind, role: Role, modality: str, context: str) -> DataProblem | None:
    """The problem of a split of ``kind`` given as ``role`` to a ``modality`` run, or ``None`` when it goes.

    Args:
        path, kind: The split and its kind (:func:`kind_of`).
        role: ``public`` (the unlabelled pool), ``test`` or ``full`` (labelled), ``any`` (either: data check).
        modality: The run's modality (:func:`modality_of` the private data's kind, or a run's config).
        context: What decided the modality, for the message (:func:`private_context`, :func:`run_context`).

    Returns:
        One problem naming ``path``, the other side (``context``) and what to give instead.
    """
    spec = MODALITY_SPECS.get(modality)
    if role == "full" and (spec is None or not spec.traits.full_real_reference):
        return DataProblem(str(path), f"is given as a full real set, which only an image run uses as its upper "
                                      f"reference line, but {context}: leave --full out")
    if spec is not None and kind in spec.files.accepts:
        return None
    fallback = "give data of the private data's kind"
    fix = fallback if spec is None else spec.files.fixes.get(role, fallback)
    return DataProblem(str(path), f"is {_GIVEN[kind]} but {context}: {fix}")


def check_run_kinds(private: str | Path, splits: Mapping[Role, str | Path | None]) -> Kind:
    """The private data's kind, once every given split (``splits``: role → path, ``None`` when not given) is known
    to exist, to be of a type pcevolve reads, and to go with the private data's kind. Nothing is read.

    Raises:
        PathKindError: Every problem found, each one line naming its path (and, for a mismatch, the private data
            and what to give instead).
    """
    problems: list[DataProblem] = []
    private_kind = _kind_or_problem(private, problems)
    given = [(role, Path(path), _kind_or_problem(path, problems)) for role, path in splits.items() if path is not None]
    if private_kind is not None:
        modality, context = modality_of(private_kind), private_context(private, private_kind)
        problems += [problem for role, path, kind in given if kind is not None
                     and (problem := split_kind_problem(path, kind, role, modality, context)) is not None]
    if problems:
        raise PathKindError(problems)
    assert private_kind is not None  # a private path that kind_of refused is among the problems raised above
    return private_kind


def _kind_or_problem(path: str | Path, problems: list[DataProblem]) -> Kind | None:
    """:func:`kind_of`, or ``None`` with its problem added to ``problems`` (so that every path is named at once)."""
    try:
        return kind_of(path)
    except DataError as error:
        problems += error.problems
        return None
