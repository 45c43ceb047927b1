"""A run made by a sweep (``pcevolve sweep``): which sweep it belongs to, and the guarantee its set carries.

A sweep runs the pipeline at several ε on the same private data under one ledger, ``SWEEP/ledger.json``, which
composes every member's events. Whoever looks at the members' results and keeps one has used all of them: the
kept set carries the sweep's ε, not its own. So a member says it is one (``RUN/sweep_member.json``, written when
its folder is made), and :func:`sweep_guarantee` gives what an export must record.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pcevolve.io import atomic_write_json, read_json
from pcevolve.privacy.ledger_errors import LedgerError

if TYPE_CHECKING:
    from pcevolve.privacy.ledger import BudgetLedger

MEMBER_FILE = "sweep_member.json"
SWEEP_FILE = "sweep.json"
SWEEP_FORMAT = "pcevolve.sweep"


class SweepMemberError(Exception):
    """A sweep member whose sweep cannot be found or verified; the message says what to do."""


@dataclass(frozen=True)
class SweepGuarantee:
    """What a member's set carries once the sweep's results have been looked at.

    Attributes:
        sweep: The sweep folder.
        epsilon: The sweep ledger's total when every member has finished, else its cap (no member can spend past
            it, so it bounds what the sweep will have spent).
        delta: The sweep's δ.
        finished: Whether every member has delivered its set.
        ledger: ``SWEEP/ledger.json``.
    """

    sweep: Path
    epsilon: float
    delta: float
    finished: bool
    ledger: Path


def delivered(run: Path) -> bool:
    """Whether the run folder ``run`` has finished (its delivery marker is written last)."""
    return (run / "stages" / "delivery.json").is_file()


def open_sweep_ledger(sweep: Path) -> "BudgetLedger":
    """``SWEEP/ledger.json``, verified against ``SWEEP/secure/ledger.key`` (the same layout as a run folder's).

    Raises:
        OSError, ValueError: The key is missing or damaged.
        pcevolve.privacy.LedgerError: The ledger cannot be verified.
    """
    from pcevolve.pipeline.secure_zone import SecureZone  # loads the accountant: not at import time
    from pcevolve.privacy.ledger import BudgetLedger
    from pcevolve.run_folder import RunFolder

    key = SecureZone(RunFolder(sweep)).read_key()
    if key is None:
        raise FileNotFoundError(f"{sweep / 'secure' / 'ledger.key'} is missing")
    return BudgetLedger.load(sweep / "ledger.json", key=key)


def write_membership(folder: Path, *, sweep: str, members: tuple[str, ...]) -> None:
    """Mark ``folder`` (a new run folder inside its sweep's folder) as a member of ``sweep``."""
    atomic_write_json(folder / MEMBER_FILE, {"format": SWEEP_FORMAT, "sweep": sweep, "members": list(members)})


def membership(run_dir: str | os.PathLike[str]) -> dict[str, object] | None:
    """The member file of a run folder, or None for a run no sweep made."""
    path = Path(run_dir) / MEMBER_FILE
    return read_json(path) if path.is_file() else None


def sweep_guarantee(run_dir: str | os.PathLike[str]) -> SweepGuarantee | None:
    """The sweep guarantee of a member run, or None for a run no sweep made.

    Raises:
        SweepMemberError: The run is a member, but its sweep folder (the run folder's parent) is not there, or the
            sweep's ledger cannot be verified against its key.
    """
    member = membership(run_dir)
    if member is None:
        return None
    run = Path(run_dir).resolve()
    sweep = run.parent
    where = (f"{run} was made by the sweep {member.get('sweep')!r}: any one member's set carries the sweep's total "
             f"ε, which its ledger in the sweep folder records")
    try:
        found = read_json(sweep / SWEEP_FILE)
        if found.get("format") != SWEEP_FORMAT or run.name not in found.get("members", []):
            raise ValueError("not this run's sweep")
        ledger = open_sweep_ledger(sweep)
    except (OSError, ValueError, LedgerError) as error:
        raise SweepMemberError(f"{where}, but {sweep} is not that sweep's folder or its ledger cannot be verified "
                               f"({error}); keep the member inside its sweep folder") from None
    finished = all(delivered(sweep / name) for name in found["members"])
    epsilon = ledger.spent() if finished else ledger.total_epsilon
    return SweepGuarantee(sweep=sweep, epsilon=epsilon, delta=ledger.delta, finished=finished,
                          ledger=sweep / "ledger.json")
