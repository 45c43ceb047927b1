"""How every benchmark runs the pipeline: ``pcevolve run`` on a config written beside its run folder, reused once
finished, timed (a subprocess, exactly as a user would run it); and the demo data it runs on, prepared when missing."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml


def packaged(name: str) -> dict[str, Any]:
    """The packaged run config ``name`` (``configs/NAME.yaml`` of the source tree) as a plain mapping, read from the
    installed package so that it does not matter where the bench is started from."""
    from pcevolve.config.loader import packaged_configs

    return yaml.safe_load(packaged_configs()[name])


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


def prepared(folder: Path, source: str, *options: str) -> Path:
    """``folder``, holding what ``pcevolve data prepare SOURCE --out FOLDER OPTIONS`` writes; prepared first when its
    ``dataset.json`` (written last) is missing, as on a fresh clone. The command's own message says what to install
    when the source's files are absent."""
    if not (folder / "dataset.json").exists():
        print(f"preparing {folder} (pcevolve data prepare {source})", flush=True)
        done = subprocess.run([sys.executable, "-m", "pcevolve.cli.main", "data", "prepare", source, "--out",
                               str(folder), *options, *(["--overwrite"] if folder.exists() else [])],
                              stdout=subprocess.DEVNULL, check=False)
        if done.returncode != 0:  # its message, on stderr, says why
            raise SystemExit(f"could not prepare {folder}: pcevolve data prepare {source} failed")
    return folder
