"""Usage errors and budgets out of range: each exits 2 (fix the command line) or 1 (fix the files), says which
argument or key is wrong and how to write it, prints no traceback and leaves no run folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import pcevolve.pipeline
from pcevolve.cli.main import app
from pcevolve.config import dump_config

runner = CliRunner()


def _cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, [str(arg) for arg in args])
    assert "Traceback" not in result.output
    return result.exit_code, " ".join(result.output.split())


@pytest.fixture
def config_file(tmp_path, tiny_config) -> Path:
    path = tmp_path / "tiny.yaml"
    dump_config(tiny_config(name="usage"), path)
    return path


@pytest.mark.parametrize("epsilon", ["inf", "nan", "1e4", "-1", "1e400", "0"])
def test_a_budget_out_of_range_is_refused_before_anything_is_read(tmp_path, tiny_data, config_file, epsilon) -> None:
    runs = tmp_path / "runs"
    for args in (("run", config_file, "--epsilon", epsilon, "--runs-root", runs),
                 ("run", tiny_data / "private", "--public", tiny_data / "public", "--epsilon", epsilon,
                  "--runs-root", runs),
                 ("init", tiny_data / "private", "--public", tiny_data / "public", "--epsilon", epsilon,
                  "--out", tmp_path / "init.yaml"),
                 ("budget", "plan", "--epsilon", epsilon)):
        code, output = _cli(*args)
        assert code == 2, (args, output)
        assert "privacy.epsilon" in output and "(0, 100]" in output, output
    assert not runs.exists() and not (tmp_path / "init.yaml").exists()


def test_a_budget_in_a_config_file_or_setting_is_checked_too(tmp_path, config_file) -> None:
    code, output = _cli("run", config_file, "--set", "privacy.epsilon=.inf", "--runs-root", tmp_path / "runs")
    assert code == 2 and "--set: key 'privacy.epsilon' has bad value inf" in output
    text = config_file.read_text().replace("epsilon: 8.0", "epsilon: .inf")
    (tmp_path / "inf.yaml").write_text(text)
    for args in (("run", tmp_path / "inf.yaml", "--runs-root", tmp_path / "runs"),
                 ("budget", "plan", "--config", tmp_path / "inf.yaml")):
        code, output = _cli(*args)
        assert code == 1 and "inf.yaml: key 'privacy.epsilon' has bad value inf" in output, output
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("command", [["budget", "plan"], ["run", "CONFIG"], ["run", "PRIVATE", "--public", "POOL"],
                                     ["init", "PRIVATE", "--public", "POOL"]])
def test_a_bad_budget_is_refused_without_loading_torch(command, config_file, tiny_data, tmp_path) -> None:
    """How `--epsilon inf` answers in well under 2 s: nothing heavy is imported before the check."""
    paths = {"CONFIG": str(config_file), "PRIVATE": str(tiny_data / "private"), "POOL": str(tiny_data / "public")}
    argv = [paths.get(arg, arg) for arg in command] + ["--epsilon", "inf"]
    script = ("import sys\nfrom pcevolve.cli.main import app\n"
              f"try:\n    app({argv!r})\nexcept SystemExit as e:\n    code = e.code\n"
              "print('torch' in sys.modules, code)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True,
                          cwd=tmp_path)
    assert done.stdout.split() == ["False", "2"], done.stdout + done.stderr
    assert not (tmp_path / "runs").exists()


def test_budget_plan_at_the_ceiling_answers(tmp_path) -> None:
    code, output = _cli("budget", "plan", "--epsilon", "100")
    assert code == 0 and "of the 100 asked" in output


@pytest.mark.parametrize(("source", "expected"), [
    ("missing-folder", "missing-folder: folder does not exist"),
    ("private.tsv", "private.tsv: is a .tsv file, which pcevolve does not read; save the table as CSV"),
    ("notes.txt", "notes.txt: is a .txt file, which pcevolve does not read"),
    ("typo.csv", "typo.csv: file does not exist"),
    ("typo.yaml", "typo.yaml: no such config file"),
])
def test_a_source_that_is_not_a_config_or_data_names_itself(tmp_path, monkeypatch, source, expected) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "private.tsv").write_text("a\tb\n1\t2\n")
    (tmp_path / "notes.txt").write_text("hello")
    code, output = _cli("run", source, "--public", "pool")
    assert code == 2 and expected in output and "--public choose" not in output, output
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("extra", [["--epsilon", "2"], ["--set", "search.generations=3"], ["--name", "other"]])
def test_resume_refuses_new_settings_by_name(tmp_path, extra) -> None:
    code, output = _cli("run", "--resume", tmp_path / "runs" / "x", *extra)
    assert code == 2 and f"{extra[0]} cannot change them" in output, output


def test_an_unknown_executor_leaves_no_folder(tmp_path, config_file) -> None:
    code, output = _cli("run", config_file, "--executor", "bogus", "--runs-root", tmp_path / "runs")
    assert code == 2 and "unknown executor 'bogus'; known: local, ray" in output
    assert not (tmp_path / "runs").exists()


def test_label_column_with_images_is_refused_not_ignored(tmp_path, tiny_data, config_file) -> None:
    for args in (("init", tiny_data / "private", "--public", tiny_data / "public", "--label-column", "y",
                  "--out", tmp_path / "c.yaml"),
                 ("run", config_file, "--label-column", "y", "--runs-root", tmp_path / "runs")):
        code, output = _cli(*args)
        assert code == 2 and "--label-column names the label field of a CSV table or JSONL texts" in output
    assert not (tmp_path / "c.yaml").exists() and not (tmp_path / "runs").exists()


def test_a_bad_run_name_exits_alike_from_every_command(tmp_path, config_file) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(config_file.read_text().replace("name: usage", "name: a/b"))
    for args in (("run", bad, "--runs-root", tmp_path / "runs"), ("budget", "plan", "--config", bad)):
        code, output = _cli(*args)
        assert code == 1 and "key 'name' has bad value 'a/b': a run name is the name of its folder" in output
    code, output = _cli("run", config_file, "--name", "a/b", "--runs-root", tmp_path / "runs")
    assert code == 2 and output.startswith("error: --name: key 'name'")


def test_settings_apply_on_top_of_a_config_file(tmp_path, config_file, monkeypatch) -> None:
    """--epsilon, --name and --set change a config file's run; its config.yaml records the result."""
    seen = {}

    def stop_at_once(config, folder, **_):
        seen["config"] = yaml.safe_load(folder.config_path.read_text())
        raise KeyboardInterrupt  # before any charge: the CLI removes the new folder

    monkeypatch.setattr(pcevolve.pipeline, "run_pipeline", stop_at_once)
    code, output = _cli("run", config_file, "--epsilon", "1", "--name", "at-one", "--set", "search.generations=3",
                        "--runs-root", tmp_path / "runs")
    assert code == 130 and "at-one was removed" in output
    config = seen["config"]
    assert (config["name"], config["privacy"]["epsilon"], config["search"]["generations"]) == ("at-one", 1.0, 3)
    assert not (tmp_path / "runs" / "at-one").exists()


