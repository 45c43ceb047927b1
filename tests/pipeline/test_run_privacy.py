"""What a run folder gives away to someone with every file but ``secure/``; secure noise by default; no spending
on a config or a resume that cannot be trusted."""

import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from pcevolve.cli.main import app
from pcevolve.config import dump_config
from pcevolve.pipeline import RunError, open_run, run_pipeline
from pcevolve.pipeline.plan import plan_budget
from pcevolve.privacy import BudgetLedger

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import release_attack  # noqa: E402  (the attack bench/release_attack.py runs on real run folders)

REPRODUCIBLE = {"privacy.reproducible_noise": True}


def _run(config, root):
    config, folder, _ = open_run(config, root=root)
    run_pipeline(config, folder)
    return folder.path


@pytest.fixture(scope="module")
def secure_run(tiny_config, tmp_path_factory):
    return _run(tiny_config(name="secure"), tmp_path_factory.mktemp("secure"))


@pytest.fixture(scope="module")
def reproducible_run(tiny_config, tmp_path_factory):
    return _run(tiny_config(name="reproducible", **REPRODUCIBLE), tmp_path_factory.mktemp("reproducible"))


def _counts(folder):
    with np.load(folder / "release.npz", allow_pickle=False) as data:
        return data["counts"]


def test_default_run_uses_secure_noise_and_the_attack_recovers_nothing(secure_run):
    ledger = json.loads((secure_run / "ledger.json").read_text())
    assert ledger["dp"] is True and ledger["settings"]["noise"] == "secure"
    found = release_attack.attack(secure_run)
    assert not found["recovered"], found["hypotheses"]
    assert found["stream_copies"] == []


def test_two_runs_of_the_same_config_draw_different_release_noise(secure_run, tiny_config, tmp_path):
    again = _run(tiny_config(name="secure"), tmp_path)
    assert not np.array_equal(_counts(secure_run), _counts(again))


def test_reproducible_noise_is_regenerable_and_labelled_not_dp_but_shares_no_stream_with_public_arrays(
        reproducible_run):
    found = {h.name: h for h in release_attack.hypotheses(reproducible_run)}
    # Anyone with config.yaml regenerates the noise: exactly why this mode is labelled not DP ...
    assert found["seed, reproducible scheme"].recovered
    assert np.allclose(found["seed, reproducible scheme"].counts, 20)  # 20 private images per class
    # ... while the published frequencies, and every other saved array, are no copy of a noise stream.
    assert not found["saved frequencies"].recovered and not found["seed, old scheme"].recovered
    assert release_attack.stream_copies(reproducible_run) == []
    ledger = json.loads((reproducible_run / "ledger.json").read_text())
    assert ledger["dp"] is False and "NOT DP" in ledger["notice"]
    assert [r for r in _records(reproducible_run) if r["kind"] == "summary"][0]["dp"] is False


def test_the_stream_check_catches_a_public_array_drawn_from_the_noise_stream():
    stream = release_attack.stream_normals(3, "release", 100_000)
    planted = 0.25 + stream[500:756].reshape(32, 8) / 1.7  # frequencies W ~ N(0, 1/ℓ²) after 500 other draws
    assert release_attack.is_affine_copy(planted, stream)
    assert not release_attack.is_affine_copy(np.random.default_rng(0).standard_normal(256), stream)
    noisy = np.array([20.0, 20.0, 20.0]) + 4.0 * stream[:3]
    assert release_attack.recover_counts(noisy, 4.0, stream).recovered


def _records(folder):
    return [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]


