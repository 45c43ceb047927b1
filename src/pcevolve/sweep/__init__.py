"""Sweeps: the pipeline at several ε on the same private data under one ledger, and the curve to choose ε from.

Modules (one concept each):

* ``plan`` — the members (the base config at each ε) and the accountant's composition of their planned events;
* ``curve`` — one point per judged member, from its shared report, and the privacy–utility figure;
* ``run`` — the sweep folder, its ledger (every member's ledger bound to it), running and judging the members;
* ``report`` — the sweep on one page (HTML and Markdown): its ε, the curve, each run's figures, the ledger.

A sweep composes runs and their judges, so it sits above both: nothing a run executes imports it.
"""

from pcevolve.lazy_exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "curve": ["CurvePoint", "curve_point"],
    "plan": ["SweepPlan", "SweepPlanError", "member_name", "plan_sweep"],
    "run": ["CHOICE_NOTE", "Sweep", "SweepError", "SweepOutcome", "create_sweep", "open_sweep", "run_sweep",
            "sweep_results"],
})
