"""Inputs a run refuses before its ledger exists: a public pool that holds a private image, a missing folder."""

import shutil

import pytest

from pcevolve.pipeline import RunError, open_run, run_pipeline
from pcevolve.pipeline.secure_zone import SecureZone


def test_a_pool_holding_a_private_image_is_refused_before_any_budget_exists(tiny_config, tiny_data, tmp_path):
    pool = tmp_path / "pool"
    shutil.copytree(tiny_data / "public", pool)
    private_image = sorted((tiny_data / "private").rglob("*.png"))[3]
    shutil.copy(private_image, pool / "looks-public.png")
    config, folder, _ = open_run(tiny_config(name="leaky", **{"data.public": str(pool)}), root=tmp_path / "runs")
    with pytest.raises(RunError, match="shares 1 image") as caught:
        run_pipeline(config, folder)
    assert "looks-public.png" in str(caught.value)
    assert not SecureZone(folder).has_ledger()


def test_a_missing_data_folder_leaves_no_run_folder(tiny_config, tmp_path):
    with pytest.raises(RunError, match="data.private"):
        open_run(tiny_config(name="nowhere", **{"data.private": str(tmp_path / "absent")}), root=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


def test_a_bad_image_is_named_and_the_new_run_folder_removed(tiny_config, tiny_data, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from pcevolve.cli.main import app
    from pcevolve.config import dump_config

    private = tmp_path / "private"
    shutil.copytree(tiny_data / "private", private)
    (private / sorted(p.name for p in private.iterdir())[0] / "truncated.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    config_path = dump_config(tiny_config(name="bad", **{"data.private": str(private)}), tmp_path / "bad.yaml")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", str(config_path), "-q"])
    assert result.exit_code == 1 and "truncated.png" in result.output and "Traceback" not in result.output
    assert "nothing was spent" in result.output
    assert not (tmp_path / "runs" / "bad").exists()


def test_one_process_per_run_folder(tmp_path):
    import json
    import os
    import socket
    import subprocess
    import sys

    from pcevolve.pipeline.run_lock import LOCK_NAME, RunFolderInUse, run_folder_lock

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / LOCK_NAME).write_text(json.dumps({"host": socket.gethostname(), "pid": sleeper.pid}))
        with pytest.raises(RunFolderInUse, match=str(sleeper.pid)):
            with run_folder_lock(tmp_path):
                pass
    finally:
        sleeper.kill()
        sleeper.wait()
    # The owner is gone now: its lock is stale and is taken over, then released.
    with run_folder_lock(tmp_path) as lock:
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert not (tmp_path / LOCK_NAME).exists()


def test_delta_near_one_over_n_is_warned_with_the_reason():
    from pcevolve.privacy.calibration import delta_advice

    assert delta_advice(1e-5, 500) is None
    advice = delta_advice(0.01, 60)
    assert advice is not None and "1 / 60" in advice and "outright" in advice


def test_an_unwritable_runs_root_is_named_without_a_traceback(tiny_data, tmp_path):
    from typer.testing import CliRunner

    from pcevolve.cli.main import app

    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    result = CliRunner().invoke(app, ["run", str(tiny_data / "private"), "--public", str(tiny_data / "public"),
                                      "--runs-root", str(blocker / "runs"), "-q"])
    assert result.exit_code == 1 and "Not a directory" in result.output and str(blocker) in result.output
    assert "Traceback" not in result.output
