"""Bad tables through ``pcevolve run``: each exits 1 naming the file, the row and the column, prints no traceback,
and leaves no run folder behind. And the schema is never read off the private table."""

from __future__ import annotations

import builtins
import os
import shutil
from pathlib import Path

import pytest


def _edit_line(path: Path, row: int, edit) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[row - 1] = edit(lines[row - 1])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _cell(row: int, column: int, value: str):
    def edit(path: Path) -> None:
        _edit_line(path, row, lambda line: ",".join(value if i == column else c for i, c in enumerate(line.split(","))))
    return edit


def _drop_label(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(",".join(line.split(",")[:-1]) for line in lines) + "\n", encoding="utf-8")


# name -> (edit of private.csv, texts the message must contain)
PRIVATE_CASES = {
    "nan_cell": (_cell(3, 0, "nan"), ["private.csv:row 3", "'amount'", "NaN"]),
    "inf_cell": (_cell(4, 1, "inf"), ["private.csv:row 4", "'rate'", "infinite"]),
    "empty_cell": (_cell(5, 4, ""), ["private.csv:row 5", "'count'", "empty"]),
    "word_in_number": (_cell(6, 0, "lots"), ["private.csv:row 6", "'amount'", "not a number"]),
    "unseen_category": (_cell(7, 2, "crypto"), ["private.csv:row 7", "'kind'", "'crypto'", "schema"]),
    "ragged_row": (lambda p: _edit_line(p, 8, lambda line: line + ",extra"), ["private.csv:row 8", "fields"]),
    "missing_label_column": (_drop_label, ["private.csv:row 1", "label column 'label'"]),
    # A row whose label is not a declared class (a class with one row or none is accepted: test_declared_classes.py).
    "label_outside_the_classes": (_cell(5, 5, "theft"), ["private.csv:row 5", "unknown label 'theft'",
                                                         "declared classes are ['fraud', 'ok']"]),
    "not_utf8": (lambda p: p.write_bytes(p.read_bytes().replace(b"north", b"n\xe9rth", 1)), ["private.csv", "UTF-8"]),
}


@pytest.fixture
def table_copy(table_data, tmp_path):
    copy = tmp_path / "data"
    shutil.copytree(table_data, copy)
    return copy


@pytest.mark.parametrize("name", sorted(PRIVATE_CASES))
def test_a_bad_private_table_is_named_by_row_and_column_and_nothing_is_written(name, table_copy, table_config,
                                                                               tmp_path, run_command):
    edit, named = PRIVATE_CASES[name]
    edit(table_copy / "private.csv")
    config = table_config(name="bad", **{"data.private": str(table_copy / "private.csv"),
                                         "data.public": str(table_copy / "public.csv")})
    code, output = run_command(config)
    flat = " ".join(output.split())
    assert code == 1, output
    assert all(text in flat for text in named), output
    assert "Traceback" not in output
    runs = tmp_path / "runs"
    assert not runs.exists() or not any(runs.iterdir()), sorted(runs.rglob("*"))


def test_a_public_table_with_the_label_column_is_refused(table_copy, table_config, tmp_path, run_command):
    public = table_copy / "public.csv"
    _edit_line(public, 1, lambda line: line + ",label")
    lines = public.read_text(encoding="utf-8").splitlines()
    public.write_text("\n".join([lines[0]] + [line + ",ok" for line in lines[1:]]) + "\n", encoding="utf-8")
    config = table_config(name="labelled", **{"data.private": str(table_copy / "private.csv"),
                                              "data.public": str(public)})
    code, output = run_command(config)
    assert code == 1 and "must be unlabelled" in " ".join(output.split()), output


def test_the_schema_is_built_without_opening_the_private_table(table_data, table_config, monkeypatch):
    """The layout (schema) comes from public data only: opening the private file while building it fails."""
    from pcevolve.modalities.tabular.parts import TABULAR

    config = table_config()
    private = os.path.realpath(config.data.private)
    real_open = builtins.open

    def guarded(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and os.path.realpath(file) == private:
            raise AssertionError("the private table was opened while building the schema")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded)
    schema = TABULAR.layout(config.data)
    assert schema.names == ("amount", "rate", "kind", "region", "count")
    assert schema.columns[2].categories == ("card", "cash", "wire")


def test_a_table_encoder_given_a_dp_budget_is_refused_before_anything_runs(table_config):
    with pytest.raises(ValueError, match="privacy.split.representation: with data.modality tabular the encoder is "
                                         "not trained"):
        table_config(**{"privacy.split": {"representation": 0.5, "release": 0.5}})
    with pytest.raises(ValueError, match="decoder 'conv' does not make tabular samples"):
        table_config(**{"decoder.name": "conv"})
