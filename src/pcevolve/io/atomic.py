"""Atomic writes: a file or folder is either absent or complete, never half-written.

Files are written to a temporary sibling, flushed to disk, then renamed over the
target (``os.replace`` is atomic on POSIX within one filesystem). Folders are
built under a temporary sibling name and renamed into place only on success, so
a crash or a validation error leaves nothing behind at the final path.
No pickle anywhere: JSON, JSONL and ``.npz`` (loaded with ``allow_pickle=False``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np


def _fsync_dir(path: Path) -> None:
    # Persist the rename itself; best effort on filesystems that refuse O_RDONLY dirs.
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class TargetExistsError(FileExistsError):
    """A writer was pointed at something that already exists (and was not told to replace it)."""


def refuse_file_parent(path: str | os.PathLike[str]) -> Path:
    """``path`` as a :class:`Path`, once no folder above it is a file (``out.csv/run``: a mistyped path that would
    end in the operating system's "File exists" or "Not a directory").

    Raises:
        TargetExistsError: Names the file in the way.
    """
    target = Path(path)
    for parent in target.parents:
        if parent.is_dir():
            break
        if parent.exists() or parent.is_symlink():
            raise TargetExistsError(f"{parent} is a file, so {target} cannot be made inside it: give a path in a "
                                    "folder")
    return target


def refuse_existing(path: str | os.PathLike[str], *, overwrite: bool, folder: bool) -> Path:
    """Check that writing a ``folder`` (else a file) at ``path`` destroys nothing the caller did not offer.

    An existing empty folder is fine for a folder; anything else that exists is refused unless ``overwrite``,
    and a folder never replaces a file nor a file a folder, whatever ``overwrite`` says (a wrong suffix or a
    mistyped path must not cost the user a file). Returns ``path`` as a :class:`Path`.

    Raises:
        TargetExistsError: The message names the path and what to do.
    """
    target = refuse_file_parent(path)
    if not (target.exists() or target.is_symlink()):
        return target
    if folder and not target.is_dir():
        raise TargetExistsError(f"{target} is a file; the synthetic set is a folder: give a new folder's path")
    if not folder and target.is_dir():
        raise TargetExistsError(f"{target} is a folder; the synthetic set is one file: give a file path in it "
                                "or a new one")
    if folder and not any(target.iterdir()):
        return target
    if not overwrite:
        raise TargetExistsError(f"{target} already exists; nothing was written: give a new path, or pass "
                                "overwrite=True to replace it")
    return target


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file + fsync + rename).

    Args:
        path: Target file; its parent folder is created if missing.
        data: The complete content.

    Returns:
        The target path.
    """
    target = refuse_file_parent(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)
    return target


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    """Write ``obj`` as indented, key-sorted JSON atomically (NaN is refused)."""
    text = json.dumps(obj, indent=2, sort_keys=True, allow_nan=False, default=_json_default)
    return atomic_write_text(path, text + "\n")


def atomic_write_npz(path: str | os.PathLike[str], **arrays: np.ndarray) -> Path:
    """Write numeric arrays to an ``.npz`` atomically. Object arrays are refused (no pickle)."""
    for name, value in arrays.items():
        if np.asarray(value).dtype == object:
            raise TypeError(f"array {name!r} has dtype object; npz output must not need pickle")
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return atomic_write_bytes(path, buffer.getvalue())


def read_json(path: str | os.PathLike[str]) -> Any:
    """Read a JSON file written by :func:`atomic_write_json`."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def append_jsonl(path: str | os.PathLike[str], record: Mapping[str, Any]) -> None:
    """Append one JSON record as a line and fsync it.

    A crash (or a full disk) can at worst leave a final partial line: :func:`read_jsonl` drops it, and the next
    append cuts it off first, so a resumed run never buries a torn line inside the file.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(dict(record), sort_keys=True, allow_nan=False, default=_json_default)
    _drop_torn_tail(target)
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _drop_torn_tail(target: Path) -> None:
    """Truncate ``target`` after its last newline if it ends inside a line."""
    if not target.exists():
        return
    with open(target, "rb+") as handle:
        end = handle.seek(0, os.SEEK_END)
        if end == 0:
            return
        handle.seek(end - 1)
        if handle.read(1) == b"\n":
            return
        position = end
        while position > 0:
            start = max(0, position - 65536)
            handle.seek(start)
            chunk = handle.read(position - start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                handle.truncate(start + newline + 1)
                return
            position = start
        handle.truncate(0)


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read JSONL records, ignoring a torn last line left by a crash."""
    target = Path(path)
    if not target.exists():
        return []
    records: list[dict[str, Any]] = []
    lines = target.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if number == len(lines):
                break  # torn final line from an interrupted append
            raise ValueError(f"{target}: line {number} is not valid JSON") from None
    return records


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike[str], *, overwrite: bool = False) -> Iterator[Path]:
    """Build a folder under a temporary name; move it to ``path`` only if the block succeeds.

    Args:
        path: The final folder.
        overwrite: Replace an existing folder at ``path``. Without it an existing
            folder is an error, raised before anything is written.

    Yields:
        The temporary folder to fill.

    Raises:
        FileExistsError: ``path`` exists and ``overwrite`` is false.
    """
    target = refuse_file_parent(path)
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target} already exists (use overwrite to replace it)")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if target.exists():
        retired = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, retired)
        os.replace(staging, target)
        shutil.rmtree(retired, ignore_errors=True)
    else:
        os.replace(staging, target)
    _fsync_dir(target.parent)


#: Modes of what only its owner may read: a folder (0700) and a file (0600).
PRIVATE_FOLDER_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def private_folder(path: str | os.PathLike[str]) -> Path:
    """``path`` as a folder only its owner can enter (0700), made (with its parents) if missing."""
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, PRIVATE_FOLDER_MODE)
    return folder


def shared_tree(path: str | os.PathLike[str]) -> None:
    """Give ``path`` and everything below it the modes the user's umask gives a new folder and file (commonly 0755
    and 0644): what is made to be shared (an export) must be readable by the colleagues the user's other files are
    readable by, whereas pcevolve's atomic writers start from modes private to their creator. Links are left alone.
    """
    mask = os.umask(0o022)
    os.umask(mask)
    root = Path(path)
    if root.is_symlink():
        return
    if root.is_file():
        os.chmod(root, 0o666 & ~mask)
        return
    os.chmod(root, 0o777 & ~mask)
    for where, folders, files in os.walk(root):
        here = Path(where)
        for name in folders:
            if not (here / name).is_symlink():
                os.chmod(here / name, 0o777 & ~mask)
        for name in files:
            if not (here / name).is_symlink():
                os.chmod(here / name, 0o666 & ~mask)


def private_tree(path: str | os.PathLike[str]) -> None:
    """Make ``path`` and everything below it its owner's alone: folders 0700, files 0600. Links are left as they are
    (their modes are their targets'); a missing ``path`` is nothing to do."""
    root = Path(path)
    if not root.is_dir() or root.is_symlink():
        return
    os.chmod(root, PRIVATE_FOLDER_MODE)
    for where, folders, files in os.walk(root):
        here = Path(where)
        for name in folders:
            if not (here / name).is_symlink():
                os.chmod(here / name, PRIVATE_FOLDER_MODE)
        for name in files:
            if not (here / name).is_symlink():
                os.chmod(here / name, PRIVATE_FILE_MODE)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot serialise {type(value).__name__} to JSON")
