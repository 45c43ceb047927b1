"""Checkpoint files of a search: arrays in ``.npz``, everything else in JSON, never pickle.

A checkpoint folder holds ``evolution.json`` and the ``.npz`` it names. The npz
is written first under a generation-specific name, then the JSON (the commit
point) with the npz's SHA-256; older npz files are removed last. A crash at any
moment therefore leaves a JSON that names a complete, matching npz: either the
previous checkpoint or the new one. Both writes are atomic (``pcevolve.io``).
The first save builds the folder under a temporary name and renames it into
place, so the folder exists only once it holds a complete checkpoint (callers
may test ``folder.exists()`` to decide whether to resume).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.io import atomic_directory, atomic_write_json, atomic_write_npz, read_json

STATE_FILE = "evolution.json"
_ARRAYS_PREFIX = "evolution-g"


class CheckpointError(ValueError):
    """A checkpoint is missing, damaged, or does not match the settings it is loaded with."""


def generator_state_to_json(rng: np.random.Generator) -> dict[str, Any]:
    """The PCG64 state of ``rng`` as JSON, its 128-bit integers as decimal strings.

    JSON readers other than Python's lose precision past 2**53, so the big
    integers are strings; :func:`generator_from_json` restores the exact state.

    Raises:
        ValueError: ``rng`` is not driven by PCG64.
    """
    state = rng.bit_generator.state
    if state.get("bit_generator") != "PCG64":
        raise ValueError(f"only PCG64 generators are checkpointed, got {state.get('bit_generator')!r}")
    return {
        "bit_generator": "PCG64",
        "state": str(int(state["state"]["state"])),
        "inc": str(int(state["state"]["inc"])),
        "has_uint32": int(state["has_uint32"]),
        "uinteger": str(int(state["uinteger"])),
    }


def generator_from_json(document: dict[str, Any]) -> np.random.Generator:
    """A generator in exactly the state :func:`generator_state_to_json` recorded.

    Raises:
        CheckpointError: The document is not a PCG64 state.
    """
    try:
        if document["bit_generator"] != "PCG64":
            raise CheckpointError(f"unsupported bit generator {document['bit_generator']!r}")
        bit_generator = np.random.PCG64()
        bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": int(document["state"]), "inc": int(document["inc"])},
            "has_uint32": int(document["has_uint32"]),
            "uinteger": int(document["uinteger"]),
        }
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, CheckpointError):
            raise
        raise CheckpointError(f"bad generator state: {error}") from None
    return np.random.Generator(bit_generator)


def save_state(folder: str | os.PathLike[str], arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> Path:
    """Write ``arrays`` and ``meta`` (with an integer ``"generation"``) into ``folder``.

    Returns:
        The path of the JSON file.
    """
    target = Path(folder)
    if not target.exists():
        with atomic_directory(target) as staging:
            _write_into(staging, arrays, meta)
        return target / STATE_FILE
    return _write_into(target, arrays, meta)


def _write_into(target: Path, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> Path:
    name = f"{_ARRAYS_PREFIX}{int(meta['generation']):06d}.npz"
    atomic_write_npz(target / name, **arrays)
    digest = hashlib.sha256((target / name).read_bytes()).hexdigest()
    document = dict(meta)
    document["arrays"] = {"file": name, "sha256": digest}
    state_path = atomic_write_json(target / STATE_FILE, document)
    for stale in target.glob(f"{_ARRAYS_PREFIX}*.npz"):
        if stale.name != name:
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
    return state_path


def load_state(folder: str | os.PathLike[str]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read what :func:`save_state` wrote; the npz is checked against its recorded hash.

    Raises:
        CheckpointError: The JSON or the npz it names is missing or does not match.
    """
    source = Path(folder)
    state_path = source / STATE_FILE
    if not state_path.is_file():
        raise CheckpointError(f"{state_path}: no evolution checkpoint here")
    meta = read_json(state_path)
    reference = meta.pop("arrays", None)
    if not isinstance(reference, dict) or "file" not in reference or "sha256" not in reference:
        raise CheckpointError(f"{state_path}: does not name its arrays file")
    arrays_path = source / Path(str(reference["file"])).name
    if not arrays_path.is_file():
        raise CheckpointError(f"{arrays_path}: missing (named by {state_path})")
    payload = arrays_path.read_bytes()
    if hashlib.sha256(payload).hexdigest() != reference["sha256"]:
        raise CheckpointError(f"{arrays_path}: content does not match the hash in {state_path}")
    # Load the very bytes that were hashed, not a second read of the file.
    with np.load(io.BytesIO(payload), allow_pickle=False) as archive:
        arrays = {key: np.array(archive[key]) for key in archive.files}
    return arrays, meta
