"""A table through the whole pipeline: synthetic.csv in the input's columns, a ledger at the accountant's total,
and the same delivered set from a reproducible run resumed after a kill."""

import csv

import numpy as np
import pytest

from pcevolve.data.table_schema import draft_schema
from pcevolve.data.tabular import read_labeled_table
from pcevolve.pipeline import export_run, open_run, run_pipeline
from pcevolve.privacy import BudgetLedger


def test_a_table_run_delivers_a_csv_with_the_input_columns_and_spends_the_budget(table_config, table_data,
                                                                              table_header, tmp_path):
    config, folder, _ = open_run(table_config(), root=tmp_path)
    outcome = run_pipeline(config, folder)
    assert outcome.delivered == folder.path / "synthetic.csv" and outcome.noun == "row"
    with open(outcome.delivered, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == [*table_header, "label"] and len(rows) - 1 == sum(outcome.synthetic_counts) == 100
    schema = draft_schema(table_data / "public.csv")
    delivered = read_labeled_table(outcome.delivered, schema, class_names=("fraud", "ok"))
    assert set(np.unique(delivered.labels)) == {0, 1}
    # Every delivered row is a public row (retrieval), never a private one.
    public = {tuple(r) for r in csv.reader(open(table_data / "public.csv", encoding="utf-8"))}
    private = {tuple(r[:-1]) for r in csv.reader(open(table_data / "private.csv", encoding="utf-8"))}
    assert all(tuple(r[:-1]) in public for r in rows[1:]) and not any(tuple(r[:-1]) in private for r in rows[1:])
    ledger = BudgetLedger.load(folder.ledger_path)
    assert 0.99 * 8.0 <= ledger.spent() <= 8.0 and ledger.spent("representation") == 0.0
    assert not (folder.path / "secure" / "checkpoints").exists() or not any((folder.path / "secure" / "checkpoints")
                                                                           .iterdir())
    # The export carries the table as delivered, in its format, with the guarantee in words for rows.
    shared = export_run(folder.path, tmp_path / "shared")
    assert (shared.path / "synthetic.csv").read_bytes() == outcome.delivered.read_bytes()
    assert "any one private row" in (shared.path / "README.txt").read_text()


def test_a_reproducible_table_run_resumed_after_a_kill_delivers_the_same_rows(table_config, tmp_path, monkeypatch):
    import pcevolve.pipeline.stages as stages

    config = table_config(name="whole", **{"privacy.reproducible_noise": True})
    _, whole, _ = open_run(config, root=tmp_path)
    run_pipeline(config, whole)

    class Crash(Exception):
        pass

    def crash(*args, **kwargs):
        raise Crash

    killed_config = table_config(name="killed", **{"privacy.reproducible_noise": True})
    _, killed, _ = open_run(killed_config, root=tmp_path)
    monkeypatch.setattr(stages, "write_synthetic_arrays", crash)
    with pytest.raises(Crash):
        run_pipeline(killed_config, killed)
    monkeypatch.undo()
    resumed_config, resumed, _ = open_run(None, resume=killed.path)
    run_pipeline(resumed_config, resumed)
    assert (whole.path / "synthetic.csv").read_bytes() == (resumed.path / "synthetic.csv").read_bytes()


def test_the_table_encoder_round_trips_through_its_folder(table_data, tmp_path):
    from pcevolve.data.tabular import read_unlabeled_table
    from pcevolve.encoders.table import TableEncoder

    schema = draft_schema(table_data / "public.csv")
    public = read_unlabeled_table(table_data / "public.csv", schema).samples
    encoder = TableEncoder(schema, hidden=16, projection_dim=8, seed=1)
    encoder.fit_public_preprocessing(public)
    loaded = TableEncoder.load(encoder.save(tmp_path / "encoder"))
    np.testing.assert_array_equal(encoder.encode(public[:50]), loaded.encode(public[:50]))
    # projection 8 + numbers amount, rate, count (3) + one-hot kind (3) and region (4)
    assert encoder.feature_dim == 8 + 3 + 3 + 4 == encoder.encode(public[:3]).shape[1]


def test_init_on_a_table_chooses_from_the_public_table_only(table_data, tmp_path):
    """Two private tables with different counts give the same config text (it leaves the secure zone)."""
    from typer.testing import CliRunner

    from pcevolve.cli.main import app
    from pcevolve.config import load_config

    fewer = tmp_path / "fewer" / "private.csv"
    fewer.parent.mkdir()
    lines = (table_data / "private.csv").read_text(encoding="utf-8").splitlines()
    fewer.write_text("\n".join(lines[:-5]) + "\n", encoding="utf-8")
    texts = []
    for private, out in ((table_data / "private.csv", tmp_path / "a.yaml"), (fewer, tmp_path / "b.yaml")):
        result = CliRunner().invoke(app, ["init", str(private), "--public", str(table_data / "public.csv"),
                                          "--name", "same", "--out", str(out)])
        assert result.exit_code == 0, result.output
        texts.append(out.read_text(encoding="utf-8").replace(str(private.resolve()), "PRIVATE"))
    assert texts[0].splitlines()[1:] == texts[1].splitlines()[1:]
    config = load_config(tmp_path / "a.yaml")
    assert config.data.modality == "tabular" and config.decoder.name == "nearest-public"
    missing = CliRunner().invoke(app, ["init", str(table_data / "private.csv"), "--public",
                                       str(table_data / "public.csv"), "--label-column", "Class",
                                       "--out", str(tmp_path / "c.yaml")])
    assert missing.exit_code == 1 and "no label column 'Class'" in missing.output


def test_init_proposes_the_classes_for_the_user_to_declare_and_a_one_label_table_needs_them(table_data, tmp_path):
    """The classes are the user's declaration: init proposes the label values it finds and says so in the file; a
    table whose rows all carry one label gets through once the task's classes are declared (a class may be empty)."""
    from typer.testing import CliRunner

    from pcevolve.cli.main import app
    from pcevolve.config import load_config

    public = str(table_data / "public.csv")
    result = CliRunner().invoke(app, ["init", str(table_data / "private.csv"), "--public", public,
                                      "--out", str(tmp_path / "a.yaml")])
    assert result.exit_code == 0, result.output
    comments = " ".join(line.strip().removeprefix("# ") for line in (tmp_path / "a.yaml").read_text().splitlines())
    assert load_config(tmp_path / "a.yaml").data.classes == ("fraud", "ok")
    assert "proposed from the values of column 'label' in private.csv" in comments
    assert "This list is your declaration of what the task's classes are, not something the run learns" in comments
    only_ok = tmp_path / "ok.csv"
    lines = (table_data / "private.csv").read_text(encoding="utf-8").splitlines()
    only_ok.write_text("\n".join([lines[0], *(line for line in lines[1:] if line.endswith(",ok"))]) + "\n",
                       encoding="utf-8")
    one = CliRunner().invoke(app, ["init", str(only_ok), "--public", public, "--out", str(tmp_path / "b.yaml")])
    assert one.exit_code == 1 and "declare the task's classes" in " ".join(one.output.split()), one.output
    declared = CliRunner().invoke(app, ["init", str(only_ok), "--public", public, "--out", str(tmp_path / "b.yaml"),
                                        "--set", "data.classes=[fraud, ok]"])
    assert declared.exit_code == 0, declared.output
    assert load_config(tmp_path / "b.yaml").data.classes == ("fraud", "ok")
    assert "'fraud' (0)" in " ".join(declared.output.split())  # the empty class, said on the console


def test_the_python_api_fits_samples_saves_and_evaluates_a_table(table_config, table_data, tmp_path):
    from pcevolve import Synthesizer

    synth = Synthesizer(table_config(name="api"), runs_root=tmp_path / "runs", progress=False).fit()
    assert synth.is_dp and 7.9 <= synth.epsilon <= 8.0
    few = synth.sample(10)
    assert len(few) == 10 and few.modality == "tabular" and set(few.class_names) == {"fraud", "ok"}
    saved = synth.save(tmp_path / "shared.csv", n=10)
    assert saved.read_text(encoding="utf-8").splitlines()[0].endswith(",label") and len(saved.read_text(
        encoding="utf-8").splitlines()) == 11
    evaluation = synth.evaluate(table_data / "test.csv")
    assert (synth.folder / "report" / "report.html").exists() and evaluation is not None
