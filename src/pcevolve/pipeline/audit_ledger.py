"""A run's audit ledger: what the end-to-end audits spent on the run's private data, beside the run's own ledger.

``pcevolve audit RUN`` runs the whole pipeline a second time on the run's private data (with canaries,
:mod:`pcevolve.audit.end_to_end`). That second run is a DP run of its own, and ``audit.json`` is post-processing of
it: whoever holds ``audit.json`` beside the run's outputs holds the outputs of both runs. So every audit's rerun
charges ``RUN/audit-ledger.json`` (:data:`AUDIT_LEDGER`), a signed ledger with one stage, :data:`AUDIT_STAGE`,
bound as the rerun's parent (:meth:`~pcevolve.privacy.BudgetLedger.bind`, as a sweep's runs are): each rerun's
charge is admitted, and written there, before its noise is drawn, and a later audit (``--overwrite``) adds its own
rerun's charges to the same stage. :func:`audit_cost` reads what the audits spent and what the run and its audits
compose to — the ε that ``audit.json`` costs when shared with the run's outputs — for ``pcevolve ledger show``, the
report and the export's README.

The ledger is signed with the run's key (``secure/ledger.key``), at the run's δ, neighbouring relation and noise
source; its cap is :data:`AUDIT_LEDGER_CAP`, the largest total a run takes: an audit that would pass it is refused
before its rerun draws any noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pcevolve.run_folder import RunFolder

if TYPE_CHECKING:
    from pcevolve.privacy.ledger import BudgetLedger

#: The audit ledger's file, in the run folder beside ``ledger.json``.
AUDIT_LEDGER = "audit-ledger.json"
#: Its one stage: every end-to-end audit's rerun.
AUDIT_STAGE = "end_to_end"
#: Its total ε: the most a run takes (``pcevolve.config`` refuses more), so at most one rerun at that ε fits.
AUDIT_LEDGER_CAP = 100.0


@dataclass(frozen=True)
class AuditCost:
    """What the end-to-end audits of a run spent on its private data.

    Attributes:
        audits: The accountant's ε over every audit rerun's events (the audit ledger's total).
        with_run: The accountant's ε over the run's events and every audit rerun's together: what the run's outputs
            and ``audit.json`` cost together.
        delta: The δ of both.
    """

    audits: float
    with_run: float
    delta: float

    def sentence(self) -> str:
        """One sentence for a person: what ``audit.json`` costs beside the run's outputs."""
        return (f"the end-to-end audit ran the pipeline again on the same private data: its ledger ({AUDIT_LEDGER}) "
                f"spent ε = {self.audits:.4f}, and the run's outputs shared with audit.json cost ε = "
                f"{self.with_run:.4f} together (the accountant's composition of both ledgers, δ = {self.delta:g})")


def audit_ledger(folder: RunFolder, run_ledger: BudgetLedger, key: bytes) -> BudgetLedger:
    """The run's audit ledger, opened and verified with ``key``, or made now (empty) with the run's δ, neighbouring
    relation and noise source.

    Raises:
        pcevolve.privacy.LedgerError: The file exists but cannot be verified, or was made for other privacy
            settings than the run's.
    """
    from pcevolve.privacy.ledger import BudgetLedger
    from pcevolve.privacy.ledger_errors import LedgerError

    path = folder.path / AUDIT_LEDGER
    if not path.exists():
        return BudgetLedger(AUDIT_LEDGER_CAP, run_ledger.delta, {AUDIT_STAGE: AUDIT_LEDGER_CAP}, path=path,
                            neighbouring=run_ledger.neighbouring, reproducible_noise=run_ledger.reproducible_noise,
                            key=key)
    ledger = BudgetLedger.load(path, key=key)
    if (ledger.delta, ledger.neighbouring, ledger.reproducible_noise) != (
            run_ledger.delta, run_ledger.neighbouring, run_ledger.reproducible_noise):
        raise LedgerError(f"{path} was made for other privacy settings than the run's ledger; move it away only if "
                          "it belongs to another run")
    return ledger


def audit_cost(folder: RunFolder, run_ledger: BudgetLedger, key: bytes | None) -> AuditCost | None:
    """What the run's end-to-end audits spent (:class:`AuditCost`), or None when none ran. ``key`` verifies the
    audit ledger's signature when given (inside the secure zone); without it the file's ε are still recomputed.

    Raises:
        pcevolve.privacy.LedgerError: The audit ledger does not add up or its signature does not match.
    """
    from pcevolve.privacy.accounting import account
    from pcevolve.privacy.ledger import BudgetLedger

    path = folder.path / AUDIT_LEDGER
    if not path.is_file():
        return None
    audits = BudgetLedger.load(path, key=key)
    both = account((*run_ledger.events(), *audits.events()), delta=run_ledger.delta,
                   neighbouring=run_ledger.neighbouring, pld_discretization=audits.pld_discretization)
    return AuditCost(audits=audits.spent(), with_run=both.epsilon, delta=run_ledger.delta)
