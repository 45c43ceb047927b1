"""The privacy core: mechanisms, the budget ledger, accounting, calibration and an empirical audit.

Every stage touches private data only through a mechanism here, and a mechanism
releases only after the budget ledger has accepted its event.

Modules (one concept each):

* ``events`` — immutable descriptions of releases (what the accountant needs);
* ``accounting`` — events → (ε, δ) with ``dp_accounting`` (PLD reported, RDP beside it);
* ``calibration`` — the smallest noise for a target ε;
* ``ledger`` — total and per-stage budgets, history, refusal, atomic save/resume;
"""

from pcevolve.privacy.accounting import DEFAULT_PLD_DISCRETIZATION, PrivacyAccount, account, pld_delta
from pcevolve.privacy.calibration import (
    CalibrationError,
    affordable_steps,
    calibrate_noise_multiplier,
    dpsgd_noise_multiplier,
    dpsgd_schedule,
    gaussian_noise_multiplier,
    laplace_noise_multiplier,
)
from pcevolve.privacy.events import (
    ExponentialSelection,
    GaussianRelease,
    LaplaceRelease,
    Neighbouring,
    PostProcessing,
    PrivacyEvent,
    SubsampledGaussianSteps,
    event_from_json,
    event_to_json,
)
from pcevolve.privacy.ledger import BudgetExceeded, BudgetLedger, LedgerCorrupt, LedgerEntry, LedgerError

__all__ = [
    "DEFAULT_PLD_DISCRETIZATION",
    "BudgetExceeded",
    "BudgetLedger",
    "CalibrationError",
    "ExponentialSelection",
    "GaussianRelease",
    "LaplaceRelease",
    "LedgerCorrupt",
    "LedgerEntry",
    "LedgerError",
    "Neighbouring",
    "PostProcessing",
    "PrivacyAccount",
    "PrivacyEvent",
    "SubsampledGaussianSteps",
    "account",
    "affordable_steps",
    "calibrate_noise_multiplier",
    "dpsgd_noise_multiplier",
    "dpsgd_schedule",
    "event_from_json",
    "event_to_json",
    "gaussian_noise_multiplier",
    "laplace_noise_multiplier",
    "pld_delta",
]
