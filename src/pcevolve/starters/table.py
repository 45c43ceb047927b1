"""The starter configuration for a table (``pcevolve init private.csv --public public.csv``).

As for images (``starter.py``), the choices depend on the public table, the class names and the user's flags only;
the private table is read to check it (against a schema drafted from the public table: the run does the same) and
its counts are shown on the console, never written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pcevolve.data import DataError, DataProblem, LabeledDataset
from pcevolve.data.table_schema import TableSchema, draft_schema, read_csv_cells, widened
from pcevolve.data.tabular import read_labeled_table, read_unlabeled_table
from pcevolve.starters.common import (
    DEFAULT_DELTA,
    Choice,
    DataPaths,
    Starter,
    StarterError,
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


def choose_table_config(paths: DataPaths, *, epsilon: float, name: str | None,
                        overrides: Mapping[str, Any] | None) -> Starter:
    """Check a private CSV (and its public table) and choose a run configuration for it.

    The label column is ``data.label_column`` from ``overrides``, a prepared table's, or ``label``.

    Without a public table the rows are made from a release of the private ones
    (:func:`choose_made_table_config`).

    Raises:
        StarterError: A public table that is a folder.
        DataError: Problems in the files, each naming its row and column.
    """
    overrides = dict(overrides or {})
    label = str(overrides.pop("data.label_column", paths.label_column or "label"))
    if paths.public is None:
        return choose_made_table_config(paths, label, epsilon=epsilon, name=name, overrides=overrides)
    if paths.public.is_dir():
        raise StarterUsageError(f"{paths.public}: is a folder; a private CSV table needs a public CSV table with the "
                           "same "
                           "columns and no label column")
    for path in (paths.private, paths.public):
        if not path.is_file():
            raise DataError([DataProblem(str(path), "file does not exist")])
    _check_label_column(paths.private, label)
    schema = (TableSchema.load(paths.schema) if paths.schema is not None
              else draft_schema(paths.public, label_column=label))
    public = read_unlabeled_table(paths.public, schema)
    declared, private, extras = _read_checked(paths, schema, overrides, public)
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


#: The note above a schema ``init`` drafts from the private table, for the user to check before running.
DRAFT_NOTE = ("DRAFTED FROM YOUR PRIVATE TABLE by `pcevolve init`: check it before you run. It shapes every file the\n"
              "run ships, so it must be public knowledge, not what your rows happen to hold:\n"
              "  - bounds: what a domain expert would state (drafted as the rows' range widened to round numbers);\n"
              "  - categories: every value the column may take (drafted as the values found: remove any that is\n"
              "    not public knowledge, add any your domain has);\n"
              "  - integer / decimals: how the values are written.\n"
              "Running the config that names this file declares it.")


def _check_label_column(private: Path, label: str) -> None:
    """Refuse a private table without the label column, naming its columns (before anything else is read)."""
    header = read_csv_cells(private)[0]
    if label not in header:
        raise DataError([DataProblem(f"{private}:row 1", f"no label column {label!r}; columns are {header} "
                                                         "(name yours with --label-column)")])


def _read_checked(paths: DataPaths, schema: TableSchema, overrides: Mapping[str, Any], public: Any
                  ) -> tuple[Any, LabeledDataset, dict[str, Any]]:
    """The declared classes (None: to propose), the private table and the test table read against ``schema``, and
    the splits checked against each other and the pool (``public``, None without one)."""
    declared = declared_classes(overrides)
    private = read_labeled_table(paths.private, schema, class_names=declared, min_per_class=0)
    extras: dict[str, Any] = {}
    if paths.test is not None:
        extras[str(paths.test)] = read_labeled_table(paths.test, schema, class_names=private.class_names,
                                                     min_per_class=1)
    check_splits(private, public, extras, paths)
    return declared, private, extras


def _draft_path(private: Path) -> Path:
    """Where a schema drafted from ``private`` goes unless ``init`` says otherwise: beside it."""
    return private.with_name(f"{private.stem}.schema.yaml")


def choose_made_table_config(paths: DataPaths, label: str, *, epsilon: float, name: str | None,
                             overrides: dict[str, Any]) -> Starter:
    """A table run without a public table: its rows are made from one release of the private ones.

    The schema is the user's declaration (``--schema`` / ``data.schema_file``). Without one, a draft is read off
    the private table (bounds widened to round numbers) as a *proposal*: ``init`` writes it beside the config for the
    user to check (:attr:`Starter.drafts`); a run refuses it (:meth:`Starter.confirmed`).

    Raises:
        DataError: Problems in the files, each naming its row and column.
    """
    if not paths.private.is_file():
        raise DataError([DataProblem(str(paths.private), "file does not exist")])
    _check_label_column(paths.private, label)
    declared_schema = overrides.get("data.schema_file") or (None if paths.schema is None else str(paths.schema))
    schema = (replace(TableSchema.load(declared_schema), label_column=label) if declared_schema is not None
              else widened(draft_schema(paths.private, label_column=label)))
    declared, private, extras = _read_checked(paths, schema, overrides, None)
    k = len(private.class_names)
    choices = [
        *file_run_choices(paths, name, "tabular", "table rows"),
        Choice("data.private", str(paths.private.resolve()), f"{k} classes in column {label!r}"),
        classes_choice(private.class_names, f"the values of column {label!r} in {paths.private.name}", "row",
                       "a label outside the list is an error naming its row", proposed=declared is None),
        Choice("data.public", None, "no public table: the rows are made from one DP release of the private rows' "
                                    "class sizes and each class's histogram of every column"),
        Choice("data.test", None if paths.test is None else str(paths.test.resolve()),
               "real held-out rows for `pcevolve evaluate` (never used by the run)"),
        Choice("data.full", None, "not used for tables"),
        Choice("data.label_column", label, "the class label of each private row"),
        Choice("data.schema_file", declared_schema or str(_draft_path(paths.private).resolve()),
               "column types, bounds and categories: your declaration, public knowledge (it shapes every file the "
               "run ships)" if declared_schema is not None else
               "DRAFTED from the private table (bounds widened to round numbers, categories as found): check the "
               "file before you run; running this config declares it", proposed=declared_schema is None),
        Choice("synthesis.per_class", 1000, "delivered rows per class"),
        Choice("privacy.epsilon", float(epsilon), "the total privacy budget of the whole run"),
        Choice("privacy.delta", DEFAULT_DELTA, "the probability that the ε guarantee fails; keep it well below one "
                                               "over the number of private rows"),
        Choice("privacy.split", {"release": 1.0}, "nothing is trained or retrieved: the whole budget goes to the "
                                                  "release the rows are made from"),
    ]
    found = screen_findings(private, None, "row", f"schema: {len(schema.columns)} columns, "
                            + ("declared" if declared_schema is not None else "drafted from the private table"),
                            *(f"test: {len(test)} rows — checked" for test in extras.values()))
    starter = finish_starter(paths, choices, overrides, found, len(private))
    return starter if declared_schema is not None else replace(starter, drafts={"data.schema_file": schema})
