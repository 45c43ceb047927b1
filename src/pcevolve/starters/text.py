"""The starter configuration for texts (``pcevolve init private.jsonl --public public.jsonl``).

As for images and tables, the choices depend on the public pool, the class names and the user's flags only; the
private file is read to check it and its counts are shown on the console, never written. The proposed classes are
the private file's labels with their JSON type (``0`` stays a number, ``"0"`` text), for the user to confirm.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pcevolve.data import DataError, DataProblem
from pcevolve.data.text import fields_of, read_labeled_texts, read_unlabeled_texts
from pcevolve.starters.common import (
    Choice,
    DataPaths,
    Starter,
    StarterUsageError,
    check_splits,
    classes_choice,
    declared_classes,
    file_run_choices,
    finish_starter,
    retrieval_choices,
    screen_findings,
    split_choices,
)

#: From this many public texts on, the search works in TEXT_BASIS_LARGE principal directions instead of 16.
TEXT_BASIS_POOL = 2000
TEXT_BASIS_LARGE = 64


def text_basis(pool: int) -> int:
    """The search basis for a pool of ``pool`` texts (public, so the choice reads nothing private).

    The features are the sentence embedding joined with the lexical view (640 numbers), and 16 directions keep what
    the texts are about more than how they are written: on large pools 64 directions trained the TF-IDF judge
    better on every task and ε tried (measured in docs/text.md, "64 directions instead of 16"). A pool of a few
    hundred texts keeps 16: its principal directions beyond those are mostly its own sampling noise.
    """
    return TEXT_BASIS_LARGE if pool >= TEXT_BASIS_POOL else 16


def _pool_text_field(public: Path, text_field: str, label_field: str, chosen: object) -> str | None:
    """The public pool's text field when it is not the private file's: the user's (``--set
    data.public_text_column=...``), else — when the pool's records lack ``text_field`` — the one field that holds
    text in them, if there is exactly one (the pool is public: looking at it is free). None: the same field."""
    if chosen is not None:
        return str(chosen)
    fields = fields_of(public)
    if not fields or text_field in fields:
        return None
    candidates = [name for name, holds_text in fields.items() if holds_text and name != label_field]
    return candidates[0] if len(candidates) == 1 else None  # else the reader names the fields and the setting


def choose_text_config(paths: DataPaths, *, epsilon: float, name: str | None,
                       overrides: Mapping[str, Any] | None) -> Starter:
    """Check a private JSONL file (and its public pool) and choose a run configuration for it.

    The fields are ``data.text_column`` / ``data.label_column`` from ``overrides``, else ``text`` / ``label``; the
    pool's text field is ``data.public_text_column`` from ``overrides``, else proposed from the pool's records.

    Raises:
        StarterError: No public pool.
        DataError: Problems in the files, each naming its line and field.
    """
    overrides = dict(overrides or {})
    text_field = str(overrides.pop("data.text_column", "text"))
    label_field = str(overrides.pop("data.label_column", paths.label_column or "label"))
    if paths.public is None or paths.public.is_dir():
        raise StarterUsageError("a private JSONL file needs a public pool of texts like it: a JSONL file with the "
                           "texts "
                           f"in field {text_field!r} (another: --set data.public_text_column=FIELD) and no label. "
                           "Give it with --public FILE.jsonl")
    declared = declared_classes(overrides, typed=True)
    private = read_labeled_texts(paths.private, text_field=text_field, label_field=label_field,
                                 class_names=declared, min_per_class=0)
    pool_field = _pool_text_field(paths.public, text_field, label_field, overrides.get("data.public_text_column"))
    public = read_unlabeled_texts(paths.public, text_field=pool_field or text_field, label_field=label_field)
    extras: dict[str, Any] = {}
    if paths.test is not None:
        extras[str(paths.test)] = read_labeled_texts(paths.test, text_field=text_field, label_field=label_field,
                                                     class_names=private.class_labels, min_per_class=1)
    check_splits(private, public, extras, paths)
    k = len(private.class_names)
    used = min(len(public), 20_000)
    if used <= 32:
        raise DataError([DataProblem(str(paths.public), f"the public pool holds {used} texts; the search needs more "
                                                        "than 32 (more than a few thousand works better)")])
    choices = [
        *file_run_choices(paths, name, "text", "texts"),
        Choice("data.private", str(paths.private.resolve()), f"{k} classes in field {label_field!r}"),
        classes_choice(private.class_labels, f"the values of field {label_field!r} in {paths.private.name}, with "
                       "their JSON type (0 a number, \"0\" text: the delivered file writes them so)", "text",
                       "a label outside the list, or of another type, is an error naming its line",
                       proposed=declared is None),
        *split_choices(paths, len(public), "text"),
        Choice("data.full", None, "not used for texts"),
        Choice("data.text_column", text_field, "the field holding each text"),
        Choice("data.public_text_column", pool_field,
               "the field holding each text of the public pool" + (f", whose records have no {text_field!r}"
                                                                   if pool_field else
                                                                   "; null: the same as data.text_column")),
        Choice("data.label_column", label_field, "the class label of each private text"),
        *retrieval_choices("text", pool=used, classes=k, basis=text_basis(used), epsilon=epsilon,
                           encoder_why="the sentence encoder is used as pretrained"),
    ]
    found = screen_findings(private, public, "text", f"public: {len(public)} texts — checked",
                            *(f"test: {len(test)} texts — checked" for test in extras.values()))
    return finish_starter(paths, choices, overrides, found, len(private))
