"""The privacy core: mechanisms, the budget ledger, accounting, calibration and an empirical audit.

Every stage touches private data only through a mechanism here, and a mechanism
releases only after the :class:`BudgetLedger` has accepted its event. The
argument for each guarantee is in ``docs/privacy.md``.

Modules (one concept each):

* ``events`` — immutable descriptions of releases (what the accountant needs);
* ``accounting`` — events → (ε, δ) with ``dp_accounting`` (PLD reported, RDP beside it);
* ``calibration`` — the smallest noise for a target ε;
* ``ledger`` — total and per-stage budgets, history, refusal, atomic save/resume;
* ``noise`` — seeded or secure noise sources (a run picks one in ``pcevolve.randomness``);
* ``clipping`` — per-sample L2 clipping;
* ``dpsgd`` — DP-SGD steps paid for in the ledger before they run;
* ``mechanisms`` — Gaussian, Laplace and exponential mechanisms;
* ``cluster_vote`` — the classes' vote for public cluster centres (an exponential mechanism over assignments);
* ``statistics`` — per-class count / sum / second moment / RFF-embedding releases;
* ``audit`` — an attack-based lower bound on ε.
"""

from pcevolve.privacy.accounting import DEFAULT_PLD_DISCRETIZATION, PrivacyAccount, account, pld_delta
from pcevolve.privacy.audit import AuditResult, audit_lower_bound, clopper_pearson_upper, epsilon_from_rates
from pcevolve.privacy.calibration import (
    CalibrationError,
    affordable_steps,
    calibrate_noise_multiplier,
    dpsgd_noise_multiplier,
    dpsgd_schedule,
    gaussian_noise_multiplier,
    laplace_noise_multiplier,
)
from pcevolve.privacy.clipping import clip_rows, clip_rows_torch
from pcevolve.privacy.dpsgd import DPSGDMechanism, NoStepsLeft
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
from pcevolve.privacy.mechanisms import ExponentialMechanism, GaussianMechanism, LaplaceMechanism
from pcevolve.privacy.noise import GeneratorNoise, NoiseSource, SecureNoise, as_noise_source
from pcevolve.privacy.statistics import ClassStatisticsRelease, NoisyClassStatistics, RandomFourierFeatures

__all__ = [
    "DEFAULT_PLD_DISCRETIZATION",
    "AuditResult",
    "BudgetExceeded",
    "BudgetLedger",
    "CalibrationError",
    "DPSGDMechanism",
    "ClassStatisticsRelease",
    "ExponentialMechanism",
    "ExponentialSelection",
    "GaussianMechanism",
    "GaussianRelease",
    "GeneratorNoise",
    "LaplaceMechanism",
    "LaplaceRelease",
    "LedgerCorrupt",
    "LedgerEntry",
    "LedgerError",
    "Neighbouring",
    "NoiseSource",
    "NoStepsLeft",
    "NoisyClassStatistics",
    "PostProcessing",
    "PrivacyAccount",
    "PrivacyEvent",
    "RandomFourierFeatures",
    "SecureNoise",
    "SubsampledGaussianSteps",
    "account",
    "affordable_steps",
    "as_noise_source",
    "audit_lower_bound",
    "calibrate_noise_multiplier",
    "clip_rows",
    "clip_rows_torch",
    "clopper_pearson_upper",
    "dpsgd_noise_multiplier",
    "dpsgd_schedule",
    "epsilon_from_rates",
    "event_from_json",
    "event_to_json",
    "gaussian_noise_multiplier",
    "laplace_noise_multiplier",
    "pld_delta",
]
