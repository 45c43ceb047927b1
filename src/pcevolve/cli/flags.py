"""The flags several commands share (``init``, ``run``, ``sweep``), each declared once: its name, type and help.

A command names a flag by its annotation, e.g. ``public: PublicFlag = None``; a flag whose meaning differs in one
command (``sweep --test``: the data each run is judged on) is declared there instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

PRIVATE_HELP = ("Private labelled data: images, one folder per class, a CSV table with a label column, or a JSONL "
                "file of texts (or a folder made by `pcevolve data prepare`).")
PUBLIC_HELP = ("Unlabelled public data like the private data: a flat folder of images, a CSV table with the same "
               "columns and no label column, or a JSONL file of texts without labels. Images and texts need one; "
               "a table without one is made from its declared --schema.")
TEST_HELP = ("Real held-out labelled data for `pcevolve evaluate` (class folders, a CSV table or a JSONL file, like "
             "the private data).")
LABEL_HELP = "The label column of a private CSV table (the label field of JSONL texts). [default: label]"
FULL_HELP = "A larger real labelled set: the evaluation's upper reference line."
EPSILON_HELP = "Total privacy budget ε of the whole run."
NAME_HELP = "Run name (folder runs/NAME); default from the private folder's name."


SET_HELP = "A setting by its dotted key, e.g. --set search.synthetic_per_class=200 (repeatable; YAML values)."
SCHEMA_HELP = ("A table's schema file (column types, bounds, categories: public knowledge). Without a public table a "
               "run needs it; `pcevolve init` drafts one from your table for you to check, `pcevolve data schema` "
               "one from a public table.")
CLASSES_HELP = ("The task's classes, in label order, e.g. --classes bad,good (tables and texts must declare them: a "
                "run "
                "never reads them off the private labels; for texts, --classes 0,1 declares numbers and "
                "--classes '\"0\",\"1\"' text). Image classes default to the class folders.")


PublicFlag = Annotated[Path | None, typer.Option("--public", help=PUBLIC_HELP)]
TestFlag = Annotated[Path | None, typer.Option("--test", help=TEST_HELP)]
FullFlag = Annotated[Path | None, typer.Option("--full", help=FULL_HELP)]
NameFlag = Annotated[str | None, typer.Option("--name", help=NAME_HELP)]
LabelColumnFlag = Annotated[str | None, typer.Option("--label-column", help=LABEL_HELP)]
ClassesFlag = Annotated[str | None, typer.Option("--classes", help=CLASSES_HELP)]
SchemaFlag = Annotated[Path | None, typer.Option("--schema", help=SCHEMA_HELP)]
SetFlag = Annotated[list[str] | None, typer.Option("--set", help=SET_HELP)]
