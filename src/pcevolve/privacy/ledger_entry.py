"""One accepted charge of the budget ledger, as its history holds it and its file stores it.

An entry is immutable and records the accountant's numbers right after its event: the stage's ε and the total's,
with the bound reported and the PLD and RDP bounds beside it. The ledger's file never trusts them: a reloaded
ledger recomputes every entry from its events (``ledger_file``). Time stamps are dates, not times (see
``ledger``). JSON has no infinity, so an infinite side bound is stored as ``null``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pcevolve.privacy.events import PrivacyEvent, event_to_json


@dataclass(frozen=True)
class LedgerEntry:
    """One accepted charge.

    Attributes:
        index: Position in the history, from 0.
        time: UTC time of the charge, ISO 8601.
        stage: The stage charged.
        event: What was released.
        description: Free text from the caller (what the release was for).
        stage_epsilon: ε of the stage after this event (accountant).
        total_epsilon: ε of all events after this event (accountant, reported bound).
        bound: Which bound ``total_epsilon`` is (``pld``, ``pld+basic`` or ``rdp``).
        pld_epsilon: PLD-based bound on the total (PLD plus basic composition of pure-DP events).
        rdp_epsilon: RDP bound on the total, or ``None`` where RDP does not apply.
    """

    index: int
    time: str
    stage: str
    event: PrivacyEvent
    description: str
    stage_epsilon: float
    total_epsilon: float
    bound: str
    pld_epsilon: float
    rdp_epsilon: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "time": self.time,
            "stage": self.stage,
            "mechanism": self.event.kind,
            "event": event_to_json(self.event),
            "description": self.description,
            "stage_epsilon": self.stage_epsilon,
            "total_epsilon": self.total_epsilon,
            "bound": self.bound,
            "pld_epsilon": _finite_or_none(self.pld_epsilon),
            "rdp_epsilon": _finite_or_none(self.rdp_epsilon),
        }


def _finite_or_none(value: float | None) -> float | None:
    # A bound can be infinite (e.g. RDP for a tiny σ while PLD is finite); JSON has no infinity.
    return value if value is not None and math.isfinite(value) else None
