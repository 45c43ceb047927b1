"""`pcevolve budget plan` and `pcevolve ledger show`, run through their own Typer apps."""

import json
import subprocess
import sys

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
    SecureNoise,
    SubsampledGaussianSteps,
)
from pcevolve.run_folder import RunFolder

runner = CliRunner()


SEED_SPLIT = {"privacy": {"split": {"representation": 0.375, "release": 0.625}}}


def test_budget_plan_by_default_puts_the_whole_budget_on_the_release():
    result = runner.invoke(budget_commands.app, ["plan"])
    assert result.exit_code == 0, result.output
    assert "100.0%" in result.output and "8.000" in result.output and "DP-SGD for" not in result.output
    total = float(result.output.split("the accountant's total is ε = ")[1].split()[0])
    assert 7.99 <= total <= 8.0  # calibration never overshoots


def test_budget_plan_shows_the_split_and_the_seed_dpsgd_sigma(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(SEED_SPLIT))
    result = runner.invoke(budget_commands.app, ["plan", "--epsilon", "8", "--delta", "1e-5", "--config", str(config)])
    assert result.exit_code == 0, result.output
    out = result.output
    for text in ("representation", "release", "decoder", "delivery", "37.5%", "62.5%",
                 "no private access", "q = batch / n", "625 steps"):
        assert text in out, text
    # The shares 3/8 and 5/8 are scaled until the composition reaches 8: caps 3.936 and 6.560.
    assert "3.936" in out and "6.560" in out
    # The original method's schedule (batch 64, 80 epochs) at that cap, and the configured one's σ a run uses.
    assert "original method's schedule, σ on RDP │  3.883" in out and "PLD σ 3.628" in out
    assert "157" in out and "σ (accountant, for the stage cap)    │ 1.9825" in out
    # The release a run makes: the configured shares, the full second moment (528 numbers in 32-d), counts first,
    # then the rest; together one Gaussian at z = 0.708.
    assert "second moment Σ z zᵀ" in out and "528" in out and "two Gaussian events" in out
    assert "together the two events equal one release at 0.708" in " ".join(out.split())
    assert "diagonal" not in out and "DP checks at delivery" not in out
    assert "ε = 7.995" in out and "of the 8 asked" in out  # the accountant's total over the planned events
    assert "absl" not in out and "SPEC" not in out


def test_budget_plan_with_a_given_sigma_reports_affordable_steps(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({"representation": {"noise_multiplier": 2.0, "epochs": 10},
                                      "privacy": {"neighbouring": "replace_one", **SEED_SPLIT["privacy"]}}))
    result = runner.invoke(budget_commands.app, ["plan", "--config", str(config), "--n", "200"])
    assert result.exit_code == 0, result.output
    assert "σ (given in the config)" in result.output and "steps the budget allows" in result.output
    assert "replace-one" in result.output
    assert "n/a" in result.output  # no RDP analysis of Poisson sampling under replace-one


def test_budget_plan_says_not_dp_for_reproducible_noise(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({"privacy": {"reproducible_noise": True}}))
    result = runner.invoke(budget_commands.app, ["plan", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert "NOT DIFFERENTIALLY PRIVATE" in result.output


def test_budget_plan_refuses_a_split_that_does_not_add_up(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({"privacy": {"split": {"representation": 0.5, "release": 0.6}}}))
    result = runner.invoke(budget_commands.app, ["plan", "--config", str(config)])
    assert result.exit_code == 1  # the file needs fixing, not the command line
    assert "must sum to 1" in result.output


def _write_ledger(folder, *, reproducible: bool = False) -> BudgetLedger:
    privacy = RunConfig().privacy.model_copy(update={"reproducible_noise": reproducible})
    ledger = BudgetLedger.from_config(privacy, caps={"representation": 3.0, "release": 5.0, "decoder": 0.0,
                                                     "delivery": 0.0}, path=folder.ledger_path)
    rng = np.random.default_rng(0) if reproducible else SecureNoise()
    ledger.charge("representation", SubsampledGaussianSteps(0.128, 4.6, 300), description="epochs 1-38")
    GaussianMechanism(1.0, 2.0).release(np.zeros(3), ledger=ledger, stage="release", noise=rng,
                                        description="class means")
    ExponentialMechanism(1.0).release(np.array([0.2, 0.8]), ledger=ledger, stage="release", noise=rng)
    ledger.charge("delivery", PostProcessing(), description="decode")
    return ledger


def test_ledger_show_prints_history_and_totals(tmp_path):
    folder = RunFolder.create(tmp_path, RunConfig())
    ledger = _write_ledger(folder)
    result = runner.invoke(ledger_commands.app, ["show", str(folder.path)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "secure random source" in out and "NOT DP" not in out
    for text in ("subsampled_gaussian_steps", "gaussian_release", "exponential_selection", "post_processing",
                 "q=0.128 σ=4.6 steps=300", "class means", "pld+basic", "representation", "delivery"):
        assert text in out, text
    assert f"ε = {ledger.spent():.4f} of 8" in out
    # The file itself is accepted too.
    assert runner.invoke(ledger_commands.app, ["show", str(folder.ledger_path)]).exit_code == 0
    # A light command: it answers without loading torch.
    script = ("import sys\nfrom pcevolve.cli.main import app\n"
              f"try:\n    app(['ledger', 'show', {str(folder.path)!r}])\n"
              "except SystemExit as e:\n    assert not e.code, e.code\nprint('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split()[-1] == "False", done.stdout + done.stderr


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


def test_ledger_show_labels_reproducible_noise_not_dp(tmp_path):
    folder = RunFolder.create(tmp_path, RunConfig())
    _write_ledger(folder, reproducible=True)
    result = runner.invoke(ledger_commands.app, ["show", str(folder.path)])
    assert result.exit_code == 0, result.output
    assert "NOT DIFFERENTIALLY PRIVATE" in result.output and "NOT DP: reproducible noise" in result.output
