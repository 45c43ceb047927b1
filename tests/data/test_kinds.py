"""The kind of data a path holds (``pcevolve.data.kinds``), and the one-line message when a split's kind does not go
with the private data's, through the commands a user types: ``init``, ``run PRIVATE --public POOL``, ``data check``
and ``evaluate --test``. Also the message of a column mismatch between a private table and its public table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import typer
from data_helpers import make_class_folders, random_pixels, write_png
from typer.testing import CliRunner

from pcevolve.cli import evaluate_commands
from pcevolve.cli.data_commands import app as data_app
from pcevolve.config import dump_config, parse_config
from pcevolve.data import DataError
from pcevolve.data.kinds import check_run_kinds, kind_of
from pcevolve.data.table_schema import TableSchema, draft_schema
from pcevolve.data.tabular import read_labeled_table

runner = CliRunner()


def _table(path: Path, columns: list[str], rows: int, *, label: bool, seed: int = 0) -> Path:
    """A CSV of ``rows`` random numbers in ``columns`` (and a label column of two classes when ``label``)."""
    rng = np.random.default_rng(seed)
    lines = [",".join(columns + (["label"] if label else []))]
    lines += [",".join([f"{v:.3f}" for v in rng.normal(size=len(columns))] + (["ab"[i % 2]] if label else []))
              for i in range(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _texts(path: Path, rows: int, *, label: bool) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(rows):
            record = {"text": f"{path.stem} text number {i}", **({"label": "ab"[i % 2]} if label else {})}
            handle.write(json.dumps(record) + "\n")
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """Every kind side by side: class folders, a flat pool, tables and texts, labelled and not."""
    make_class_folders(tmp_path / "private", {"a": 3, "b": 3})
    for i in range(5):
        write_png(tmp_path / "pool" / f"{i}.png", random_pixels(np.random.default_rng(100 + i)))
    _table(tmp_path / "private.csv", ["x", "y"], 20, label=True)
    _table(tmp_path / "pool.csv", ["x", "y"], 60, label=False, seed=1)
    _texts(tmp_path / "private.jsonl", 20, label=True)
    _texts(tmp_path / "pool.jsonl", 60, label=False)
    return tmp_path


def _one_problem(output: str) -> str:
    """The single problem line of a failed command (its other lines are only the count), with no traceback."""
    assert "Traceback" not in output, output
    lines = [line for line in output.splitlines() if line.strip() and not line.endswith("found; nothing was written")
             and not line.endswith("problem found")]
    assert len(lines) == 1, output
    return lines[0]


# ---- kind_of --------------------------------------------------------------------------------------------------

def test_kind_of_reads_the_path_alone(data: Path) -> None:
    assert kind_of(data / "private") == "images" and kind_of(data / "pool") == "images"
    assert kind_of(data / "private.csv") == "csv" and kind_of(data / "private.jsonl") == "jsonl"
    upper = data / "LOUD.CSV"
    upper.write_text("a,label\n1,x\n", encoding="utf-8")
    assert kind_of(upper) == "csv"
    corrupt = data / "corrupt.jsonl"
    corrupt.write_bytes(b"\xff\xfe not json")  # nothing is opened: what is inside is the reader's business
    assert kind_of(corrupt) == "jsonl"


@pytest.mark.parametrize(("name", "said"), [
    ("nowhere", "nowhere: folder does not exist"),
    ("nowhere.csv", "nowhere.csv: file does not exist"),
    ("table.tsv", "is a .tsv file, which pcevolve does not read; save the table as CSV"),
    ("notes.txt", "is a .txt file, which pcevolve does not read; it reads image folders"),
    ("texts.json", "texts go in a JSON Lines file (.jsonl"),
    ("one.png", "is one image file; pcevolve reads images by folder"),
])
def test_kind_of_refuses_a_missing_path_or_a_file_type_it_does_not_read(name: str, said: str, tmp_path: Path) -> None:
    path = tmp_path / name
    if "." in name and name != "nowhere.csv":
        path.write_bytes(b"a\tb\n")
    with pytest.raises(DataError) as caught:
        kind_of(path)
    (problem,) = caught.value.problems
    assert problem.path == str(path) and said in str(problem)


def test_check_run_kinds_names_every_path_at_once(data: Path) -> None:
    with pytest.raises(DataError) as caught:
        check_run_kinds(data / "private.csv", {"public": data / "pool", "test": data / "nope.csv", "full": None})
    paths = [problem.path for problem in caught.value.problems]
    assert paths == [str(data / "nope.csv"), str(data / "pool")]
    assert check_run_kinds(data / "private.jsonl", {"public": data / "pool.csv", "test": None}) == "jsonl"


# ---- pcevolve init / run PRIVATE --public POOL ------------------------------------------------------------------

MISMATCHES = {  # private, the split's flag and path, what the one line must say
    "images_with_a_csv_pool": ("private", "--public", "pool.csv",
                               "is a CSV file but the private data is image folders", "give a flat folder of "
                               "unlabelled images"),
    "a_table_with_a_jsonl_pool": ("private.csv", "--public", "pool.jsonl",
                                  "is a JSONL file but the private data is a CSV table",
                                  "give a CSV table with the private table's columns and no label column"),
    "texts_with_an_image_pool": ("private.jsonl", "--public", "pool", "is a folder but the private data is JSONL texts",
                                 "give a JSONL file of unlabelled texts"),
    "a_table_with_a_jsonl_test": ("private.csv", "--test", "private.jsonl",
                                  "is a JSONL file but the private data is a CSV table",
                                  "give a CSV table with the private table's columns and its label column"),
    "images_with_a_csv_test": ("private", "--test", "private.csv", "is a CSV file but the private data is image "
                               "folders", "give a folder with one folder of images per class"),
    "a_table_with_a_full_set": ("private.csv", "--full", "private", "only an image run uses", "leave --full out"),
}


@pytest.mark.parametrize("case", sorted(MISMATCHES))
@pytest.mark.parametrize("command", ["init", "run"])
def test_a_split_of_another_kind_is_one_line_naming_both_and_nothing_is_written(case: str, command: str, data: Path,
                                                                                monkeypatch) -> None:
    from pcevolve.cli.main import app

    private, flag, split, mismatch, fix = MISMATCHES[case]
    monkeypatch.chdir(data)
    extra = [] if flag == "--public" else ["--public", {"private": "pool", "private.csv": "pool.csv"}[private]]
    out = ["--out", "c.yaml"] if command == "init" else ["--runs-root", "runs", "-q"]
    result = runner.invoke(app, [command, private, flag, split, *extra, *out])
    assert result.exit_code == 2, result.output  # the paths given: the command line needs fixing
    line = _one_problem(result.output)
    assert line.startswith(f"{split}: ") and mismatch in line and f"({private}): {fix}" in line, line
    assert not (data / "c.yaml").exists() and not (data / "runs").exists()


def test_init_names_a_file_type_it_does_not_read(data: Path, monkeypatch) -> None:
    from pcevolve.cli.main import app

    monkeypatch.chdir(data)
    (data / "records.tsv").write_text("x\tlabel\n1\ta\n", encoding="utf-8")
    result = runner.invoke(app, ["init", "records.tsv", "--public", "pool.csv", "--out", "c.yaml"])
    assert result.exit_code == 2  # as `run` does: a file it does not read is a command line to fix
    assert _one_problem(result.output).startswith("records.tsv: is a .tsv file, which pcevolve does not read")
    assert not (data / "c.yaml").exists()


# ---- columns of a private table and its public table ------------------------------------------------------------

@pytest.mark.parametrize(("pool_columns", "said"), [
    (["x"], "private.csv:row 1: has column(s) 'y' that the public table pool.csv lacks; private.csv and "
            "pool.csv need the same columns"),
    (["x", "y", "z"], "private.csv:row 1: lacks column(s) 'z' of the public table pool.csv; private.csv and "
                      "pool.csv need the same columns"),
    (["x", "z"], "private.csv:row 1: lacks column(s) 'z' of the public table pool.csv and has column(s) 'y' that "
                 "it lacks"),
])
def test_a_column_mismatch_blames_the_pair_and_names_no_schema(pool_columns: list[str], said: str, data: Path,
                                                               monkeypatch) -> None:
    from pcevolve.cli.main import app

    monkeypatch.chdir(data)
    _table(data / "pool.csv", pool_columns, 60, label=False, seed=1)
    result = runner.invoke(app, ["init", "private.csv", "--public", "pool.csv", "--out", "c.yaml"])
    assert result.exit_code == 1, result.output
    line = _one_problem(result.output)
    assert line.startswith(said) and "schema" not in result.output, line
    checked = runner.invoke(data_app, ["check", "private.csv", "--against", "pool.csv"])
    assert checked.exit_code == 1 and _one_problem(checked.output).startswith(said), checked.output
    assert not (data / "c.yaml").exists()


def test_a_label_column_under_another_name_is_one_line_naming_it(data: Path, monkeypatch) -> None:
    """The private table's one column more than the pool is most likely its label column: said once, with the fix,
    not as a missing label column and then again as an extra column."""
    monkeypatch.chdir(data)
    (data / "named.csv").write_text((data / "private.csv").read_text().replace(",label\n", ",Class\n", 1))
    checked = runner.invoke(data_app, ["check", "named.csv", "--against", "pool.csv"])
    assert checked.exit_code == 1
    assert _one_problem(checked.output).endswith("no label column 'label'; its one column the public table lacks is "
                                                 "'Class': if that is the label, name it (data.label_column: Class; "
                                                 "on the command line --label-column Class)")


def test_a_column_mismatch_with_a_schema_file_names_the_schema_file(data: Path) -> None:
    schema = draft_schema(data / "pool.csv").save(data / "schema.yaml")
    _table(data / "other.csv", ["x", "w"], 10, label=True)
    with pytest.raises(DataError) as caught:
        read_labeled_table(data / "other.csv", TableSchema.load(schema))
    (problem,) = caught.value.problems
    assert problem.path == f"{data / 'other.csv'}:row 1"
    assert problem.message.startswith(f"lacks column(s) 'y' of the schema file {schema} and has column(s) 'w' that "
                                      "it lacks; a table read against a schema file needs exactly its columns")


# ---- pcevolve data check x --against POOL -----------------------------------------------------------------------

@pytest.mark.parametrize(("private", "pool", "heading"), [
    ("private.csv", "pool.csv", "pool.csv: 60 rows, 2 features, unlabelled"),
    ("private.jsonl", "pool.jsonl", "pool.jsonl: 60 texts, unlabelled"),
])
def test_data_check_reads_a_file_without_labels_after_the_private_one_as_a_pool(private: str, pool: str,
                                                                              heading: str, data: Path,
                                                                              monkeypatch) -> None:
    monkeypatch.chdir(data)
    first = (data / private).read_text(encoding="utf-8").splitlines()[1]
    copied = first.rsplit(",", 1)[0] if private.endswith(".csv") else json.dumps({"text": json.loads(first)["text"]})
    with open(data / pool, "a", encoding="utf-8") as handle:  # a private sample in the pool: a warning, not an error
        handle.write(copied + "\n")
    result = runner.invoke(data_app, ["check", private, "--against", pool])
    assert result.exit_code == 0, result.output
    assert heading.replace("60", "61") in result.stdout and result.stdout.splitlines()[-1] == "OK"
    assert "warning: 1 private sample(s) are also in the public pool" in result.stderr


@pytest.mark.parametrize(("private", "pool", "said"), [
    ("private", "pool.csv", "pool.csv: is a CSV file but the private data is image folders (private): give an image "
                            "folder"),
    ("private.csv", "pool.jsonl", "pool.jsonl: is a JSONL file but the private data is a CSV table (private.csv): "
                                  "give a CSV table with the same columns"),
    ("private.jsonl", "pool", "pool: is a folder but the private data is JSONL texts (private.jsonl): give a JSONL "
                              "file of texts"),
])
def test_data_check_against_a_pool_of_another_kind_is_one_line(private: str, pool: str, said: str, data: Path,
                                                               monkeypatch) -> None:
    monkeypatch.chdir(data)
    result = runner.invoke(data_app, ["check", private, "--against", pool])
    assert result.exit_code == 1, result.output
    assert _one_problem(result.stdout).startswith(said)


# ---- pcevolve evaluate RUN --test ------------------------------------------------------------------------------

def _finished_looking_run(root: Path, data: Path, modality: str) -> Path:
    """A run folder with its config and ledger, which is all ``evaluate`` reads before the test data's kind."""
    files = {"tabular": ("private.csv", "pool.csv"), "image": ("private", "pool")}[modality]
    run = root / "run"
    run.mkdir(parents=True)
    config = parse_config({"name": "kinds", "data": {"modality": modality, "private": str(data / files[0]),
                                                     "public": str(data / files[1]), "test": None, "full": None,
                                                     "classes": ["a", "b"]},
                           "decoder": {"name": "nearest-public"},
                           "privacy": {"split": {"representation": 0.0, "release": 1.0}}}, source="<test config>")
    dump_config(config, run / "config.yaml")
    (run / "ledger.json").write_text("{}", encoding="utf-8")
    return run