def test_shared_files_hold_no_private_timing(secure_run):
    records = _records(secure_run)
    assert all("time" not in r for r in records)
    summary = [r for r in records if r["kind"] == "summary"][0]
    assert set(summary["seconds"]) == {"decoder", "public_features", "labels", "verdict", "search", "delivery"}
    for marker in ("representation", "decoder"):
        assert "seconds" not in json.loads((secure_run / "stages" / f"{marker}.json").read_text()).get("dp", {})
    assert "seconds" not in json.loads((secure_run / "stages" / "representation.json").read_text())
    timings = json.loads((secure_run / "secure" / "timings.json").read_text())
    assert {"representation.seconds", "release.seconds", "total.seconds", "representation.dp_training"} <= set(timings)
    entries = json.loads((secure_run / "ledger.json").read_text())["entries"]
    assert all(len(entry["time"]) == 10 for entry in entries)  # a date: charge times would time private epochs
    # Modification times of shared files are the run's start: they cannot time the private stages either.
    # The folder itself too: removing the run's lock file at the end must not leave the end time on it.
    shared = [secure_run, *(p for p in secure_run.rglob("*") if "secure" not in p.relative_to(secure_run).parts)]
    times = {p.stat().st_mtime for p in shared}
    assert len(times) == 1


def test_plan_sigma_equals_the_sigma_the_run_records(secure_run, tiny_config):
    events = [e["event"] for e in json.loads((secure_run / "ledger.json").read_text())["entries"]]
    run_dpsgd = {e["noise_multiplier"] for e in events if e["kind"] == "subsampled_gaussian_steps"}
    run_release = [e["noise_multiplier"] for e in events if e["kind"] == "gaussian_release"]
    plan = plan_budget(tiny_config(name="secure"), num_samples=60)
    assert run_dpsgd == {plan.representation.noise_multiplier}
    assert run_release == list(plan.release.event_noise_multipliers)
    assert BudgetLedger.load(secure_run / "ledger.json").spent() == pytest.approx(plan.total.epsilon, rel=1e-12)
    config = secure_run / "config.yaml"
    shown = CliRunner().invoke(app, ["budget", "plan", "--config", str(config), "--n", "60"])
    assert shown.exit_code == 0 and f"{plan.release.noise_multiplier:.4f}" in shown.output


def test_resume_without_a_trustworthy_ledger_refuses(tiny_config, tmp_path):
    folder = _run(tiny_config(name="lost", **REPRODUCIBLE), tmp_path)
    ledger, key = folder / "ledger.json", folder / "secure" / "ledger.key"
    saved = ledger.read_bytes()
    ledger.unlink()
    with pytest.raises(RunError, match="missing"):
        open_run(None, resume=folder)
    ledger.write_text("{not json")
    with pytest.raises(RunError, match="not a readable JSON ledger"):
        open_run(None, resume=folder)
    # A consistent ledger that "forgot" its charges (hash fixed, as a careful editor would) fails its signature.
    fresh = BudgetLedger(8.0, 1e-5, {"representation": 3.0, "release": 5.0, "decoder": 0.0, "delivery": 0.0},
                         path=tmp_path / "empty.json", reproducible_noise=True)
    ledger.write_bytes((tmp_path / "empty.json").read_bytes())
    assert fresh.spent() == 0
    with pytest.raises(RunError, match="signature"):
        open_run(None, resume=folder)
    ledger.write_bytes(saved)
    key.unlink()
    with pytest.raises(RunError, match="ledger.key"):
        open_run(None, resume=folder)


@pytest.mark.parametrize("section, key, value", [("search", "mutation", "gausian"),
                                                 ("decoder", "name", "nearest"),
                                                 ("representation", "backbone", "resnet50")])
def test_unknown_registry_keys_are_refused_before_any_ledger_exists(tiny_config, tmp_path, section, key, value):
    path = tmp_path / "run.yaml"
    dump_config(tiny_config(name="typo"), path)
    mapping = yaml.safe_load(path.read_text())
    mapping[section][key] = value
    path.write_text(yaml.safe_dump(mapping))
    result = CliRunner().invoke(app, ["run", str(path), "--runs-root", str(tmp_path / "runs"), "--quiet"])
    assert result.exit_code == 1 and f"{section}.{key}" in result.output and value in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "runs").exists()  # no folder, so no ledger and no ε spent


