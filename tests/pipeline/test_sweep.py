"""``pcevolve sweep``: several runs on the same private data under one ledger, judged, and the curve.

On the small table of conftest.py (a run and its judge take a few seconds). What is checked: the sweep's ledger
holds every member's events and its total is their composition, recomputed here with dp_accounting's PLD directly;
the plan made before the first run predicted that total; a sweep whose plan passes --max-epsilon is refused before
anything is written; a member charge the sweep cannot afford is refused by both ledgers before any noise; a sweep
killed inside a member resumes without paying twice; an export of a member records the sweep's total.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from typer.testing import CliRunner

from pcevolve.cli.main import app
from pcevolve.config import dump_config, load_config
from pcevolve.privacy import BudgetExceeded, BudgetLedger, GaussianRelease, LedgerError, SecureNoise
from pcevolve.sweep import create_sweep, open_sweep, run_sweep

EPSILONS = ("1", "2", "4")


def _sweep(tmp_path: Path, config_path: Path, *arguments: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["sweep", str(config_path), "--runs-root", str(tmp_path / "runs"), "-q",
                                      *arguments])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def swept(table_config, tmp_path_factory):
    """A finished sweep of the table at ε 1, 2, 4 (``--epsilons 1 2 4``, as a user types it)."""
    root = tmp_path_factory.mktemp("sweep")
    config_path = dump_config(table_config("tab"), root / "tab.yaml")
    code, output = _sweep(root, config_path, "--epsilons", *EPSILONS)
    assert code == 0, output
    return root / "runs" / "tab-sweep", output


def _entries(ledger_path: Path) -> list[dict]:
    return json.loads(ledger_path.read_text())["entries"]


def _independent_total(events: list[dict], *, delta: float, interval: float) -> float:
    """Every event is a Gaussian release here: compose their PLDs with dp_accounting, not through pcevolve."""
    assert {event["mechanism"] for event in events} == {"gaussian_release"}
    composed = None
    for event in events:
        pld = pld_lib.from_gaussian_mechanism(standard_deviation=event["event"]["noise_multiplier"], sensitivity=1.0,
                                              value_discretization_interval=interval)
        composed = pld if composed is None else composed.compose(pld)
    return composed.get_epsilon_for_delta(delta)


def test_the_sweeps_ledger_is_the_composition_of_every_run(swept) -> None:
    folder, output = swept
    sweep_ledger = json.loads((folder / "ledger.json").read_text())
    members = [folder / f"eps-{e}" for e in EPSILONS]
    member_events = [entry["event"] for run in members for entry in _entries(run / "ledger.json")]
    assert [entry["event"] for entry in sweep_ledger["entries"]] == member_events  # each run's charges, in order
    settings = sweep_ledger["settings"]
    total = sweep_ledger["summary"]["total"]["epsilon"]
    independent = _independent_total(sweep_ledger["entries"], delta=settings["delta"],
                                     interval=settings["pld_discretization"])
    assert total == pytest.approx(independent, rel=1e-9)
    alone = [json.loads((run / "ledger.json").read_text())["summary"]["total"]["epsilon"] for run in members]
    assert max(alone) < total < sum(alone)  # composed, neither the largest nor the sum
    for run, asked in zip(alone, EPSILONS):
        assert run <= float(asked)
    planned = json.loads((folder / "sweep.json").read_text())["planned"]["total_epsilon"]
    assert planned == pytest.approx(total, rel=1e-9)  # the plan made before the first run predicted it
    assert f"{total:.3f}" in output and "not its own" in output
    # Reopened with its key, the ledger replays every event and gives the same total.
    assert open_sweep(folder).ledger.spent() == pytest.approx(total, rel=1e-12)


def test_each_run_is_judged_and_the_curve_is_drawn(swept) -> None:
    folder, _ = swept
    results = json.loads((folder / "results.json").read_text())
    assert [point["name"] for point in results["points"]] == [f"eps-{e}" for e in EPSILONS]
    for point in results["points"]:
        assert point["metrics"] and all(0.0 <= value <= 1.0 for value in point["metrics"].values())
        assert 0.0 <= point["attack_success"] <= 1.0
        assert "real (private)" in point["references"]
        report = (folder / point["name"] / "report" / "report.html").read_text(encoding="utf-8")
        assert "This run is one of the sweep tab-sweep" in report  # the ε a chosen set carries, where users look
        shared = json.loads((folder / point["name"] / "report" / "evaluation.json").read_text())
        assert shared["ledger"]["sweep"] == {"name": "tab-sweep", "epsilon": results["total_epsilon"],
                                             "finished": True}
    assert results["finished"] and "not its own" in results["note"]
    assert (folder / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = (folder / "report" / "report.html").read_text(encoding="utf-8")
    for part in ("The sweep", "Privacy–utility curve", "Runs", "Ledger", "eps-4/report/report.html",
                 f"({results['total_epsilon']:.3f}, 1e-05)", "not its own"):
        assert part in report, part
    assert (folder / "report" / "curve.png").is_file() and (folder / "report" / "report.md").is_file()


def test_a_sweep_that_would_pass_its_cap_is_refused_before_anything_is_written(table_config, tmp_path) -> None:
    config_path = dump_config(table_config("capped"), tmp_path / "capped.yaml")
    code, output = _sweep(tmp_path, config_path, "--epsilons", "1", "2", "4", "8", "--max-epsilon", "5")
    assert code == 1
    assert "compose to ε" in output and "more than --max-epsilon 5" in output and "Nothing was run" in output
    assert not (tmp_path / "runs").exists()
    code, output = _sweep(tmp_path, config_path, "--epsilons", "1", "1.0")
    assert code == 2 and "repeated" in output
    # Each ε is allowed alone; together they pass the ceiling a single run obeys.
    code, output = _sweep(tmp_path, config_path, "--epsilons", "40", "50", "60")
    assert code == 1 and "compose to ε" in output and "beyond 100" in output and "Nothing was run" in output
    assert not (tmp_path / "runs").exists()
    code, output = _sweep(tmp_path, config_path, "--epsilons", "1", "--max-epsilon", "500")
    assert code == 2 and "--max-epsilon must be in (0, 100]" in output
    code, output = _sweep(tmp_path, config_path, "--epsilons", "0", "2")
    assert code == 2 and "privacy.epsilon" in output
    code, output = _sweep(tmp_path, config_path, "--epsilons", "1", "--test", str(tmp_path / "nope.csv"))
    assert code == 1 and "nope.csv does not exist" in output  # before the first run, not after the last
    assert not (tmp_path / "runs").exists()


def test_a_member_charge_the_sweep_cannot_afford_is_refused_by_both_ledgers(tmp_path) -> None:
    parent = BudgetLedger(1.0, 1e-5, {"eps-1": 1.0, "eps-2": 1.0}, path=tmp_path / "sweep.json")
    child = BudgetLedger(2.0, 1e-5, {"release": 2.0}, path=tmp_path / "run.json")
    child.bind(parent, "eps-2")
    cheap, dear = GaussianRelease(5.0), GaussianRelease(1.0)
    child.charge("release", cheap, noise=SecureNoise())
    assert len(parent.history) == len(child.history) == 1
    assert not child.can_afford("release", dear)  # the run alone could, the sweep cannot
    before = (tmp_path / "sweep.json").read_bytes(), (tmp_path / "run.json").read_bytes()
    with pytest.raises(BudgetExceeded):
        child.charge("release", dear, noise=SecureNoise())
    assert ((tmp_path / "sweep.json").read_bytes(), (tmp_path / "run.json").read_bytes()) == before
    other = BudgetLedger(2.0, 1e-6, {"release": 2.0})
    with pytest.raises(LedgerError, match="same δ"):
        other.bind(parent, "eps-1")


def test_a_sweep_killed_inside_a_run_resumes_without_paying_twice(table_config, tmp_path, monkeypatch) -> None:
    import pcevolve.pipeline.stages as run_module  # the stage list a run with a pool runs (pipeline/stage_lists.py)

    opened, _ = create_sweep(table_config("killed"), [1.0, 2.0], root=tmp_path)

    def killed(_context):
        raise KeyboardInterrupt

    stages = run_module.STAGES
    monkeypatch.setattr(run_module, "STAGES", tuple(dataclasses.replace(stage, run=killed)
                                                    if stage.name == "search" else stage for stage in stages))
    with pytest.raises(KeyboardInterrupt):
        run_sweep(opened, evaluate=False)  # the first run pays its release, then dies in the search
    assert len(open_sweep(opened.folder.path).ledger.history) == 2
    monkeypatch.setattr(run_module, "STAGES", stages)
    outcome = run_sweep(open_sweep(opened.folder.path), evaluate=False)
    members = [opened.folder.member(name) for name in opened.names]
    assert len(_entries(opened.folder.ledger_path)) == sum(len(_entries(run / "ledger.json")) for run in members) == 4
    assert outcome.total_epsilon == pytest.approx(open_sweep(opened.folder.path).ledger.spent())


def test_an_export_of_a_member_records_the_sweeps_total(swept, tmp_path) -> None:
    folder, _ = swept
    code = CliRunner().invoke(app, ["export", str(folder / "eps-2"), str(tmp_path / "out")]).exit_code
    assert code == 0
    total = open_sweep(folder).ledger.spent()
    readme = (tmp_path / "out" / "README.txt").read_text()
    assert f"({total:.4f}, 1e-05)-differential privacy" in readme and "sweep-ledger.json" in readme
    assert (tmp_path / "out" / "sweep-ledger.json").read_bytes() == (folder / "ledger.json").read_bytes()
    shown = CliRunner().invoke(app, ["ledger", "show", str(folder / "eps-2")])
    assert shown.exit_code == 0 and f"the sweep's ε = {total:.4f}" in " ".join(shown.output.split())
    # Taken out of its sweep folder, a member cannot say what it carries: it is refused, not exported as its own ε.
    moved = tmp_path / "moved"
    shutil.copytree(folder / "eps-2", moved / "eps-2")
    result = CliRunner().invoke(app, ["export", str(moved / "eps-2"), str(tmp_path / "out2")])
    assert result.exit_code == 1 and "keep the member inside its sweep folder" in result.output


def test_the_python_api_sweeps_and_loads_the_chosen_run(table_config, table_data, tmp_path) -> None:
    import pcevolve

    synth = pcevolve.Synthesizer(table_config("api"), runs_root=tmp_path, progress=False)
    outcome = synth.sweep([1, 4], test=table_data / "test.csv", max_epsilon=4.5)
    assert [point.name for point in outcome.points] == ["eps-1", "eps-4"]
    assert outcome.total_epsilon <= 4.5 and outcome.curve is not None
    chosen = pcevolve.Synthesizer.load(outcome.folder / "eps-4", progress=False)
    assert len(chosen.sample()) > 0


def test_later_runs_copy_the_public_stages_they_would_have_computed(swept, table_config, tmp_path) -> None:
    """The encoder (no share of ε) and the nearest-public decoder read only public data: the second and third runs
    copy them from the first, and a run of the same config alone computes the same files."""
    from pcevolve.pipeline import open_run, run_pipeline

    folder, _ = swept
    records = [json.loads(line) for line in (folder / "eps-2" / "records.jsonl").read_text().splitlines()]
    adopted = {record["kind"]: record.get("adopted_from") for record in records
               if record["kind"] in ("representation", "decoder")}
    assert adopted == {"representation": "eps-1", "decoder": "eps-1"}
    config, run, _ = open_run(table_config("eps-2", **{"privacy.epsilon": 2.0}), root=tmp_path)
    run_pipeline(config, run)
    for part in ("encoder", "decoder"):
        alone = {p.relative_to(run.path): p.read_bytes() for p in (run.path / part).rglob("*") if p.is_file()}
        copied = {p.relative_to(folder / "eps-2"): p.read_bytes() for p in (folder / "eps-2" / part).rglob("*")
                  if p.is_file()}
        assert alone == copied, part


def test_an_image_runs_point_reads_its_headline() -> None:
    """An image report's headline (the shape ``RunEvaluation.headline`` writes) gives the CNN and probe lines."""
    from pcevolve.sweep import curve_point

    line = {"cnn_accuracy": 0.84, "probe_accuracy": 0.81}
    evaluation = {"headline": {"epsilon": 3.9998, "lines": {"synthetic": line, "fewshot": {"cnn_accuracy": 0.83,
                                                                                            "probe_accuracy": 0.8},
                                                            "full": {"cnn_accuracy": 0.92, "probe_accuracy": None}},
                               "attack_success": {"attack": "dcr", "space": "pixel", "value": 0.52}}}
    point = curve_point("eps-4", 4.0, evaluation)
    assert (point.epsilon, point.spent) == (4.0, 3.9998)
    assert point.metrics == {"CNN accuracy": 0.84, "linear probe accuracy": 0.81}
    assert point.references["full real"] == {"CNN accuracy": 0.92, "linear probe accuracy": None}
    assert point.attack == "dcr (pixel space)" and point.attack_success == 0.52


