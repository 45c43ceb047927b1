"""How every benchmark runs the pipeline: ``pcevolve run`` on a config written beside its run folder, reused once
finished, timed (a subprocess, exactly as a user would run it)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml


def run_config(config: dict[str, Any], root: Path) -> tuple[Path, float]:
    """The finished run folder of ``config`` (its ``name``) under ``root`` and the run's wall time in seconds.

    The config is written to ``root/NAME.yaml``; a run folder whose delivery stage is already marked done is
    reused without running (its time is then NaN: not measured again).
    """
    name = config["name"]
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    if (root / name / "stages" / "delivery.json").exists():
        return root / name, float("nan")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pcevolve.cli.main", "run", "-q", "--runs-root", str(root), str(path)],
                   check=True, stdout=subprocess.DEVNULL)
    return root / name, time.perf_counter() - started
