"""The starter configuration for a table (``pcevolve init private.csv --public public.csv``).

As for images (``starter.py``), the choices depend on the public table, the class names and the user's flags only;
the private table is read to check it (against a schema drafted from the public table: the run does the same) and
its counts are shown on the console, never written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pcevolve.data import DataError, DataProblem
from pcevolve.data.table_schema import TableSchema, draft_schema, read_csv_cells
from pcevolve.data.tabular import read_labeled_table, read_unlabeled_table
from pcevolve.starters.common import (
    Choice,
    DataPaths,
    Starter,
    StarterError,
    check_splits,
    classes_choice,
    declared_classes,
    file_run_choices,
    finish_starter,
    retrieval_choices,
    screen_findings,
    split_choices,
)


def choose_table_config(paths: DataPaths, *, epsilon: float, name: str | None,
                        overrides: Mapping[str, Any] | None) -> Starter:
    """Check a private CSV (and its public table) and choose a run configuration for it.

    The label column is ``data.label_column`` from ``overrides``, a prepared table's, or ``label``.

    Raises:
        StarterError: No public table.
        DataError: Problems in the files, each naming its row and column.
    """
    overrides = dict(overrides or {})
    label = str(overrides.pop("data.label_column", paths.label_column or "label"))
    if paths.public is None:
        raise StarterError("no public table given: pcevolve needs an unlabelled public table with the same columns "
                           "(e.g. older or open records of the same kind); it learns its features and draws the "
                           "delivered rows from it. Give it with --public FILE.csv")
    if paths.public.is_dir():
        raise StarterError(f"{paths.public}: is a folder; a private CSV table needs a public CSV table with the same "
                           "columns and no label column")
    for path in (paths.private, paths.public):
        if not path.is_file():
            raise DataError([DataProblem(str(path), "file does not exist")])
    header = read_csv_cells(paths.private)[0]
    if label not in header:
        raise DataError([DataProblem(f"{paths.private}:row 1", f"no label column {label!r}; columns are {header} "
                                                               "(name yours with --label-column)")])
    schema = (TableSchema.load(paths.schema) if paths.schema is not None
              else draft_schema(paths.public, label_column=label))
    public = read_unlabeled_table(paths.public, schema)
    declared = declared_classes(overrides)
    private = read_labeled_table(paths.private, schema, class_names=declared, min_per_class=0)
    extras: dict[str, Any] = {}
    if paths.test is not None:
        extras[str(paths.test)] = read_labeled_table(paths.test, schema, class_names=private.class_names,
                                                     min_per_class=1)
    check_splits(private, public, extras, paths)
    k = len(private.class_names)
    used = min(len(public), 20_000)
    basis = 16
    if used <= 2 * basis:
        raise StarterError(f"{paths.public}: the public table holds {used} rows; the search needs more than "
                           f"{2 * basis} (more than a few thousand works better)")
    choices = [
        *file_run_choices(paths, name, "tabular", "table rows"),
        Choice("data.private", str(paths.private.resolve()), f"{k} classes in column {label!r}"),
        classes_choice(private.class_names, f"the values of column {label!r} in {paths.private.name}", "row",
                       "a label outside the list is an error naming its row", proposed=declared is None),
        *split_choices(paths, len(public), "row"),
        Choice("data.full", None, "not used for tables"),
        Choice("data.label_column", label, "the class label of each private row"),
        Choice("data.schema_file", None if paths.schema is None else str(paths.schema.resolve()),
               "column types, bounds and categories; null: drafted from the public table at the start of the run "
               "(`pcevolve data schema` writes one to review)"),
        Choice("representation.feature_dim", 64, "size of the table encoder's learnt projection"),
        Choice("representation.proj_hidden_dim", 256, "width of the table encoder's hidden layers"),
        Choice("representation.public_epochs", 20, "passes over the public table to train the encoder (free)"),
        Choice("representation.public_lr", 0.001, "the encoder's learning rate"),
        *retrieval_choices("row", pool=used, classes=k, basis=basis, epsilon=epsilon,
                           encoder_why="the table encoder trains on the public table only"),
    ]
    found = screen_findings(private, public, "row",
                            f"public: {len(public)} rows, {len(schema.columns)} columns — checked against the schema",
                            *(f"test: {len(test)} rows — checked" for test in extras.values()))
    return finish_starter(paths, choices, overrides, found, len(private))
