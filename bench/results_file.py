"""Where every benchmark writes its numbers: ``bench/results/NAME[-TAG].json`` (gitignored; rerun to refresh), or the
folder a bench's ``--out`` (``--smoke``: a temporary folder) names instead."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS = Path("bench/results")


def redirect(folder: Path) -> None:
    """Make every later :func:`result_path` and :func:`write_results` of this process write under ``folder``."""
    global RESULTS  # one bench, one results folder per process: its --out, decided before anything is written
    RESULTS = Path(folder)


def result_path(name: str, tag: str = "", suffix: str = ".json") -> Path:
    """``RESULTS/NAME[-TAG]SUFFIX``, with the folder created."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    return RESULTS / f"{name}-{tag}{suffix}" if tag else RESULTS / f"{name}{suffix}"


def write_results(results: Any, name: str, tag: str = "") -> Path:
    """Write ``results`` as indented JSON (numpy scalars as floats) to :func:`result_path`; return the path."""
    out = result_path(name, tag)
    out.write_text(json.dumps(results, indent=2, default=float) + "\n", encoding="utf-8")
    return out
