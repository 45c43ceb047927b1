"""``RUN/audit.json``: what ``pcevolve audit`` found, one part per kind of audit, read by the report.

The per-mechanism part holds numbers from synthetic games only (no private data went in). The end-to-end part
holds a bound computed from a second run on the private data with canaries (its own ledger is in
``RUN/secure/audit/``): only counts of right guesses about the canaries and the bound derived from them, both
post-processing of that run's DP outputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pcevolve.io import atomic_write_json, read_json

AUDIT_FILE = "audit.json"
AUDIT_FORMAT = "pcevolve.audit"
AUDIT_VERSION = 1
PARTS = ("mechanisms", "end_to_end")


def read_audit(run_folder: str | Path) -> dict[str, Any] | None:
    """The run's audit file, or ``None`` when the run was never audited (or the file is not one of ours)."""
    path = Path(run_folder) / AUDIT_FILE
    if not path.is_file():
        return None
    data = read_json(path)
    if not isinstance(data, dict) or data.get("format") != AUDIT_FORMAT:
        return None
    return data


def write_audit_part(run_folder: str | Path, part: str, payload: dict[str, Any]) -> Path:
    """Set one part of ``RUN/audit.json`` (the other part, if any, is kept), atomically.

    Raises:
        ValueError: an unknown part.
        FileExistsError: ``RUN/audit.json`` exists and is not an audit file (it is left alone).
    """
    if part not in PARTS:
        raise ValueError(f"unknown audit part {part!r}; expected one of {PARTS}")
    path = Path(run_folder) / AUDIT_FILE
    current = read_audit(run_folder)
    if current is None and path.exists():
        raise FileExistsError(f"{path} exists and is not a pcevolve audit file; move it away first")
    data = current or {"format": AUDIT_FORMAT, "version": AUDIT_VERSION}
    data[part] = payload
    return atomic_write_json(path, data)
