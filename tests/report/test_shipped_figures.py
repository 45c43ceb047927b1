"""What an image evaluation leaves outside ``secure/``: figures computed on the private images rounded, no member or
copy count, no private-to-private distance, no absolute path — judged by the acceptance rule's own checker
(``bench/shipped_files.py``, over :func:`pcevolve.evaluation.shipped.shipped_violations`), which is tested here too
on files with a planted leak.

Why rounding: an attack's success, AUC or TPR is a ratio over the member count, so an exact one gives the per-class
private count back (``Fraction(x).limit_denominator()``); two decimals do not.
"""

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

from pcevolve.evaluation.attacks import roc_curve
from pcevolve.evaluation.shipped import (
    PRIVATE_FIGURE_WORDS,
    decimals,
    looks_like_absolute_path,
    shared_distance,
    shared_rate,
    shipped_violations,
    shown_distance,
)
from pcevolve.report import write_report
from pcevolve.report.figures import ROC_GRID, shared_roc

BENCH_SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "shipped_files.py"
#: The acceptance rule's key words and those of the other figures computed on the private images: the report must
#: pass this stricter check too.
STRICTER = PRIVATE_FIGURE_WORDS + ("fewshot", "private", "real")


def _bench_cli():
    """``bench/shipped_files.py`` as a module (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("shipped_files", BENCH_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _read(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------------- evaluated fake runs


def test_the_shared_files_of_an_evaluated_run_pass_the_acceptance_rule(clean):
    _, report = clean
    run = report.parent
    assert [str(v) for v in shipped_violations(report)] == []
    assert [str(v) for v in shipped_violations(report, words=STRICTER)] == []
    # The whole run folder too (ledger, manifest, records, encoder metadata); secure/ is skipped, and must be: it
    # holds the exact figures.
    assert [str(v) for v in shipped_violations(run)] == []
    assert shipped_violations(run / "secure", words=STRICTER)  # checked directly, the exact file would fail
    assert _bench_cli().main([str(run)]) == 0


def test_a_leaky_run_passes_too_and_its_counts_stay_in_secure(leaky, leaky_run, tmp_path):
    report = write_report(leaky, folder=tmp_path / "report")
    assert [str(v) for v in shipped_violations(report, words=STRICTER)] == []
    shared, secure = _read(report / "evaluation.json"), _read(leaky_run / "secure" / "evaluation.json")
    # Every private image was copied: the copy counts are the private set's size, so only "whether" ships.
    copies = shared["privacy"]["copies"]
    assert copies["any_exact_copy"] is True and copies["any_near_copy"] is True
    assert not {"exact_copies", "near_copies", "private_to_private"} & set(copies)
    assert all(row["any_near_copy"] is True and "near_copies" not in row for row in shared["per_class"])
    assert secure["copies"]["exact_copies"] == 30 and secure["copies"]["near_copies"] == 30
    assert sorted(row["near_copies"] for row in secure["per_class"]) == [10, 10, 10]
    assert set(secure["copies"]["private_to_private"]) == {"min", "p1", "p5", "median", "mean", "max"}
    markdown = (report / "report.md").read_text(encoding="utf-8")
    assert "private → nearest other private" not in markdown and "were left out of the grid" in markdown


def test_shared_figures_are_the_secure_ones_rounded(clean):
    evaluation, report = clean
    shared, secure = _read(report / "evaluation.json"), _read(report.parent / "secure" / "evaluation.json")
    for space, by_name in secure["attacks"].items():
        for name, exact in by_name.items():
            ours = shared["privacy"]["attacks"][space][name]
            pairs = [(ours["overall"], exact["overall"])] + list(zip(ours["per_class"], exact["per_class"]))
            for got, want in pairs:
                for key in ("auc", "success"):
                    assert got[key] == {k: shared_rate(v) for k, v in want[key].items()}, (space, name, key)
                for level, estimate in want["tpr_at_fpr"].items():
                    assert got["tpr_at_fpr"][level] == {k: shared_rate(v) for k, v in estimate.items()}
    fewshot = secure["headline"]["lines"]["fewshot"]
    assert shared["headline"]["lines"]["fewshot"]["cnn_accuracy"] == shared_rate(fewshot["cnn_accuracy"])
    assert shared["headline"]["lines"]["synthetic"] == secure["headline"]["lines"]["synthetic"]  # not private
    for space, sets in secure["distribution"].items():
        for metric, exact in sets["fewshot"].items():
            assert shared["distribution"][space]["fewshot"][metric]["overall"] == shared_distance(exact["overall"])
        assert shared["distribution"][space]["synthetic"] == {  # synthetic vs test: as it is
            metric: value.to_json() for metric, value in evaluation.distribution[space]["synthetic"].items()}
    exact_copies = secure["copies"]
    assert shared["privacy"]["copies"]["candidate_to_private"] == {
        key: shared_distance(value) for key, value in exact_copies["candidate_to_private"].items()}
    assert shared["privacy"]["copies"]["closer_than_private_p1"] == shared_rate(exact_copies["closer_than_private_p1"])
    private_lines = [u for u in shared["utility"] if u["reference_only"]]
    assert private_lines and all(u["confusion"] is None for u in private_lines)  # its counts give the accuracy back


def test_the_report_names_folders_by_name_and_keeps_full_paths_in_secure(clean):
    evaluation, report = clean
    root = str(evaluation.inputs.folder.parent)  # the temporary folder all the data and the run sit in
    for name in ("evaluation.json", "report.md", "report.html"):
        assert root not in (report / name).read_text(encoding="utf-8"), name
    shared, secure = _read(report / "evaluation.json"), _read(report.parent / "secure" / "evaluation.json")
    assert shared["run"]["folder"] == "run" and shared["data"]["test"]["path"] == "test"
    assert secure["paths"]["run"] == str(evaluation.inputs.folder)
    assert secure["paths"]["test"] == str(evaluation.inputs.folder.parent / "data" / "test")


def test_the_report_shows_private_figures_no_finer_than_they_ship(clean):
    _, report = clean
    markdown = (report / "report.md").read_text(encoding="utf-8")
    # Attack rows: AUC with two decimals, success and TPR as whole percents.
    attack_rows = re.findall(r"^\| (?:pixel|independent) \| (?:dcr|domias) \|.*$", markdown, flags=re.MULTILINE)
    assert len(attack_rows) == 4
    for row in attack_rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert re.fullmatch(r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]", cells[2]), row
        assert all(re.fullmatch(r"\d+% \[\d+, \d+\]", cells[i]) for i in (3, 4, 6)), row
    # The few-shot lines (trained on the private images) as whole percents; ours with a decimal.
    fewshot = next(line for line in markdown.splitlines() if line.startswith("| few-shot real (private"))
    assert re.search(r"\| \d+% \|", fewshot) and not re.search(r"\d+\.\d%", fewshot)


def test_the_roc_plot_draws_fixed_rates_with_rounded_tprs():
    # 30 members: the curve's own steps are 1/30 wide; drawn at the fixed grid with two-decimal TPRs they do not show.
    rng = np.random.default_rng(0)
    fpr, tpr, _ = roc_curve(rng.normal(0.5, 1.0, 30), rng.normal(0.0, 1.0, 30))
    drawn = shared_roc(fpr, tpr)
    assert len(drawn) == len(ROC_GRID) and all(decimals(v) <= 2 for v in drawn)
    assert drawn[0] == shared_rate(tpr[fpr == 0].max()) and drawn[-1] == 1.0 and np.all(np.diff(drawn) >= 0)


# ------------------------------------------------------------------------------------------------ the checker


def _write(path, document):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")


def test_the_checker_catches_a_planted_member_rate_and_an_absolute_path(tmp_path, capsys):
    run = tmp_path / "run"
    _write(run / "report" / "evaluation.json", {
        "privacy": {"attacks": {"pixel": {"dcr": {"per_class": [{"success": {"value": 7 / 30}}]}}}},  # planted
        "data": {"private": {"path": "/data/cardiology-2024/private"}},  # planted
        "utility": [{"line": "synthetic", "accuracy": 0.8333333333333334}],  # ours, on test data: may ship
        "hints": [{"observed": "see secure/evaluation.json or https://example.org/a/b"}],  # relative, URL: fine
    })
    _write(run / "records.jsonl", '{"terms": {"attack": 0.5}}\n\n{"member_share": 0.12345}\n')
    _write(run / "secure" / "evaluation.json", {"attacks": {"auc": 7 / 30}, "paths": {"run": "/data/run"}})
    found = {(v.file, v.key): v for v in shipped_violations(run)}
    assert set(found) == {("records.jsonl", "3:member_share"),
                          ("report/evaluation.json", "privacy.attacks.pixel.dcr.per_class[0].success.value"),
                          ("report/evaluation.json", "data.private.path")}
    assert "decimals" in found["records.jsonl", "3:member_share"].why
    assert found["report/evaluation.json", "data.private.path"].why == "absolute path"
    # The command line prints each as `file: key.path = value (why)` and exits 1.
    assert _bench_cli().main([str(run)]) == 1
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 3
    assert ("report/evaluation.json: privacy.attacks.pixel.dcr.per_class[0].success.value = 0.23333333333333334 "
            "(17 decimals under a private-figure key; at most 3 may ship)") in printed
    # Rounded and named, the same files pass.
    _write(run / "report" / "evaluation.json", {
        "privacy": {"attacks": {"pixel": {"dcr": {"per_class": [{"success": {"value": shared_rate(7 / 30)}}]}}}},
        "data": {"private": {"path": "private"}}})
    _write(run / "records.jsonl", '{"terms": {"attack": 0.5}}\n{"member_share": 0.123}\n')
    assert shipped_violations(run) == [] and _bench_cli().main([str(run)]) == 0
    assert capsys.readouterr().out == ""


def test_a_file_the_checker_cannot_read_fails_it(tmp_path):
    _write(tmp_path / "report" / "evaluation.json", '{"attack": ')
    (violation,) = shipped_violations(tmp_path)
    assert violation.file == "report/evaluation.json" and violation.why.startswith("not valid JSON")
    assert _bench_cli().main([str(tmp_path / "nope")]) == 2


@pytest.mark.parametrize(("text", "absolute"), [
    ("/data/cardiology-2024/private", True), ("/x", True), ("C:\\data\\private", True), ("D:/data", True),
    ("\\\\server\\share\\private", True), ("private folder /data/x does not exist", True),
    ("private", False), ("secure/evaluation.json", False), ("https://example.org/a/b", False), ("1/30", False),
    ("/", False), ("a / b", False), ("TPR ≤ e^ε·FPR + δ", False)])
def test_what_counts_as_an_absolute_path(text, absolute):
    assert looks_like_absolute_path(text) is absolute


@pytest.mark.parametrize(("value", "distance"), [
    (563.21, 563.0), (41.237, 41.2), (0.01234, 0.012), (1234.5, 1230.0), (0.5349, 0.535), (-0.00456, -0.005),
    (0.0, 0.0), (float("nan"), None), (None, None)])
def test_distances_ship_to_three_significant_figures_and_at_most_three_decimals(value, distance):
    assert shared_distance(value) == distance
    if distance is not None:
        assert decimals(distance) <= 3


def test_a_distance_that_ships_as_zero_reads_as_below_the_last_decimal():
    # The demo's private images sit at an MMD² of about 1e-4 from the test set: 0 (or -0) would say more than is known.
    assert shown_distance(shared_distance(-0.00004)) == shown_distance(shared_distance(0.0004)) == "≈ 0 (below 0.001)"
    assert shown_distance(0.046) == "0.046" and shown_distance(None) == "—"


def test_rates_ship_with_two_decimals():
    assert shared_rate(7 / 30) == 0.23 and shared_rate(1.0) == 1.0 and shared_rate(None) is None
    assert shared_rate(float("inf")) is None
    assert decimals(shared_rate(2 / 3)) == 2 and decimals(1e-05) == 5 and decimals(3.0) == 1