def test_the_sweeps_files_carry_its_start_time_only(swept) -> None:
    """Like a run's files: the ledger's time would otherwise be the last release's, timing the private stages."""
    folder, _ = swept
    times = {path.name: path.stat().st_mtime for path in (folder, *(folder / name for name in (
        "config.yaml", "sweep.json", "ledger.json", "results.json", "curve.png", "report", "report/report.html")))}
    assert len(set(times.values())) == 1, times


def test_a_sweeps_run_cannot_be_continued_outside_its_sweep(swept) -> None:
    """`pcevolve run --resume` on a sweep's run would charge its own ledger only, and the sweep would undercount."""
    folder, _ = swept
    result = CliRunner().invoke(app, ["run", "--resume", str(folder / "eps-1"), "-q"])
    assert result.exit_code == 1 and "pcevolve sweep --resume" in " ".join(result.output.split())


def test_a_sweep_from_the_data_alone_chooses_its_settings_once(table_data, tmp_path) -> None:
    """`pcevolve sweep PRIVATE --public POOL`, as `pcevolve run PRIVATE` takes it: the runs differ in ε alone."""
    result = CliRunner().invoke(app, [
        "sweep", str(table_data / "private.csv"), "--public", str(table_data / "public.csv"), "--label-column",
        "label", "--classes", "fraud,ok", "--epsilons", "1", "2", "--no-evaluate", "--set", "search.generations=4",
        "--set", "search.population=8", "--set", "search.elite=2", "--runs-root", str(tmp_path), "-q"])
    assert result.exit_code == 0, result.output
    (folder,) = tmp_path.glob("*-sweep")  # named as `pcevolve run` names a run chosen from the data
    runs = [folder / f"eps-{e}" / "config.yaml" for e in (1, 2)]
    one, two = (load_config(path) for path in runs)
    assert (one.privacy.epsilon, two.privacy.epsilon) == (1.0, 2.0)
    assert one.model_copy(update={"name": "x", "privacy": two.privacy}) == two.model_copy(update={"name": "x"})
    usage = CliRunner().invoke(app, ["sweep", "--resume", str(folder), "--public", "x.csv"])
    assert usage.exit_code == 2


