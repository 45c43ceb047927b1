"""The verdict stage in a run: planned as charged, shown in `budget plan`, resumed without paying twice, refused where
it has nothing to judge."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from pcevolve.cli.main import app
from pcevolve.config import ConfigError
from pcevolve.pipeline import open_run, run_pipeline
from pcevolve.pipeline import stages as stages_module
from pcevolve.pipeline.plan import plan_budget
from pcevolve.privacy import BudgetLedger, ExponentialSelection, account
from pcevolve.run_folder import RunFolder
from pcevolve.search.assembly import labeller_output, load_pool_labels
from pcevolve.search.verdict import shifted_labels

VERDICT = {"decoder.name": "nearest-public", "search.territory": 1.5, "search.verdict_generations": 3,
           "privacy.split": {"representation": 0.0, "release": 0.8, "verdict": 0.2},
           "privacy.reproducible_noise": True}


class Crash(BaseException):
    """Stands in for kill -9."""


@pytest.fixture(scope="module")
def verdict_run(tiny_config, tmp_path_factory):
    config, folder, _ = open_run(tiny_config(name="verdict", **VERDICT), root=tmp_path_factory.mktemp("runs"))
    run_pipeline(config, folder)
    return folder


def test_the_run_charges_the_planned_selections_and_the_total_is_their_composition(verdict_run, tiny_config):
    ledger = BudgetLedger.load(verdict_run.path / "ledger.json")
    plan = plan_budget(tiny_config(name="verdict", **VERDICT), num_samples=60)
    assert ledger.events("verdict") == tuple(ExponentialSelection(plan.verdict.selection_epsilon) for _ in range(3))
    # Recomputed independently: the release's two Gaussian events and the verdict's selections, composed.
    recomputed = account(list(ledger.events()), delta=ledger.delta, neighbouring=ledger.neighbouring,
                         pld_discretization=ledger.pld_discretization)
    assert ledger.spent() == pytest.approx(recomputed.epsilon, rel=1e-12)
    assert ledger.spent() == pytest.approx(plan.total.epsilon, rel=1e-9) and ledger.spent() <= 8.0
    saved = json.loads((verdict_run.path / "verdict.json").read_text())
    assert saved["generation"] == 3 and len(saved["offsets"]) == 3
    # What leaves the run holds the chosen offsets, never a private count.
    record = [json.loads(line) for line in (verdict_run.path / "records.jsonl").read_text().splitlines()
              if json.loads(line)["kind"] == "verdict"][0]
    assert set(record) >= {"generations", "offsets", "selection_epsilon"} and "counts" not in json.dumps(record)
    shown = CliRunner().invoke(app, ["budget", "plan", "--config", str(verdict_run.path / "config.yaml"), "--n", "60"])
    assert shown.exit_code == 0 and f"{plan.verdict.selection_epsilon:.4f}" in shown.output


def test_the_territories_a_benchmark_rebuilds_carry_the_verdicts_offsets(verdict_run):
    labels = load_pool_labels(RunFolder.open(verdict_run.path))
    raw = labeller_output(RunFolder.open(verdict_run.path))
    offsets = json.loads((verdict_run.path / "verdict.json").read_text())["offsets"]
    expected = shifted_labels(raw, np.array(offsets))
    np.testing.assert_allclose(labels.posterior, expected.posterior)


def test_a_kill_inside_the_verdict_resumes_without_paying_twice(tiny_config, tmp_path, monkeypatch):
    config, folder, _ = open_run(tiny_config(name="killed", **VERDICT), root=tmp_path)
    original = stages_module.atomic_write_json
    saves = []

    def crash_on_second_save(path, data):
        if path.name == stages_module.VERDICT_FILE:
            saves.append(data["generation"])
            if len(saves) == 2:
                raise Crash()  # the second generation has paid; its choice is lost
        return original(path, data)

    monkeypatch.setattr(stages_module, "atomic_write_json", crash_on_second_save)
    with pytest.raises(Crash):
        run_pipeline(config, folder)
    monkeypatch.setattr(stages_module, "atomic_write_json", original)
    assert len(BudgetLedger.load(folder.path / "ledger.json").events("verdict")) == 2
    config, folder, _ = open_run(None, resume=folder.path)
    run_pipeline(config, folder)
    ledger = BudgetLedger.load(folder.path / "ledger.json")
    assert len(ledger.events("verdict")) == 3 and ledger.spent() <= 8.0
    # The lost generation stays lost: two choices saved (the first, then the third), three paid.
    assert json.loads((folder.path / "verdict.json").read_text())["generation"] == 2


def test_a_verdict_without_territories_is_refused_before_anything_runs(tiny_config):
    with pytest.raises(ConfigError, match="privacy.split.verdict"):
        tiny_config(name="conv", **{**VERDICT, "decoder.name": "conv"})
    with pytest.raises(ConfigError, match="privacy.split.verdict"):
        tiny_config(name="free", **{**VERDICT, "search.territory": 0})


def test_a_kill_after_the_last_charge_resumes_without_reading_or_paying_again(tiny_config, tmp_path, monkeypatch):
    config, folder, _ = open_run(tiny_config(name="last", **VERDICT), root=tmp_path)
    original = stages_module.atomic_write_json

    def crash_on_third_save(path, data):
        if path.name == stages_module.VERDICT_FILE and data["generation"] == 3:
            raise Crash()  # the last generation has paid; its choice is lost
        return original(path, data)

    monkeypatch.setattr(stages_module, "atomic_write_json", crash_on_third_save)
    with pytest.raises(Crash):
        run_pipeline(config, folder)
    monkeypatch.setattr(stages_module, "atomic_write_json", original)
    config, folder, _ = open_run(None, resume=folder.path)
    run_pipeline(config, folder)
    ledger = BudgetLedger.load(folder.path / "ledger.json")
    assert len(ledger.events("verdict")) == 3 and ledger.spent() <= 8.0
    assert json.loads((folder.path / "verdict.json").read_text())["generation"] == 2
