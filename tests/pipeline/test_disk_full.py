"""A full disk: a clear message, no file that looks complete but is not, and a resume once space is back."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import numpy as np
import pytest
from typer.testing import CliRunner

from pcevolve.cli.main import app
from pcevolve.config import dump_config


def _mount_tmpfs(path, size: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    path.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True, check=False).returncode == 0


def _readable(path) -> bool:
    """Every file with a final name parses as what its name says (atomic writes leave no half file behind)."""
    try:
        if path.suffix == ".json":
            json.loads(path.read_text())
        elif path.suffix == ".jsonl":
            [json.loads(line) for line in path.read_text().splitlines()]
        elif path.suffix == ".npz":
            with np.load(path) as data:
                [data[k] for k in data.files]
    except (ValueError, OSError, EOFError):
        return False
    return True


@pytest.mark.slow
def test_a_full_disk_fails_clearly_and_the_run_resumes_after(tiny_config, tmp_path):
    runs = tmp_path / "small"
    if not _mount_tmpfs(runs, "600k"):
        pytest.skip("needs root to mount a small tmpfs (the test makes its own small filesystem)")
    try:
        config_path = dump_config(tiny_config(name="full", **{"privacy.reproducible_noise": True}),
                                  tmp_path / "full.yaml")
        runner = CliRunner()
        result = runner.invoke(app, ["run", str(config_path), "-q", "--runs-root", str(runs)])
        assert result.exit_code == 1, result.output
        assert "No space left on device" in result.output and "free some space, then resume" in result.output
        assert "Traceback" not in result.output
        folder = runs / "full"
        files = [p for p in folder.rglob("*") if p.is_file()]
        assert not [p for p in files if ".tmp" in p.name or p.name.startswith(".")], files  # no staging left
        assert all(_readable(p) for p in files)
        subprocess.run(["mount", "-o", "remount,size=200m", str(runs)], check=True)  # space is back
        resumed = runner.invoke(app, ["run", "--resume", str(folder), "-q"])
        assert resumed.exit_code == 0, resumed.output
        assert (folder / "synthetic.npz").exists()
    finally:
        subprocess.run(["umount", str(runs)], check=False)