def test_any_failure_before_the_first_charge_removes_the_new_folder(tmp_path, config_file, monkeypatch) -> None:
    def fail(config, folder, **_):
        raise ValueError("a bug before any charge")

    monkeypatch.setattr(pcevolve.pipeline, "run_pipeline", fail)
    result = runner.invoke(app, ["run", str(config_file), "--runs-root", str(tmp_path / "runs")])
    assert isinstance(result.exception, ValueError)  # a bug keeps its traceback...
    assert not (tmp_path / "runs" / "usage").exists()  # ...but not the folder that would block the name


def test_resume_refuses_a_folder_pcevolve_did_not_start(tmp_path, config_file) -> None:
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "config.yaml").write_text(config_file.read_text())
    (stub / "manifest.json").write_text("{}")
    code, output = _cli("run", "--resume", stub)
    assert code == 1 and "was not started by `pcevolve run`" in output and "manifest.json lacks" in output
    (stub / "manifest.json").write_text(json.dumps({"pcevolve_version": "0", "config_hash": "0" * 64}))
    code, output = _cli("run", "--resume", stub)
    assert code == 1 and "is not the configuration" in output
    assert sorted(p.name for p in stub.iterdir()) == ["config.yaml", "manifest.json"]  # nothing added


def test_every_wrong_turn_of_the_command_line_exits_2(tmp_path, tiny_data, config_file, monkeypatch) -> None:
    """Exit code 2 means "fix the command line" everywhere: a pool not given or of the wrong kind, an init on a
    .tsv, a run name already taken (before the data is read), a --set the sweep would ignore; a bad --set names
    --set alone."""
    runs = tmp_path / "runs"
    tsv = tmp_path / "p.tsv"
    tsv.write_text("a\tb\n1\t2\n")
    pool_csv = tmp_path / "pool.csv"
    pool_csv.write_text("x,y\n1,2\n")
    cases = [("run", tiny_data / "private", "--classes", "0,1,2", "--runs-root", runs),
             ("run", tiny_data / "private", "--public", pool_csv, "--classes", "0,1,2", "--runs-root", runs),
             ("init", tsv, "--out", tmp_path / "c.yaml"),
             ("sweep", config_file, "--epsilons", "1", "2", "--set", "privacy.epsilon=3", "--runs-root", runs)]
    for args in cases:
        code, output = _cli(*args)
        assert code == 2, (args, output)
    assert not runs.exists() and not (tmp_path / "c.yaml").exists()
    code, output = _cli("run", config_file, "--set", "search.nope=1", "--name", "other", "--runs-root", runs)
    assert code == 2 and output.startswith("error: --set: unknown key 'search.nope'")
    (runs / "taken").mkdir(parents=True)
    read: list[str] = []
    monkeypatch.setattr("pcevolve.cli.run_commands.source_config", lambda *a, **k: read.append("read"))
    code, output = _cli("run", tiny_data / "private", "--public", tiny_data / "public", "--classes", "0,1,2",
                        "--name", "taken", "--runs-root", runs)
    assert code == 2 and "already exists" in output and "--name" in output and not read


def test_quiet_prints_warnings_only(capsys) -> None:
    from rich.console import Console

    from pcevolve.cli.run_commands import step_lines

    console = Console(file=None, force_terminal=False, width=200)
    with console.capture() as captured:
        say = step_lines(console, quiet=True)
        say("release: class statistics")
        say("warning: augment.flip is on")
    assert "release" not in captured.get() and "warning: augment.flip" in captured.get()


@pytest.mark.parametrize("command", [["run"], ["init"], ["data", "check"], ["data", "prepare"]])
def test_help_names_every_kind_of_file_and_no_internal_module(command) -> None:
    result = runner.invoke(app, [*command, "--help"], terminal_width=120)
    text = " ".join(result.output.split())
    import re

    assert result.exit_code == 0 and "pcevolve.data" not in text
    assert not re.search(r"\w \.(\s|$)", text)  # no stray space before a full stop ("per class .")
    if command[0] in ("run", "init"):
        assert "JSONL" in text and "[8]" not in text
