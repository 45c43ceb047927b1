"""Rounds of exponential selections paid from one stage: the private verdict's generations (a run with a pool) and
the pool-free evolution's (a table without one), each round one ε-DP selection of the same ε.

:data:`VERDICT_ROUNDS` and :data:`EVOLUTION_ROUNDS` state the stage's events once: the run calibrates each round's
ε by :meth:`SelectionRounds.epsilon` and its mechanism (:class:`~pcevolve.privacy.mechanisms.ExponentialMechanism`)
charges one ``ExponentialSelection(ε)`` before each draw; ``pcevolve budget plan`` charges
:meth:`SelectionRounds.events` (the rounds as one event, which the accountant composes exactly as it composes the
rounds one by one); the audit reads the same events back (:meth:`SelectionRounds.parameters`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pcevolve.privacy.calibration import exponential_selection_epsilon, stage_selection_epsilon
from pcevolve.privacy.events import ExponentialSelection, PrivacyEvent

if TYPE_CHECKING:
    from pcevolve.privacy.ledger import BudgetLedger

STAGE = "verdict"


@dataclass(frozen=True)
class SelectionRounds:
    """``rounds`` exponential selections charged to :attr:`stage`, each of the largest ε for which all of them fit.

    Attributes:
        whole_cap: Each round's ε from the stage's whole cap for all the rounds (a resumed run asks the same
            question and gets the same ε), rather than from what is left of the stage for the rounds still to run
            (a resumed verdict runs only the rounds its plan still pays for).
    """

    stage: str
    whole_cap: bool

    def epsilon(self, ledger: "BudgetLedger", rounds: int) -> float:
        """Each round's ε, by the ledger's own accountant (so the ledger accepts every round)."""
        if self.whole_cap:
            return exponential_selection_epsilon(ledger.stages[self.stage], ledger.delta, count=rounds,
                                                 neighbouring=ledger.neighbouring,
                                                 pld_discretization=ledger.pld_discretization)
        return stage_selection_epsilon(ledger, self.stage, count=rounds)

    def events(self, ledger: "BudgetLedger", rounds: int) -> tuple[ExponentialSelection, ...]:
        """The stage's events as planned: the ``rounds`` selections as one event."""
        return (ExponentialSelection(self.epsilon(ledger, rounds), rounds),)

    def parameters(self, events: Iterable[PrivacyEvent]) -> tuple[float | None, int]:
        """Each round's ε (the largest charged; ``None``: no round) and how many rounds, from the stage's events."""
        selections = [event for event in events if isinstance(event, ExponentialSelection)]
        return (max(event.epsilon for event in selections) if selections else None,
                sum(event.count for event in selections))


#: The private verdict of a run with a pool (``privacy.split.verdict``, ``search.verdict_generations``).
VERDICT_ROUNDS = SelectionRounds(STAGE, whole_cap=False)
#: The evolution of a table made without a pool (``synthesis.evolve``, ``synthesis.generations``).
EVOLUTION_ROUNDS = SelectionRounds(STAGE, whole_cap=True)