@pytest.mark.parametrize(("modality", "test", "said"), [
    ("tabular", "private.jsonl", "private.jsonl: is a JSONL file but {run} is a table run: give a CSV table with "
                                 "the private table's columns and its label column"),
    ("image", "private.csv", "private.csv: is a CSV file but {run} is an image run: give a folder with one folder "
                             "of images per class"),
    ("tabular", "test.txt", "test.txt: is a .txt file, which pcevolve does not read"),
])
def test_evaluate_a_test_file_of_another_kind_is_one_line(modality: str, test: str, said: str, data: Path,
                                                          tmp_path: Path) -> None:
    run = _finished_looking_run(tmp_path / "runs", data, modality)
    (data / "test.txt").write_text("x,label\n", encoding="utf-8")
    app = typer.Typer(pretty_exceptions_enable=False)
    app.command("evaluate")(evaluate_commands.evaluate)
    app.command("noop")(lambda: None)  # two commands, so `evaluate` is addressed by name as under pcevolve
    result = runner.invoke(app, ["evaluate", str(run), "--test", str(data / test), "--quiet"])
    assert result.exit_code == 1, result.output
    assert _one_problem(result.output).startswith(f"error: {data}/{said.format(run=run)}"), result.output
    assert not (run / "report").exists() and not (run / "secure").exists()
