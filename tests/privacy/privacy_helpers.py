"""Shared helpers of the privacy tests (imported by name, like tests/data/data_helpers.py)."""

from __future__ import annotations

from pcevolve.privacy import BudgetLedger

SEED_STAGES = {"representation": 3.0, "fitness": 5.0, "decoder": 0.0, "delivery": 0.0}


def roomy_ledger(neighbouring: str = "add_remove") -> BudgetLedger:
    """A throw-away ledger with a budget no test release can exhaust."""
    return BudgetLedger(1e9, 1e-5, {"test": 1e9}, neighbouring=neighbouring)
