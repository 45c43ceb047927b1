"""``pcevolve audit``: usage, exit status, the audit file, and the report's audit section."""

from __future__ import annotations

from pathlib import Path

import pytest
import numpy as np
from typer.testing import CliRunner

from pcevolve.audit.results import read_audit, write_audit_part
from pcevolve.cli.main import app
from pcevolve.privacy.noise import SecureNoise
from pcevolve.report.audit import MEANING, audit_section
from pcevolve.report.document import Paragraph, Table

DEMO = str(Path(__file__).resolve().parents[2] / "configs" / "demo.yaml")
QUICK = ["--mechanisms", "--config", DEMO, "--n", "100", "--trials", "0.03", "--quiet"]


def test_audit_needs_a_run_or_mechanisms():
    result = CliRunner().invoke(app, ["audit"])
    assert result.exit_code == 2 and "--mechanisms" in result.output


def test_audit_refuses_a_folder_that_is_not_a_run(tmp_path):
    result = CliRunner().invoke(app, ["audit", str(tmp_path)])
    assert result.exit_code == 1 and "not a run folder" in result.output


def test_mechanisms_audit_of_the_demo_config_passes(monkeypatch):
    from pcevolve.audit import mechanisms
    from pcevolve.privacy.noise import GeneratorNoise

    # Seeded, so that a correct mechanism's rare bound above its claim (under 1 % a game) never fails a CI run.
    monkeypatch.setattr(mechanisms, "SecureNoise", lambda: GeneratorNoise(np.random.default_rng(7)))
    result = CliRunner().invoke(app, ["audit", *QUICK, "--all"])
    assert result.exit_code == 0, result.output
    assert result.output.count("pass") == 5  # one row per mechanism: release, vote, selection, two DP-SGD steps
    assert "FAIL" not in result.output and "95% confidence" in result.output
    used = CliRunner().invoke(app, ["audit", *QUICK])  # the demo's one mechanism, the release: no minutes on others
    assert used.exit_code == 0 and used.output.count("pass") == 1 and "vote" not in used.output


def test_mechanisms_audit_exits_1_when_the_noise_is_halved(monkeypatch):
    normal = SecureNoise.normal
    monkeypatch.setattr(SecureNoise, "normal", lambda self, scale, size: normal(self, 0.5 * scale, size))
    result = CliRunner().invoke(app, ["audit", *QUICK])
    assert result.exit_code == 1 and "FAIL" in result.output


def test_audit_file_keeps_the_other_part_and_never_replaces_a_foreign_file(tmp_path):
    write_audit_part(tmp_path, "mechanisms", {"passed": True, "results": []})
    write_audit_part(tmp_path, "end_to_end", {"passed": True})
    audit = read_audit(tmp_path)
    assert audit["mechanisms"] == {"passed": True, "results": []} and audit["end_to_end"] == {"passed": True}
    other = tmp_path / "other"
    other.mkdir()
    (other / "audit.json").write_text('{"mine": 1}\n')
    with pytest.raises(FileExistsError):
        write_audit_part(other, "mechanisms", {})
    assert (other / "audit.json").read_text() == '{"mine": 1}\n'
    with pytest.raises(ValueError):
        write_audit_part(tmp_path, "attacks", {})


def test_the_report_shows_the_bounds_beside_the_claim_with_what_they_mean():
    row = {"mechanism": "class statistics release (Gaussian)", "setting": "σ = 0.6", "claimed_epsilon": 8.0,
           "epsilon_lower_bound": 7.67, "claimed_mu": 1.67, "mu_lower_bound": 1.61, "trials": 5000, "passed": True}
    section = audit_section({"audit": {"mechanisms": {"results": [row]},
                                       "end_to_end": {"canaries": 500, "guesses": 100, "correct": 55,
                                                      "claimed_epsilon": 8.0, "epsilon_lower_bound": 0.0,
                                                      "ceiling": 3.47, "highest_ceiling": 4.65, "passed": True}}})
    texts = [block.text for block in section.blocks if isinstance(block, Paragraph)]
    assert MEANING in texts
    assert any("could not have refuted ε = 8.00" in text for text in texts)  # its ceiling, 4.65, is below the claim
    tables = [block for block in section.blocks if isinstance(block, Table)]
    assert tables[0].rows[0][2:4] == ("8.00", "7.67") and tables[1].rows[0][3:5] == ("8.00", "0.00")
    assert tables[1].rows[0][-1] == "inconclusive"  # an audit that cannot fail is no pass
    reaching = audit_section({"audit": {"end_to_end": {"claimed_epsilon": 1.0, "highest_ceiling": 4.65,
                                                       "passed": True}}})
    assert [b for b in reaching.blocks if isinstance(b, Table)][0].rows[0][-1] == "pass"
    unaudited = audit_section({"audit": None})
    assert "pcevolve audit" in unaudited.blocks[0].text and len(unaudited.blocks) == 1


