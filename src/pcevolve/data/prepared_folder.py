"""Where ``pcevolve data prepare`` may write: a new or empty folder, or, with ``overwrite``, one it prepared before.

``overwrite`` replaces only what pcevolve made: a folder whose ``dataset.json`` names one of the prepared formats
and that holds nothing but the entries that format writes. Anything else in it (a thesis, a sub-folder, a file of
the user's beside the splits) refuses the whole replacement, naming what would be lost; so do the current folder
and its ancestors, which a mistyped ``--out .`` or ``--out ..`` would otherwise empty.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pcevolve.io import TargetExistsError

#: The entries each prepared format writes, by the ``format`` its ``dataset.json`` records.
PREPARED_ENTRIES: dict[str, frozenset[str]] = {
    "pcevolve.demo-dataset": frozenset({"private", "test", "full", "public", "classes.json", "dataset.json"}),
    "pcevolve.table-demo": frozenset({"private.csv", "test.csv", "public.csv", "schema.yaml", "dataset.json"}),
    "pcevolve.text-demo": frozenset({"private.jsonl", "test.jsonl", "public.jsonl", "dataset.json"}),
}


def check_prepare_target(out: str | os.PathLike[str], *, overwrite: bool) -> Path:
    """``out`` as a :class:`Path`, once writing a prepared dataset there destroys nothing the caller did not make.

    Raises:
        TargetExistsError: ``out`` is the current folder or holds it, is a file, exists without ``overwrite``, or
            holds something a prepared dataset does not (the message names it).
    """
    target = Path(out)
    here = Path.cwd().resolve()
    if target.name in ("", ".", "..") or target.resolve() == here or target.resolve() in here.parents:
        raise TargetExistsError(f"{out} is the current folder or holds it; give the path of a new folder for the "
                                "dataset, e.g. data/mine")
    if not (target.exists() or target.is_symlink()):
        return target
    if not target.is_dir() or target.is_symlink():
        raise TargetExistsError(f"{target} exists and is not a folder; give the path of a new folder")
    entries = sorted(entry.name for entry in target.iterdir())
    if not entries:
        return target
    if not overwrite:
        raise TargetExistsError(f"{target} already exists; give a new folder, or ask to replace it (overwrite) if "
                                "pcevolve prepared it")
    made = PREPARED_ENTRIES.get(_prepared_format(target))
    if made is None:
        raise TargetExistsError(f"{target} is not a dataset pcevolve prepared (no dataset.json of one); nothing was "
                                "replaced: give a new folder")
    foreign = [name for name in entries if name not in made]
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise TargetExistsError(f"{target} holds what pcevolve did not write ({shown}); nothing was replaced: move "
                                "them away or give a new folder")
    return target


def _prepared_format(folder: Path) -> str | None:
    """The ``format`` of ``folder/dataset.json``, or None when there is none to read."""
    try:
        description = json.loads((folder / "dataset.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return description.get("format") if isinstance(description, dict) else None
