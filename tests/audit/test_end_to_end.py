"""The end-to-end audit with canaries (pcevolve.audit.end_to_end) on tiny image runs: a correct run is not
refuted and leaves nothing outside secure/ but audit.json; two planted leaks — the release's noise turned off, the
private images in the public pool — are caught; guesses by coin flips bound nothing."""

import hashlib
import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import pcevolve.pipeline.run as run_module
from pcevolve.audit.canary_guesses import GUESS_GRID, guess_bounds, guess_grid
from pcevolve.audit.canary_scores import copied_canaries
from pcevolve.audit.end_to_end import audit_run, fresh_audit_folder
from pcevolve.io import TargetExistsError
from pcevolve.pipeline import open_run, run_pipeline
from pcevolve.privacy.audit import one_run_ceiling, one_run_epsilon
from pcevolve.privacy import BudgetLedger
from pcevolve.privacy.noise import SecureNoise
from pcevolve.pipeline.secure_zone import SecureZone
from pcevolve.run_folder import RunFolder
from typer.testing import CliRunner
from pcevolve.cli.main import app


def _pipeline_conftest():
    """tests/pipeline/conftest.py as a module: its tiny data and configs, reused here (the test folders are not
    packages, so it cannot be imported by name)."""
    path = Path(__file__).resolve().parents[1] / "pipeline" / "conftest.py"
    spec = importlib.util.spec_from_file_location("_pipeline_fixtures_for_audit", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_PIPELINE = _pipeline_conftest()
tiny_data = _PIPELINE.tiny_data
tiny_config = _PIPELINE.tiny_config
table_data = _PIPELINE.table_data
table_config = _PIPELINE.table_config

#: The tiny run, set up so that the audit can refute ε = 1: the whole budget on the release (the encoder is trained
#: on public images only, so the audit run's release is comparable with the run's own), released in the whole 8-d
#: basis (the same statistics in both runs, whatever the noisy counts), and a retrieval decoder that delivers its
#: whole pool: each class draws 400 from a pool of about 400 and keeps every draw (a pool holding private images then
#: delivers them all).
AUDITED = {"privacy.epsilon": 1.0, "privacy.split": {"representation": 0.0, "release": 1.0},
           "decoder.name": "nearest-public", "decoder.public_images": 1000, "search.release_dim": 8,
           "search.synthetic_multiplier": None, "search.synthetic_per_class": 400, "search.delivery_oversample": 1.0}
CANARIES = 60


def _run(config, root):
    config, folder, _ = open_run(config, root=root)
    run_pipeline(config, folder)
    return folder.path


@pytest.fixture(scope="module")
def audited_run(tiny_config, tmp_path_factory):
    config = tiny_config(name="audited", **AUDITED)
    assert not config.privacy.reproducible_noise  # secure noise: what SecureNoise.normal patches below reaches
    return _run(config, tmp_path_factory.mktemp("runs"))


def _copy(run, tmp_path):
    """A fresh copy of the finished run, so that each test audits a folder no other audit touched."""
    return Path(shutil.copytree(run, tmp_path / run.name))


def _outside_secure(folder):
    """{relative path: content hash} of every file outside secure/."""
    return {path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in folder.rglob("*") if path.is_file() and "secure" not in path.relative_to(folder).parts}


def test_a_correct_run_is_not_refuted_and_only_audit_json_leaves_secure(audited_run, tmp_path):
    run = _copy(audited_run, tmp_path)
    before = _outside_secure(run)
    result = audit_run(run, canaries=CANARIES)

    assert result.passed and result.epsilon_lower_bound <= result.claimed_epsilon
    assert result.claimed_epsilon == pytest.approx(1.0, abs=0.01) and result.dp
    assert result.scoring == "difference"  # the public encoder repeats: the run's own release is the baseline
    after = _outside_secure(run)
    assert set(after) - set(before) == {"audit.json", "audit-ledger.json"}
    assert {path: after[path] for path in before} == before  # nothing else outside secure/ changed
    shipped = json.loads((run / "audit.json").read_text())["end_to_end"]
    assert shipped["m"] == CANARIES and shipped["r"] == 2 * shipped["k"] and 0 <= shipped["v"] <= shipped["r"]
    assert shipped["confidence"] == pytest.approx(0.95) and shipped["delta"] == pytest.approx(1e-5)
    assert shipped["passed"] is True and shipped["epsilon_lower_bound"] <= shipped["claimed_epsilon"]
    assert str(tmp_path) not in json.dumps(shipped)  # no path of the secure machine
    # The per-canary scores and the audit's private set stay in secure/.
    with np.load(run / "secure" / "audit" / "canaries.npz") as canaries:
        assert canaries["scores"].shape == (CANARIES,)
        included = int(canaries["included"].sum())
    assert len(list((run / "secure" / "audit" / "private").rglob("audit-canary-*.png"))) == included
    assert (run / "secure" / "audit" / "run" / "release.npz").exists()
    # The private copy no longer takes the private folder's modes (0644 files): the secure zone is its owner's alone.
    copy = run / "secure" / "audit"
    assert {p.stat().st_mode & 0o777 for p in [copy, *copy.rglob("*")] if p.is_dir()} == {0o700}
    assert {p.stat().st_mode & 0o777 for p in copy.rglob("*") if p.is_file()} == {0o600}

    with pytest.raises(TargetExistsError, match="already holds an end-to-end audit"):
        audit_run(run, canaries=CANARIES)  # refused before any work: no second audit folder
    assert not (run / "secure" / "audit-2").exists()

    # The rerun spent ε on the private data that no ledger recorded; it now charges the audits' ledger, which an
    # audit with --overwrite charges again, and audit.json, `ledger show` and the report say what it costs.
    audits = BudgetLedger.load(run / "audit-ledger.json", key=SecureZone(RunFolder(run)).read_key())
    rerun = BudgetLedger.load(run / "secure" / "audit" / "run" / "ledger.json")
    assert [e.event for e in audits.history] == [e.event for e in rerun.history] and audits.history
    assert shipped["audits_epsilon"] == pytest.approx(audits.spent()) and audits.spent() >= 0.99 * 1.0
    assert shipped["with_run_epsilon"] > max(shipped["audits_epsilon"], shipped["claimed_epsilon"])
    again = audit_run(run, canaries=CANARIES, overwrite=True)
    audits = BudgetLedger.load(run / "audit-ledger.json", key=SecureZone(RunFolder(run)).read_key())
    assert len(audits.history) == 2 * len(rerun.history)
    assert again.audits_epsilon == pytest.approx(audits.spent()) and audits.spent() > shipped["audits_epsilon"]
    shown = CliRunner().invoke(app, ["ledger", "show", str(run)])
    flat = " ".join(shown.output.split())
    assert shown.exit_code == 0 and f"ε = {audits.spent():.4f}" in flat and "audit-ledger.json" in flat


def test_the_release_without_noise_is_caught(tiny_config, tmp_path, monkeypatch):
    # A release that forgets its noise, as a broken implementation would: in the audited run and in the audit run.
    monkeypatch.setattr(SecureNoise, "normal", lambda self, scale, size: np.zeros(size))
    run = _run(tiny_config(name="noiseless", **{**AUDITED, "search.synthetic_per_class": 30}), tmp_path)
    result = audit_run(run, canaries=CANARIES)
    assert not result.passed and result.epsilon_lower_bound > result.claimed_epsilon
    assert result.copied == 0  # caught by the release alone


def test_private_images_in_the_public_pool_are_caught_by_their_copies(audited_run, tmp_path, monkeypatch):
    run = _copy(audited_run, tmp_path)
    load_data = run_module._load_data

    def pool_with_the_private_set(config, modality, say):
        layout, private, public = load_data(config, modality, say)
        return layout, private, np.concatenate([public, private.samples])  # the canaries that are in, included

    monkeypatch.setattr(run_module, "_load_data", pool_with_the_private_set)
    result = audit_run(run, canaries=CANARIES)
    assert not result.passed and result.epsilon_lower_bound > result.claimed_epsilon
    assert result.copied >= 10  # the copies alone put 10 canaries "in" rightly


def test_guesses_by_coin_flips_bound_nothing():
    # Scores that know nothing: the bound is 0 but for the 1 − confidence share of audits the guarantee allows.
    refuted = 0
    for seed in range(400):
        rng = np.random.default_rng(seed)
        included = rng.random(100) < 0.5
        best, grid = guess_bounds(rng.normal(size=100), included, delta=1e-5)
        assert best.epsilon == max(bound.epsilon for bound in grid)
        refuted += best.epsilon > 0
    assert refuted / 400 <= 0.05
    assert all(one_run_epsilon(500, r, r // 2, delta=1e-5) == 0.0 for r in (20, 50, 100, 200, 500))


def test_perfect_guesses_reach_the_ceiling_of_the_largest_k():
    included = np.random.default_rng(1).permutation(500) < 250  # as many in as out: k = 250 can be all right
    best, grid = guess_bounds(np.where(included, 1.0, -1.0), included, delta=1e-5)
    assert [bound.k for bound in grid] == list(GUESS_GRID)
    assert best.k == 250 and best.correct == best.guesses == 500
    assert best.epsilon == pytest.approx(one_run_ceiling(500, 500, delta=1e-5, alpha=0.05 / len(GUESS_GRID)))
    assert 4.0 < best.epsilon < 8.0  # the demo's ε = 8 is out of reach of 500 canaries


def test_the_guess_grid_is_fixed_and_capped_at_half_the_canaries():
    assert guess_grid(500) == GUESS_GRID
    assert guess_grid(60) == (10, 25, 30)
    assert guess_grid(12) == (6,)


def test_copies_are_exact_or_within_a_grey_level_or_two():
    rng = np.random.default_rng(0)
    canaries = rng.integers(0, 256, size=(4, 16, 16), dtype=np.uint8)
    near = np.clip(canaries[1].astype(int) + 1, 0, 255).astype(np.uint8)
    far = np.clip(canaries[2].astype(int) + 40, 0, 255).astype(np.uint8)
    delivered = np.stack([canaries[0], near, far, rng.integers(0, 256, size=(16, 16), dtype=np.uint8)])
    assert copied_canaries(canaries, delivered).tolist() == [True, True, False, False]
    assert not copied_canaries(canaries, delivered[:0]).any()


def test_a_later_audit_gets_a_fresh_folder_and_touches_none(tmp_path):
    secure = tmp_path / "secure"
    first = fresh_audit_folder(secure)
    (first / "keep.txt").write_text("an earlier audit")
    second = fresh_audit_folder(secure)
    assert (first.name, second.name) == ("audit", "audit-2")
    assert (first / "keep.txt").read_text() == "an earlier audit" and not any(second.iterdir())


def test_a_table_run_is_refused_with_the_reason(table_config, tmp_path):
    folder = RunFolder.create(tmp_path, table_config(name="table-audit"))  # config and manifest are enough
    with pytest.raises(ValueError, match="supports image runs so far"):
        audit_run(folder.path, canaries=CANARIES)
    assert not any((folder.path / "secure").iterdir())  # made empty with the folder; the refused audit wrote nothing