def test_a_shared_report_carries_the_end_to_end_bounds_rounded_and_delta_as_it_is(tmp_path):
    from pcevolve.evaluation.inputs import audit_json

    assert audit_json(tmp_path) is None
    write_audit_part(tmp_path, "end_to_end", {"epsilon_lower_bound": 0.647412, "ceiling": 3.0198, "delta": 1e-5,
                                              "grid": [{"k": 10, "epsilon": 0.558898}], "passed": True})
    shared = audit_json(tmp_path)["end_to_end"]
    assert shared["epsilon_lower_bound"] == 0.65 and shared["ceiling"] == 3.02 and shared["delta"] == 1e-5
    assert shared["grid"] == [{"k": 10, "epsilon": 0.56}]


def test_auditing_a_folder_that_only_looks_like_a_run_is_one_error_line(tmp_path):
    (tmp_path / "config.yaml").write_text(Path(DEMO).read_text())
    result = CliRunner().invoke(app, ["audit", str(tmp_path)])
    assert result.exit_code == 1 and "error:" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "audit.json").exists() and not (tmp_path / "secure").exists()


def test_no_end_to_end_without_mechanisms_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(app, ["audit", str(tmp_path), "--no-end-to-end"])
    assert result.exit_code == 2 and "--mechanisms" in result.output


def test_an_unfinished_run_is_refused_before_any_game(tmp_path, monkeypatch):
    # A killed run's ledger holds part of what it will charge: its audit would show what the run never finished.
    from pcevolve.audit import mechanisms

    played: list[str] = []
    monkeypatch.setattr(mechanisms, "play", lambda game: played.append(game.name))
    (tmp_path / "config.yaml").write_text(Path(DEMO).read_text())
    (tmp_path / "manifest.json").write_text("{}")
    for extra in (["--no-end-to-end"], []):
        result = CliRunner().invoke(app, ["audit", str(tmp_path), "--mechanisms", *extra])
        assert result.exit_code == 1 and "not a finished run" in result.output and "--resume" in result.output
        assert not played and not (tmp_path / "audit.json").exists()


def test_an_end_to_end_audit_it_cannot_play_is_refused_before_the_games(tmp_path, monkeypatch):
    from pcevolve.audit import mechanisms

    played: list[str] = []
    monkeypatch.setattr(mechanisms, "play", lambda game: played.append(game.name))
    table = Path(DEMO).parent / "tabular-demo.yaml"
    (tmp_path / "config.yaml").write_text(table.read_text())
    (tmp_path / "manifest.json").write_text("{}")
    (tmp_path / "stages").mkdir()
    (tmp_path / "stages" / "delivery.json").write_text("{}")
    result = CliRunner().invoke(app, ["audit", str(tmp_path), "--mechanisms"])
    assert result.exit_code == 1 and "supports image runs" in result.output and "tabular run" in result.output
    assert not played and not (tmp_path / "audit.json").exists()


def test_the_ledger_chart_counts_events_in_whole_numbers():
    from pcevolve.report.figures import ledger_figure

    stages = {"release": {"cap": 4.0, "epsilon": 3.9}}
    figure = ledger_figure(stages, [{"total_epsilon": 2.0}, {"total_epsilon": 3.9}], total_cap=4.0)
    figure.canvas.draw()
    ticks = [tick for tick in figure.axes[1].get_xticks() if 1 <= tick <= 2]
    assert ticks and all(float(tick).is_integer() for tick in ticks)
