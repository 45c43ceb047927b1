"""How the budget ledger says no: :class:`LedgerError` and its two kinds.

* :class:`BudgetExceeded` is raised by :meth:`~pcevolve.privacy.ledger.BudgetLedger.charge` (and asked by
  ``can_afford``) before anything is released: a refused charge changes nothing, not the history, not the file,
  and no noise is drawn. Its message names the stage, the event, the event's ε on its own, what the stage or the
  total would reach, the cap and what is left.
* :class:`LedgerCorrupt` is raised when a ledger file is refused on reload (``ledger_file``): unreadable,
  malformed, edited, wrongly signed, or not adding up to its own events.
* Any other :class:`LedgerError` is a misuse, e.g. an unknown stage, seeded noise on a ledger for secure noise,
  settings that differ from the run's, or a signed ledger charged without its key.
"""

from __future__ import annotations

from pcevolve.privacy.events import PrivacyEvent


class LedgerError(Exception):
    """Base of ledger errors."""


class BudgetExceeded(LedgerError):
    """A charge would overspend a stage cap or the total budget. Nothing was charged or released.

    Attributes:
        stage: The stage that asked.
        event: The event that was refused.
        scope: ``"stage"`` or ``"total"``: which cap would be exceeded.
        would_reach: ε the stage (or the total) would reach with the event.
        cap: The cap that would be exceeded.
        spent: ε of the stage (or the total) before the event.
        request_epsilon: ε of the event on its own, at the ledger's δ.
    """

    def __init__(self, *, stage: str, event: PrivacyEvent, scope: str, would_reach: float, cap: float,
                 spent: float, request_epsilon: float, delta: float) -> None:
        self.stage, self.event, self.scope = stage, event, scope
        self.would_reach, self.cap, self.spent, self.request_epsilon = would_reach, cap, spent, request_epsilon
        where = f"stage {stage!r}" if scope == "stage" else "the total budget"
        if scope == "stage" and cap == 0:
            message = (f"stage {stage!r} has no privacy budget (ε cap 0: post-processing only); "
                       f"refused {event.describe()} (ε {request_epsilon:.4g} on its own at δ={delta:g})")
        else:
            asked = f"{event.describe()}" if scope == "stage" else f"{event.describe()} for stage {stage!r}"
            message = (
                f"{where} cannot afford {asked}: it costs ε {request_epsilon:.4g} "
                f"on its own and would bring {where} to ε {would_reach:.4g} > cap {cap:.4g} at δ={delta:g}; "
                f"spent ε {spent:.4g}, left ε {max(cap - spent, 0.0):.4g}"
            )
        super().__init__(message)


class LedgerCorrupt(LedgerError, ValueError):
    """A ledger file is unreadable, malformed, edited, or does not match its own events."""
