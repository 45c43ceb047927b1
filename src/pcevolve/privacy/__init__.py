"""The privacy core: mechanisms, the budget ledger, accounting, calibration and an empirical audit.

Every stage touches private data only through a mechanism here, and a mechanism
releases only after the budget ledger has accepted its event.

Modules (one concept each):

* ``events`` — immutable descriptions of releases (what the accountant needs);
* ``accounting`` — events → (ε, δ) with ``dp_accounting`` (PLD reported, RDP beside it);
"""

from pcevolve.privacy.accounting import DEFAULT_PLD_DISCRETIZATION, PrivacyAccount, account, pld_delta
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

__all__ = [
    "DEFAULT_PLD_DISCRETIZATION",
    "ExponentialSelection",
    "GaussianRelease",
    "LaplaceRelease",
    "Neighbouring",
    "PostProcessing",
    "PrivacyAccount",
    "PrivacyEvent",
    "SubsampledGaussianSteps",
    "account",
    "event_from_json",
    "event_to_json",
    "pld_delta",
]
