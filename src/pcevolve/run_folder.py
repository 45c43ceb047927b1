"""The run folder convention: ``runs/NAME/`` with config, manifest and records.

Layout (later stages add their own files beside these)::

    runs/NAME/
      config.yaml      resolved config, hash in the header
      manifest.json    versions, seed, config hash (no data fingerprint: exact counts are private, see secure/)
      records.jsonl    one JSON object per event or generation, appended and fsynced
      ledger.json      the privacy ledger (written by pcevolve.privacy)
      secure/          what must never leave the secure zone (pcevolve.pipeline.secure_zone): its owner's alone,
                       made 0700 with the folder, everything in it 0700 / 0600 once a command is done with it

The manifest never holds private content. Records carry no wall-clock time, and
:meth:`RunFolder.settle_times` gives every file outside ``secure/`` the run's start time:
the time a private stage took grows with the private batch sizes, so neither a record's
time stamp nor a file's modification time may reveal it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib.metadata
import os
import platform
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcevolve import __version__
from pcevolve.config import RunConfig, config_hash, dump_config
from pcevolve.io import (
    append_jsonl,
    atomic_directory,
    atomic_write_json,
    private_folder,
    private_tree,
    read_json,
    read_jsonl,
)

#: The folder of a run that never leaves the secure zone.
SECURE_FOLDER = "secure"
_VERSIONED_PACKAGES = ("torch", "numpy", "scipy", "scikit-learn", "opacus", "dp-accounting", "pydantic", "Pillow")


def package_versions() -> dict[str, str]:
    """Versions of pcevolve, Python and the packages a result depends on."""
    versions = {"pcevolve": __version__, "python": platform.python_version()}
    for name in _VERSIONED_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


@dataclass(frozen=True)
class RunFolder:
    """Paths and writers of one run folder. Create with :meth:`create` or open with :meth:`open`."""

    path: Path

    @property
    def config_path(self) -> Path:
        return self.path / "config.yaml"

    @property
    def manifest_path(self) -> Path:
        return self.path / "manifest.json"

    @property
    def records_path(self) -> Path:
        return self.path / "records.jsonl"

    @property
    def ledger_path(self) -> Path:
        return self.path / "ledger.json"

    @property
    def secure_path(self) -> Path:
        return self.path / SECURE_FOLDER

    def seal_secure(self) -> None:
        """Make ``secure/`` and everything in it readable by its owner only (folders 0700, files 0600), whatever
        mode the writers and copies inside it left: a copy of ``secure/`` keeps its modes."""
        private_tree(self.secure_path)

    @classmethod
    def create(
        cls,
        root: str | os.PathLike[str],
        config: RunConfig,
        *,
        data_fingerprints: Mapping[str, Any] | None = None,
        prepare: Callable[[RunFolder], None] | None = None,
    ) -> "RunFolder":
        """Create ``root/config.name`` with its config, its manifest and what ``prepare`` writes into it, all at once.

        The folder is built under a temporary name beside it and renamed into place complete, so a creation that is
        killed leaves no run folder (only its temporary sibling, removed by the next creation of that name): nothing
        half-made can later be opened as a run — a sweep member without its membership file, a run whose in-memory
        data is missing. ``prepare`` receives the folder under its temporary name; what it writes must not name that
        path.

        Raises:
            FileExistsError: the folder exists (resume it instead).
        """
        path = Path(root) / config.name
        if path.exists():
            raise FileExistsError(f"run folder {path} already exists; resume it or choose another name")
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in path.parent.glob(f".{config.name}.*.partial"):  # a creation of this name that was killed
            shutil.rmtree(stale, ignore_errors=True)
        with atomic_directory(path) as staging:
            os.chmod(staging, 0o777 & ~_umask())  # as a folder made by mkdir: the temporary one is private
            folder = cls(staging)
            dump_config(config, folder.config_path)
            atomic_write_json(
                folder.manifest_path,
                {
                    "pcevolve_version": __version__,
                    "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                    "config_hash": config_hash(config),
                    "seed": config.seed,
                    "versions": package_versions(),
                    "data": dict(data_fingerprints or {}),
                },
            )
            private_folder(folder.secure_path)  # before anything private is written into it
            if prepare is not None:
                prepare(folder)
            folder.seal_secure()
        return cls(path)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> "RunFolder":
        """Open an existing run folder (it must hold a manifest)."""
        folder = cls(Path(path))
        if not folder.manifest_path.exists():
            raise FileNotFoundError(f"{folder.path} is not a pcevolve run folder (no manifest.json)")
        return folder

    def manifest(self) -> dict[str, Any]:
        return read_json(self.manifest_path)

    def record(self, kind: str, **fields: Any) -> None:
        """Append one record (``{"kind": kind, **fields}``, no time stamp) to records.jsonl."""
        append_jsonl(self.records_path, {"kind": kind, **fields})

    def settle_times(self) -> None:
        """Set the access and modification times of everything outside ``secure/`` to the run's start."""
        stamp = self.manifest().get("created")
        created = (_dt.datetime.fromisoformat(stamp).timestamp() if isinstance(stamp, str)
                   else self.manifest_path.stat().st_mtime)
        secure = self.secure_path
        for root, dirs, files in os.walk(self.path, topdown=True):
            here = Path(root)
            dirs[:] = [d for d in dirs if here / d != secure]
            for name in files:
                os.utime(here / name, (created, created), follow_symlinks=False)
            for name in dirs:
                os.utime(here / name, (created, created), follow_symlinks=False)
        os.utime(self.path, (created, created))

    def records(self, kind: str | None = None) -> list[dict[str, Any]]:
        """All records, or those of one kind, in the order written."""
        return [r for r in read_jsonl(self.records_path) if kind is None or r.get("kind") == kind]


def _umask() -> int:
    """The process's file-mode creation mask (read by setting it, and setting it back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def outputs_digest(path: str | os.PathLike[str]) -> str:
    """SHA-256 of one output of a run: a file's bytes, or every file below a folder (relative name and bytes, in
    name order). Two runs made the same output exactly when the digests agree (file times are not included)."""
    target = Path(path)
    digest = hashlib.sha256()
    for file in sorted(target.rglob("*")) if target.is_dir() else [target]:
        if file.is_file():
            digest.update(file.relative_to(target).as_posix().encode() if target.is_dir() else b"")
            digest.update(file.read_bytes())
    return digest.hexdigest()

