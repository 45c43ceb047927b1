"""Installed the way users install it: a wheel in a fresh virtual environment, then init + run on digits."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert result.returncode == 0, f"{' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_wheel_installs_into_a_fresh_venv_and_runs_on_digits(tmp_path) -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(REPO)], REPO, env)
    (wheel,) = dist.glob("pcevolve-*.whl")
    assert "pcevolve/configs/demo.yaml" in zipfile.ZipFile(wheel).namelist()  # default configs ship inside

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path, env)
    python, cli = venv / "bin" / "python", venv / "bin" / "pcevolve"
    # The CPU build of torch first, as the README says; the wheel's own requirements come from the registry.
    _run([str(python), "-m", "pip", "install", "-q", "torch==2.13.0"], tmp_path, env)
    _run([str(python), "-m", "pip", "install", "-q", str(wheel)], tmp_path, env)

    work = tmp_path / "work"
    work.mkdir()
    where = _run([str(python), "-c", "import pcevolve; print(pcevolve.__file__)"], work, env).stdout
    assert str(venv) in where, where  # the installed package, not the source tree
    _run([str(cli), "data", "prepare", "digits", "--out", "data/digits"], work, env)
    init = _run([str(cli), "init", "data/digits", "--out", "digits.yaml"], work, env)
    assert "wrote digits.yaml" in init.stdout
    run = _run([str(cli), "run", "digits.yaml"], work, env)
    assert "(ε, δ) = (8.000, 1e-05)" in run.stdout, run.stdout
    assert "search:" in run.stderr  # progress lines, since the output is not a terminal
    delivered = sorted((work / "runs" / "digits" / "synthetic").rglob("*.png"))
    assert len(delivered) == 250
    shown = _run([str(cli), "ledger", "show", "runs/digits"], work, env)
    total = re.search(r"Total: ε = ([0-9.]+) of 8 at δ = 1e-05", shown.stdout)
    assert total and 7.9 < float(total.group(1)) <= 8.0, shown.stdout
