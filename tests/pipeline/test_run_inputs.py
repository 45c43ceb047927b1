"""Inputs a run refuses before its ledger exists (a missing folder, a bad image), and one it warns about instead."""

import json
import shutil

import pytest

from pcevolve.pipeline import RunError, open_run, run_pipeline


def test_a_pool_holding_a_private_image_is_a_console_warning_never_a_refusal(tiny_config, tiny_data, tmp_path):
    # The pool must be chosen without looking at the private set: refusing it would make whether the run proceeds
    # depend on the private data, and cleaning it would make the pool (and with retrieval the delivered set) depend
    # on it. The run says what is true and goes on; the count stays on the console.
    pool = tmp_path / "pool"
    shutil.copytree(tiny_data / "public", pool)
    private_image = sorted((tiny_data / "private").rglob("*.png"))[3]
    shutil.copy(private_image, pool / "looks-public.png")
    config, folder, _ = open_run(tiny_config(name="leaky", **{"data.public": str(pool),
                                                              "privacy.split": {"release": 1.0}}),
                                 root=tmp_path / "runs")
    said: list[str] = []
    outcome = run_pipeline(config, folder, say=said.append)
    (warning,) = [line for line in said if "also in the public pool" in line]
    assert warning.startswith("warning: 1 private image(s) are also in the public pool")
    assert "choose the pool from another source" in warning and "Do not remove" in warning
    assert sum(outcome.synthetic_counts) > 0
    shipped = [path for path in folder.path.rglob("*") if path.is_file() and "secure" not in path.parts]
    assert not any("also in the public pool" in path.read_text(errors="ignore") for path in shipped)
    assert json.loads((folder.path / "ledger.json").read_text())["dp"] is True


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