def test_a_stage_that_would_be_refused_later_is_refused_at_load(tiny_config, tmp_path):
    path = tmp_path / "run.yaml"
    dump_config(tiny_config(name="dp-decoder"), path)
    mapping = yaml.safe_load(path.read_text())
    mapping["decoder"]["training"] = "public-then-dp"  # the decoder stage has no share by default
    path.write_text(yaml.safe_dump(mapping))
    result = CliRunner().invoke(app, ["run", str(path), "--runs-root", str(tmp_path / "runs"), "--quiet"])
    assert result.exit_code == 1 and "privacy.split.decoder" in result.output
    assert not (tmp_path / "runs").exists()


def test_cli_summary_says_not_dp_for_reproducible_noise(tiny_config, tmp_path):
    path = tmp_path / "run.yaml"
    dump_config(tiny_config(name="labelled", **REPRODUCIBLE), path)
    result = CliRunner().invoke(app, ["run", str(path), "--runs-root", str(tmp_path / "runs"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "NOT DIFFERENTIALLY PRIVATE" in result.output and "NOT DP" in result.output
    assert "timings.json" in result.output.replace("\n", "")
    assert "pcevolve export" in result.output.replace("\n", " ")  # how to share the set without the run's internals


def test_a_run_killed_before_its_ledger_existed_resumes_and_a_lone_key_refuses(tiny_config, tmp_path):
    config, folder, _ = open_run(tiny_config(name="early", **REPRODUCIBLE), root=tmp_path)
    assert not (folder.path / "ledger.json").exists()  # made after the data is read, before the first charge
    _, resumed, _ = open_run(None, resume=folder.path)  # nothing was ever charged: fine to continue
    (folder.path / "secure").mkdir(exist_ok=True)
    (folder.path / "secure" / "ledger.key").write_text("00" * 32)
    with pytest.raises(RunError, match="missing"):
        open_run(None, resume=folder.path)  # a key without its ledger: the ledger was lost


def test_export_copies_only_what_may_leave(secure_run, tmp_path):
    out = tmp_path / "shared"
    result = CliRunner().invoke(app, ["export", str(secure_run), str(out)])
    assert result.exit_code == 0, result.output
    assert "(ε, δ) = (" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["README.txt", "config.yaml", "ledger.json", "manifest.json",
                                                     "synthetic"]
    # The delivered set is copied whole, byte for byte; nothing of secure/ or of the run's internals comes along.
    delivered = sorted(p.relative_to(secure_run) for p in (secure_run / "synthetic").rglob("*"))
    assert sorted(p.relative_to(out) for p in (out / "synthetic").rglob("*")) == delivered
    assert all((out / p).read_bytes() == (secure_run / p).read_bytes() for p in delivered if (secure_run / p).is_file())
    # The config names its data without the paths they have on the secure machine.
    shared_config = yaml.safe_load((out / "config.yaml").read_text())
    assert shared_config["data"]["private"] == "private"
    assert str(tmp_path.parent) not in (out / "config.yaml").read_text()
    assert str(Path(shared_config["data"]["public"])) == "public"
    readme = (out / "README.txt").read_text()
    assert "differential privacy" in readme and "secure random source" in readme and "NOT" not in readme
    assert "an image the run cannot read" in readme and " a image" not in readme
    listed = [line for line in readme.splitlines() if line.startswith("  ") and not line.startswith("  -")]
    assert len({line.index(line.split()[1], 2 + len(line.split()[0])) for line in listed}) == 1  # one column
    # Made to be shared: readable as the user's umask makes new files, not private to their creator.
    mask = os.umask(0o022)
    os.umask(mask)
    assert all(p.stat().st_mode & 0o777 == (0o777 if p.is_dir() else 0o666) & ~mask for p in [out, *out.rglob("*")])
    # The tiny config trains with DP-SGD: its rate q = batch / n in ledger.json gives n, and the README says so.
    assert "q = batch / n" in readme and "treats n as public" in " ".join(readme.split())
    # Its times time nothing: every file has the export's own time, which the system gives it as its change time
    # anyway, and the manifest gives the day the run started, not the time. The run's start beside the export's
    # change times timed the whole run when the export followed it at once (fit, evaluate, export in one script).
    stats = [p.stat() for p in [out, *out.rglob("*")]]
    assert len({s.st_mtime for s in stats}) == 1 and secure_run.stat().st_mtime not in {s.st_mtime for s in stats}
    assert all(abs(s.st_mtime - s.st_ctime) < 5 for s in stats)
    started = json.loads((secure_run / "manifest.json").read_text())["created"]
    assert json.loads((out / "manifest.json").read_text())["created"] == started[:10] != started
    # The exported ledger still recomputes (no key needed to read it).
    shown = CliRunner().invoke(app, ["ledger", "show", str(out)])
    assert shown.exit_code == 0 and "Total: ε =" in shown.output
    # A second export to the same place is refused and leaves the first intact.
    again = CliRunner().invoke(app, ["export", str(secure_run), str(out)])
    assert again.exit_code == 1 and "already exists" in again.output


def test_export_refuses_a_not_dp_run_an_unfinished_one_and_a_missing_report(reproducible_run, secure_run, tmp_path):
    refused = CliRunner().invoke(app, ["export", str(reproducible_run), str(tmp_path / "a")])
    assert refused.exit_code == 1 and "NOT differentially private" in refused.output
    assert not (tmp_path / "a").exists()
    forced = CliRunner().invoke(app, ["export", str(reproducible_run), str(tmp_path / "b"), "--allow-not-dp"])
    assert forced.exit_code == 0 and "NOT differentially private" in forced.output
    assert (tmp_path / "b" / "README.txt").read_text().startswith("Synthetic dataset")
    assert "NOT DIFFERENTIALLY PRIVATE" in (tmp_path / "b" / "README.txt").read_text()
    no_report = CliRunner().invoke(app, ["export", str(secure_run), str(tmp_path / "c"), "--with-report"])
    assert no_report.exit_code == 1 and "no report" in no_report.output and not (tmp_path / "c").exists()
    unfinished = tmp_path / "unfinished"
    shutil.copytree(secure_run, unfinished)
    (unfinished / "stages" / "delivery.json").unlink()
    stopped = CliRunner().invoke(app, ["export", str(unfinished), str(tmp_path / "d")])
    assert stopped.exit_code == 1 and "has not finished" in stopped.output and not (tmp_path / "d").exists()
    inside = CliRunner().invoke(app, ["export", str(secure_run), str(secure_run / "out")])
    assert inside.exit_code == 1 and "inside the run folder" in inside.output


def test_export_refuses_a_ledger_it_cannot_verify(secure_run, tmp_path):
    edited = tmp_path / "edited"
    shutil.copytree(secure_run, edited)
    ledger = json.loads((edited / "ledger.json").read_text())
    ledger["settings"]["total_epsilon"] = 100.0
    (edited / "ledger.json").write_text(json.dumps(ledger))
    result = CliRunner().invoke(app, ["export", str(edited), str(tmp_path / "out")])
    assert result.exit_code == 1 and "cannot be verified" in result.output and not (tmp_path / "out").exists()
    keyless = tmp_path / "keyless"
    shutil.copytree(secure_run, keyless)
    (keyless / "secure" / "ledger.key").unlink()
    result = CliRunner().invoke(app, ["export", str(keyless), str(tmp_path / "out")])
    assert result.exit_code == 1 and "signature cannot be checked" in result.output


def _modes(secure: Path) -> dict[str, int]:
    return {str(p.relative_to(secure.parent)): p.stat().st_mode & 0o777 for p in [secure, *secure.rglob("*")]
            if not p.is_symlink()}


def test_secure_is_its_owners_alone_whatever_wrote_into_it(secure_run):
    """secure/ was made 0755 and diagnostics.jsonl (appended) 0644: anyone on the machine could read the private
    training diagnostics. Every folder in it is now 0700 and every file 0600."""
    modes = _modes(secure_run / "secure")
    assert "secure/diagnostics.jsonl" in modes  # the tiny config trains with DP-SGD
    wrong = {path: oct(mode) for path, mode in modes.items()
             if mode != (0o700 if (secure_run / path).is_dir() else 0o600)}
    assert not wrong, wrong
