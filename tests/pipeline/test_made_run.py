"""A table run without a public pool, end to end on the small table of conftest.py: the one-line run, init's draft,
the plan against the ledger, the delivered file, the judge and the export."""

from __future__ import annotations

import csv
import json

import pytest
from typer.testing import CliRunner

from pcevolve.cli.main import app
from pcevolve.config import load_config
from pcevolve.data.table_schema import TableSchema, draft_schema
from pcevolve.pipeline.plan import MadeReleasePlan, plan_budget
from pcevolve.privacy import BudgetLedger


def _cli(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(app, [str(arg) for arg in args])
    return result.exit_code, " ".join(result.output.split())


@pytest.fixture(scope="module")
def declared(table_data, tmp_path_factory):
    """The schema a user declares: here drafted from the (unlabelled) public table of the fixture, public knowledge."""
    path = tmp_path_factory.mktemp("schema") / "schema.yaml"
    draft_schema(table_data / "public.csv", label_column="label").save(path)
    return path


@pytest.fixture(scope="module")
def made(table_data, declared, tmp_path_factory):
    """``pcevolve run private.csv --classes fraud,ok --schema schema.yaml`` with no --public, as a user types it."""
    root = tmp_path_factory.mktemp("made")
    code, output = _cli("run", table_data / "private.csv", "--classes", "fraud,ok", "--schema", declared,
                        "--test", table_data / "test.csv", "--epsilon", "8", "--name", "made", "--runs-root",
                        root / "runs", "-q")
    assert code == 0, output
    return root / "runs" / "made", output


def test_the_one_line_run_without_a_pool_delivers_the_declared_columns_and_classes(made, declared, table_data):
    folder, output = made
    assert "made without a public pool" in output and "(ε, δ) = (" in output
    schema = TableSchema.load(declared)
    with open(folder / "synthetic.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == [*schema.names, "label"] and len(rows) == 1 + 2000
    assert {row[-1] for row in rows[1:]} == {"fraud", "ok"}
    for j, column in enumerate(schema.columns):
        cells = [row[j] for row in rows[1:]]
        if column.kind == "categorical":
            assert set(cells) <= set(column.categories)
        else:
            assert all(column.low <= float(cell) <= column.high for cell in cells)
    private = {tuple(row) for row in csv.reader(open(table_data / "private.csv", encoding="utf-8"))}
    assert not private & {tuple(row) for row in rows[1:]}  # no private row delivered as it is
    config = load_config(folder / "config.yaml")
    assert config.data.public is None and config.makes_samples and config.data.classes == ("fraud", "ok")


def test_the_plan_is_what_the_run_charged(made):
    folder, _ = made
    config = load_config(folder / "config.yaml")
    ledger = BudgetLedger.load(folder / "ledger.json")
    plan = plan_budget(config, 60)
    assert isinstance(plan.release, MadeReleasePlan) and set(plan.release.noise_multipliers) == {
        "bin_placement", "marginals", "gradient"}  # ε 8: bins placed by quantiles, the logistic labeller
    assert ledger.spent() == pytest.approx(plan.total.epsilon, rel=1e-6) and 0.99 * 8 <= ledger.spent() <= 8
    charged = [entry.event.noise_multiplier for entry in ledger.history]
    planned = [plan.release.noise_multipliers[name] for name in ("bin_placement", "marginals")] + \
        [plan.release.noise_multipliers["gradient"]] * plan.release.repeats["gradient"]
    assert charged == pytest.approx(planned, rel=1e-12)
    code, output = _cli("budget", "plan", "--config", folder / "config.yaml", "--n", "60")
    assert code == 0 and "logistic regression's gradient" in output


def test_a_finished_made_run_resumes_judges_and_exports(made, table_data, tmp_path):
    folder, _ = made
    code, output = _cli("run", "--resume", folder, "-q")
    assert code == 0 and "made without a public pool" in output
    assert len(BudgetLedger.load(folder / "ledger.json").history) == 5  # nothing paid twice
    code, output = _cli("evaluate", folder, "--test", table_data / "test.csv")
    assert code == 0 and "membership attack AUC" in output
    evaluation = json.loads((folder / "report" / "evaluation.json").read_text(encoding="utf-8"))
    assert evaluation["dp"] is True and "not evolved" in evaluation["made_by"]
    assert "Made without a public pool" in (folder / "report" / "report.md").read_text(encoding="utf-8")
    code, output = _cli("export", folder, tmp_path / "shared", "--with-report")
    assert code == 0, output
    assert (tmp_path / "shared" / "synthetic.csv").is_file()


def test_without_a_declared_schema_the_run_refuses_and_init_drafts_one(table_data, tmp_path):
    code, output = _cli("run", table_data / "private.csv", "--classes", "fraud,ok", "--runs-root", tmp_path / "runs",
                        "-q")
    assert code == 1 and "data.schema_file must be declared by you" in output and "--schema FILE" in output
    assert not (tmp_path / "runs").exists()
    code, output = _cli("init", table_data / "private.csv", "--classes", "fraud,ok", "--out", tmp_path / "c.yaml")
    assert code == 0 and "drafted from your private table" in output, output
    draft = tmp_path / "c.schema.yaml"
    text = draft.read_text(encoding="utf-8")
    assert text.startswith("# DRAFTED FROM YOUR PRIVATE TABLE") and "public knowledge" in text
    schema = TableSchema.load(draft)
    amount = next(column for column in schema.columns if column.name == "amount")
    assert amount.low == 0.0 and amount.high % 1000 == 0  # the rows' range widened to round numbers
    config = load_config(tmp_path / "c.yaml")
    assert config.data.schema_file == str(draft.resolve()) and config.makes_samples
    again, _ = _cli("init", table_data / "private.csv", "--classes", "fraud,ok", "--out", tmp_path / "c.yaml",
                    "--force")
    assert again == 0
    refused, output = _cli("init", table_data / "private.csv", "--classes", "fraud,ok", "--out", tmp_path / "d.yaml",
                           "--schema", tmp_path / "missing.yaml")
    assert refused == 2 and "no such file" in output


def test_a_run_without_a_pool_reads_the_same_through_the_python_api(table_data, declared, tmp_path):
    import pandas as pd

    from pcevolve import Synthesizer

    private = pd.read_csv(table_data / "private.csv")
    synth = Synthesizer(settings={"data.modality": "tabular", "data.classes": ["fraud", "ok"],
                                  "data.schema_file": str(declared), "data.public": None,
                                  "privacy.split": {"release": 1.0}, "synthesis.per_class": 50},
                        runs_root=tmp_path / "runs", progress=False, epsilon=1.0).fit(private)
    frame = synth.sample()
    assert list(frame.columns) == list(private.columns) and len(frame) == 100
    assert set(frame["label"]) == {"fraud", "ok"} and 0.99 <= synth.epsilon <= 1.0


def test_the_evolution_pays_a_verdict_each_generation_and_resumes_after_its_last_paid_one(table_config, declared,
                                                                                           tmp_path, monkeypatch):
    """``synthesis.evolve``: each generation one exponential selection charged to the verdict stage, as planned; a
    run killed after two generations continues with the third, never paying one twice."""
    import pcevolve.synthesis.evolve as evolve_module
    from pcevolve.pipeline import open_run, run_pipeline

    config = table_config(name="evolved", **{"data.public": None, "data.schema_file": str(declared),
                                             "privacy.split": {"release": 0.95, "verdict": 0.05},
                                             "synthesis.evolve": True, "synthesis.candidates": 4,
                                             "synthesis.candidate_rows": 200, "synthesis.per_class": 50})
    real = evolve_module.ExponentialMechanism.release
    calls = []

    def killed_at_the_third(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # the kill, before the third verdict is charged
        return real(self, *args, **kwargs)

    monkeypatch.setattr(evolve_module.ExponentialMechanism, "release", killed_at_the_third)
    config, folder, _ = open_run(config, root=tmp_path)
    with pytest.raises(KeyboardInterrupt):
        run_pipeline(config, folder)
    assert len(BudgetLedger.load(folder.ledger_path).events("verdict")) == 2
    monkeypatch.setattr(evolve_module.ExponentialMechanism, "release", real)
    config, folder, _ = open_run(None, resume=folder.path)
    outcome = run_pipeline(config, folder)
    ledger = BudgetLedger.load(folder.ledger_path)
    plan = plan_budget(config, 60)
    assert [e.epsilon for e in ledger.events("verdict")] == pytest.approx([plan.verdict.selection_epsilon] * 3)
    assert ledger.spent() == pytest.approx(plan.total.epsilon, rel=1e-6) and 0.99 * 8 <= ledger.spent() <= 8
    assert "evolved over 3 generations" in outcome.made_by and sum(outcome.synthetic_counts) == 100
    assert len(folder.records("evolution_generation")) == 3
