"""`pcevolve budget plan` and `pcevolve ledger show`, run through their own Typer apps."""

import json

import numpy as np
import yaml
from typer.testing import CliRunner

from pcevolve.cli import budget_commands, ledger_commands
from pcevolve.config import RunConfig
from pcevolve.privacy import (
    BudgetLedger,
    ExponentialMechanism,
    GaussianMechanism,
    PostProcessing,
    SubsampledGaussianSteps,
)
from pcevolve.run_folder import RunFolder

runner = CliRunner()


def test_budget_plan_shows_the_split_and_the_seed_dpsgd_sigma():
    result = runner.invoke(budget_commands.app, ["plan", "--epsilon", "8", "--delta", "1e-5"])
    assert result.exit_code == 0, result.output
    out = result.output
    for text in ("representation", "fitness", "decoder", "delivery", "37.5%", "62.5%",
                 "no private access", "q = batch / n", "625 steps"):
        assert text in out, text
    # SPEC R3.4a: the seed's schedule (batch 64, 80 epochs) needs σ ≈ 4.9 under RDP, 4.56 under PLD.
    assert "seed's setting, σ on RDP   │   4.893" in out and "PLD σ 4.558" in out
    # The configured schedule (20 epochs, 157 steps) needs less noise for the same ε.
    assert "157" in out
    assert "σ calibrated on RDP        │   2.616" in out
    assert "RFF mean embedding" in out and "1.784·C" in out  # fitness: z = 0.892, equal shares of 4
    assert "absl" not in out


def test_budget_plan_with_a_given_sigma_reports_affordable_steps(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({"representation": {"noise_multiplier": 2.0, "epochs": 10},
                                      "privacy": {"neighbouring": "replace_one"}}))
    result = runner.invoke(budget_commands.app, ["plan", "--config", str(config), "--n", "200"])
    assert result.exit_code == 0, result.output
    assert "σ given in config" in result.output and "affordable:" in result.output
    assert "replace-one" in result.output
    assert "n/a" in result.output  # no RDP analysis of Poisson sampling under replace-one


def test_budget_plan_refuses_a_total_below_the_stage_split():
    result = runner.invoke(budget_commands.app, ["plan", "--epsilon", "4"])
    assert result.exit_code == 2
    assert "stage budgets sum to 8" in result.output


def _write_ledger(folder) -> BudgetLedger:
    ledger = BudgetLedger.from_config(RunConfig().privacy, path=folder.ledger_path)
    rng = np.random.default_rng(0)
    ledger.charge("representation", SubsampledGaussianSteps(0.128, 4.6, 300), description="epochs 1-38")
    GaussianMechanism(1.0, 2.0).release(np.zeros(3), ledger=ledger, stage="fitness", noise=rng,
                                        description="class means")
    ExponentialMechanism(1.0).release(np.array([0.2, 0.8]), ledger=ledger, stage="fitness", noise=rng)
    ledger.charge("delivery", PostProcessing(), description="decode")
    return ledger


def test_ledger_show_prints_history_and_totals(tmp_path):
    folder = RunFolder.create(tmp_path, RunConfig())
    ledger = _write_ledger(folder)
    result = runner.invoke(ledger_commands.app, ["show", str(folder.path)])
    assert result.exit_code == 0, result.output
    out = result.output
    for text in ("subsampled_gaussian_steps", "gaussian_release", "exponential_selection", "post_processing",
                 "q=0.128 σ=4.6 steps=300", "class means", "pld+basic", "representation", "delivery"):
        assert text in out, text
    assert f"ε = {ledger.spent():.4f} of 8" in out
    # The file itself is accepted too.
    assert runner.invoke(ledger_commands.app, ["show", str(folder.ledger_path)]).exit_code == 0


def test_ledger_show_reports_a_tampered_or_missing_ledger(tmp_path):
    folder = RunFolder.create(tmp_path, RunConfig())
    _write_ledger(folder)
    document = json.loads(folder.ledger_path.read_text())
    document["entries"][0]["total_epsilon"] = 0.0
    folder.ledger_path.write_text(json.dumps(document))
    result = runner.invoke(ledger_commands.app, ["show", str(folder.path)])
    assert result.exit_code == 1 and "integrity" in result.output
    missing = runner.invoke(ledger_commands.app, ["show", str(tmp_path / "nowhere")])
    assert missing.exit_code == 1 and "no ledger" in missing.output
