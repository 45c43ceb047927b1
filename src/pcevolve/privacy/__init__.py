"""The privacy core: mechanisms, the budget ledger, accounting, calibration and an empirical audit.

Every stage touches private data only through a mechanism here, and a mechanism
releases only after the :class:`BudgetLedger` has accepted its event. The
argument for each guarantee is in ``docs/privacy.md``.

Modules (one concept each):

* ``events`` — immutable descriptions of releases (what the accountant needs);
* ``accounting`` — events → (ε, δ) with ``dp_accounting`` (PLD reported, RDP beside it);
* ``calibration`` — the smallest noise for a target ε;
* ``ledger`` — total and per-stage budgets, history, refusal before any noise;
* ``ledger_entry`` — one accepted charge, as the history holds it and the file stores it;
* ``ledger_errors`` — the ledger's refusals (over budget, corrupt file, misuse);
* ``ledger_file`` — the ledger's file: format, integrity hash, signature, atomic save, verified resume;
* ``noise`` — seeded or secure noise sources (a run picks one in ``pcevolve.randomness``);
* ``clipping`` — per-sample L2 clipping;
* ``dpsgd`` — DP-SGD steps paid for in the ledger before they run;
* ``mechanisms`` — Gaussian, Laplace and exponential mechanisms;
* ``cluster_vote`` — the classes' vote for public cluster centres (an exponential mechanism over assignments);
* ``statistics`` — per-class count / sum / second moment / RFF-embedding releases;
* ``class_release`` — the release stage's class statistics: its events stated once, the release made through them;
* ``release_rule`` — which statistics the release spends on, from the noisy counts and public quantities;
* ``released_statistics`` — what the release gave the search, and its file (``release.npz``);
* ``selection_rounds`` — rounds of exponential selections from one stage (the verdict, the pool-free evolution);
* ``audit`` — an attack-based lower bound on ε.
"""

from pcevolve.lazy_exports import lazy_exports

# Each module is imported when one of its names is first used, so reading a ledger does not load torch.
__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "accounting": ["DEFAULT_PLD_DISCRETIZATION", "PrivacyAccount", "account", "pld_delta",
                   "pld_discretization_for"],
    "audit": ["AuditResult", "audit_lower_bound", "clopper_pearson_upper", "epsilon_from_rates"],
    "class_release": ["CLASS_STATISTICS", "ClassStatisticsFamily", "ReleaseSettings"],
    "calibration": ["CalibrationError", "affordable_steps", "calibrate_noise_multiplier", "dpsgd_noise_multiplier",
                    "dpsgd_schedule", "gaussian_noise_multiplier", "laplace_noise_multiplier"],
    "clipping": ["clip_rows", "clip_rows_torch"],
    "dpsgd": ["DPSGDMechanism", "NoStepsLeft"],
    "events": ["ExponentialSelection", "GaussianRelease", "LaplaceRelease", "Neighbouring", "PostProcessing",
               "PrivacyEvent", "SubsampledGaussianSteps", "event_from_json", "event_to_json"],
    "ledger": ["BudgetLedger"],
    "ledger_entry": ["LedgerEntry"],
    "ledger_errors": ["BudgetExceeded", "LedgerCorrupt", "LedgerError"],
    "mechanisms": ["ExponentialMechanism", "GaussianMechanism", "LaplaceMechanism"],
    "noise": ["GeneratorNoise", "NoiseSource", "SecureNoise", "as_noise_source"],
    "released_statistics": ["StatisticsRelease"],
    "statistics": ["ClassStatisticsRelease", "NoisyClassStatistics", "RandomFourierFeatures"],
})
