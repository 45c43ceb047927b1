"""Each privacy fact stated once: the release stage's events (``privacy/class_release.py``) and the rounds of
selections (``privacy/selection_rounds.py``). A planted variant of either statement changes what ``pcevolve budget
plan`` charges, what a run charges and what the audit plays, together."""

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


def test_a_planted_selection_rounds_variant_changes_plan_run_and_audit_together(table_config, table_data, tmp_path,
                                                                                 monkeypatch):
    """The same for the rounds of selections (here a table made without a pool, evolved under private verdicts)."""
    from pcevolve.data.table_schema import draft_schema
    from pcevolve.privacy.selection_rounds import EVOLUTION_ROUNDS, SelectionRounds

    schema = draft_schema(table_data / "public.csv", label_column="label").save(tmp_path / "schema.yaml")
    config = table_config(name="planted-rounds", **{
        "privacy.reproducible_noise": True, "data.public": None, "data.schema_file": str(schema),
        "synthesis.evolve": True, "synthesis.generations": 3,
        "privacy.split": {"release": 0.95, "verdict": 0.05}})
    stage = EVOLUTION_ROUNDS.stage
    before = plan_budget(config, PRIVATE_ROWS).events_of(stage)
    original = SelectionRounds.epsilon
    monkeypatch.setattr(SelectionRounds, "epsilon", lambda self, ledger, rounds: 0.5 * original(self, ledger, rounds))

    plan = plan_budget(config, PRIVATE_ROWS).events_of(stage)
    # About half (the stage caps are scaled again to the changed events, so not exactly half).
    assert 0.4 * before[0].epsilon < plan[0].epsilon < 0.6 * before[0].epsilon and plan[0].count == 3
    config, folder, _ = open_run(config, root=tmp_path)
    run_pipeline(config, folder)
    ledger = BudgetLedger.load(folder.path / "ledger.json")
    assert EVOLUTION_ROUNDS.parameters(ledger.events(stage)) == EVOLUTION_ROUNDS.parameters(plan)
    assert planned(config, PRIVATE_ROWS).selection_epsilon == pytest.approx(plan[0].epsilon, rel=1e-12)
    assert recorded(ledger).selection_epsilon == pytest.approx(plan[0].epsilon, rel=1e-12)