def test_a_label_column_for_an_image_config_is_a_usage_error_as_for_run(tiny_config, tmp_path) -> None:
    config_path = dump_config(tiny_config("img"), tmp_path / "img.yaml")
    code, output = _sweep(tmp_path, config_path, "--epsilons", "1", "--label-column", "label")
    assert code == 2 and "--label-column" in output and not (tmp_path / "runs").exists()


def test_a_member_killed_while_its_folder_is_made_leaves_no_folder_to_resume_outside_its_sweep(table_config,
                                                                                                tmp_path) -> None:
    """The member's folder appeared before its sweep_member.json: killed in between, `pcevolve run --resume` took the
    member for a run of its own and `export` stated the run's ε. Now the folder appears with the file or not at all."""
    import subprocess
    import sys
    import textwrap

    config_path = dump_config(table_config("tab"), tmp_path / "tab.yaml")
    child = textwrap.dedent("""
        import os, sys
        import pcevolve.sweep.run as sweep_run
        from pcevolve.config import load_config
        from pcevolve.sweep import create_sweep, run_sweep

        sweep_run.write_membership = lambda *args, **kwargs: os._exit(9)  # killed while the member is being made
        opened, _ = create_sweep(load_config(sys.argv[1]), [1.0, 2.0], root=sys.argv[2])
        run_sweep(opened, evaluate=False)
    """)
    killed = subprocess.run([sys.executable, "-c", child, str(config_path), str(tmp_path / "runs")])
    assert killed.returncode == 9
    sweep = tmp_path / "runs" / "tab-sweep"
    assert (sweep / "ledger.json").is_file() and not (sweep / "eps-1").exists()
    resumed = CliRunner().invoke(app, ["sweep", "--resume", str(sweep), "--no-evaluate", "-q"])
    assert resumed.exit_code == 0, resumed.output
    assert not list(sweep.glob(".eps-1.*"))  # the killed creation's temporary folder went with the next creation
    assert json.loads((sweep / "eps-1" / "sweep_member.json").read_text())["sweep"] == "tab"
    refused = CliRunner().invoke(app, ["run", "--resume", str(sweep / "eps-1"), "-q"])
    assert refused.exit_code == 1 and "pcevolve sweep --resume" in " ".join(refused.output.split())
