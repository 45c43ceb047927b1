"""The release stage's events are stated once (``privacy/class_release.py``): a planted variant of that one
statement changes what ``pcevolve budget plan`` charges, what a run charges and what the audit plays, together."""

from __future__ import annotations

import pytest

from pcevolve.audit.mechanisms import planned, recorded
from pcevolve.pipeline.plan import plan_budget
from pcevolve.pipeline.run import open_run, run_pipeline
from pcevolve.privacy import BudgetLedger, GaussianRelease
from pcevolve.privacy.class_release import CLASS_STATISTICS, ClassStatisticsFamily

PRIVATE_ROWS = 60  # conftest.py's private table


def _louder_counts(original):
    """The same events but for the counts' noise, doubled: a variant no other file knows of."""
    def variant(self, ledger, count_share, *, votes, noise_multiplier=None):
        for name, event in original(self, ledger, count_share, votes=votes, noise_multiplier=noise_multiplier):
            yield name, (GaussianRelease(2.0 * event.noise_multiplier) if name == "counts" else event)
    return variant


@pytest.mark.parametrize("class_means", ["sums", "votes"])
def test_a_planted_release_variant_changes_plan_run_and_audit_together(class_means, table_config, tmp_path,
                                                                       monkeypatch):
    config = table_config(name=f"planted-{class_means}", **{"privacy.reproducible_noise": True,
                                                             "search.class_means": class_means})
    stage = CLASS_STATISTICS.stage
    before = plan_budget(config, PRIVATE_ROWS).events_of(stage)
    audited_before = planned(config, PRIVATE_ROWS)

    monkeypatch.setattr(ClassStatisticsFamily, "events", _louder_counts(ClassStatisticsFamily.events))
    plan = plan_budget(config, PRIVATE_ROWS).events_of(stage)
    assert plan[0].noise_multiplier == pytest.approx(2.0 * before[0].noise_multiplier, rel=1e-12)
    assert plan[1:] != () and type(plan[1]) is type(before[1])

    config, folder, _ = open_run(config, root=tmp_path)
    run_pipeline(config, folder)
    ledger = BudgetLedger.load(folder.path / "ledger.json")
    assert ledger.events(stage) == plan  # the run charged what the plan said, variant and all

    audited = planned(config, PRIVATE_ROWS)
    assert audited.release_noise != pytest.approx(audited_before.release_noise, rel=1e-6)
    assert audited.release_noise == pytest.approx(CLASS_STATISTICS.parameters(plan).noise_multiplier, rel=1e-12)
    assert recorded(ledger).release_noise == pytest.approx(audited.release_noise, rel=1e-12)
    assert recorded(ledger).vote_epsilon == audited.vote_epsilon
