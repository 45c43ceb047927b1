"""One process per run folder: a lock file with its owner's pid, and a stale lock told from a live one.

Two processes on one folder would both charge the one ledger and write the same files. ``run.lock`` is created
with ``O_EXCL`` (atomic on local file systems) and holds the owner's host and pid; a lock whose process is gone
(killed, machine rebooted) is stale and is taken over. A lock from another host cannot be checked from here and
is refused with the way out in the message.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = "run.lock"


class RunFolderInUse(RuntimeError):
    """Another live process holds the run folder; the message names it and what to do."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _owner(path: Path) -> dict[str, object] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # half-written by a process killed while creating it: stale


def _try_create(path: Path) -> bool:
    try:
        handle = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        json.dump({"host": socket.gethostname(), "pid": os.getpid()}, file)
    return True


@contextmanager
def run_folder_lock(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold ``folder/run.lock`` for the duration of the block.

    Raises:
        RunFolderInUse: A live process (or one on another host) holds it.
    """
    path = Path(folder) / LOCK_NAME
    if not _try_create(path):
        owner = _owner(path)
        host, pid = (owner or {}).get("host"), (owner or {}).get("pid")
        if owner is not None and host != socket.gethostname():
            raise RunFolderInUse(f"{folder} is in use by process {pid} on {host} (lock {path}); if that run is "
                                 "no longer going, delete the lock file and retry")
        if owner is not None and isinstance(pid, int) and pid != os.getpid() and _alive(pid):
            raise RunFolderInUse(f"{folder} is in use by process {pid} on this machine; wait for it to finish or "
                                 f"stop it, then resume with `pcevolve run --resume {folder}`")
        path.unlink(missing_ok=True)  # stale: its process is gone
        if not _try_create(path):
            raise RunFolderInUse(f"{folder} was locked by another process just now; retry")
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)
