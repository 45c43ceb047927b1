"""`pcevolve evaluate` as a command: the headline table at the end, one-line errors with exit code 1."""

import typer
from typer.testing import CliRunner

from pcevolve.cli import evaluate_commands

app = typer.Typer(pretty_exceptions_enable=False)
app.command("evaluate")(evaluate_commands.evaluate)
app.command("noop")(lambda: None)  # two commands, so `evaluate` is addressed by name as under pcevolve


def _invoke(*args):
    return CliRunner().invoke(app, ["evaluate", *map(str, args)])


def test_evaluate_writes_the_report_and_prints_the_headline(fake_run, tmp_path):
    run = fake_run(tmp_path)
    data = tmp_path / "data"
    result = _invoke(run, "--test", data / "test", "--full", data / "full", "--epochs", "1", "--quiet")
    assert result.exit_code == 0, result.output
    for text in ("synthetic (ours)", "few-shot real", "full real", "against the original", "+17.8%", "51.2%",
                 "worst class", "report.html"):
        assert text in result.output, text
    assert (run / "report" / "report.html").exists() and (run / "report" / "evaluation.json").exists()


def test_a_missing_run_folder_is_one_line_and_exit_code_1(tmp_path):
    result = _invoke(tmp_path / "nope", "--test", tmp_path)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and str(tmp_path / "nope") in lines[0] and lines[0].startswith("error:")


def test_a_folder_that_is_not_a_run_names_what_is_missing(tmp_path):
    (tmp_path / "run").mkdir()
    result = _invoke(tmp_path / "run", "--test", tmp_path)
    assert result.exit_code == 1
    assert "not a finished pcevolve run" in result.output and "ledger.json" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_bad_test_folder_is_one_line_naming_it(tiny_run, tmp_path):
    missing = _invoke(tiny_run, "--test", tmp_path / "no-test")
    assert missing.exit_code == 1 and str(tmp_path / "no-test") in missing.output
    wrong = tmp_path / "wrong"
    (wrong / "some_other_class").mkdir(parents=True)
    result = _invoke(tiny_run, "--test", wrong)
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1
    assert str(wrong) in result.output and "test folder" in result.output
