"""The stage caps a run uses: the shares scaled until the accountant's total is the ε asked for."""

import pytest

from pcevolve.config import parse_config
from pcevolve.pipeline.plan import TOTAL_TOLERANCE, VotePlan, plan_budget, stage_caps


@pytest.mark.parametrize("privacy, n", [
    ({}, 500),
    ({"split": {"representation": 0.375, "release": 0.625}}, 500),
    ({"epsilon": 1.0}, 500),
    ({"epsilon": 8.0, "split": {"representation": 0.5, "release": 0.5}}, 200),
    ({"epsilon": 2.0, "neighbouring": "replace_one"}, 500),
    ({"epsilon": 3.0, "split": {"release": 1.0}}, 50),
])
def test_calibrated_caps_compose_to_the_total_asked_for(privacy, n):
    config = parse_config({"privacy": privacy})
    caps = stage_caps(config, n)
    total = plan_budget(config, n, caps=caps).total.epsilon
    target = config.privacy.epsilon
    assert target * (1 - TOTAL_TOLERANCE) <= total <= target
    shares = config.privacy.split
    scale = {stage: caps[stage] / (share * target) for stage, share in shares.items() if share > 0}
    assert max(scale.values()) == pytest.approx(min(scale.values()))  # one factor for every stage: the split holds
    assert min(scale.values()) >= 1.0


def test_given_sigma_configs_are_planned_with_the_steps_the_budget_allows():
    config = parse_config({"representation": {"noise_multiplier": 3.0, "epochs": 200},
                           "privacy": {"split": {"representation": 0.375, "release": 0.625}}})
    plan = plan_budget(config, 500)
    assert plan.representation.mode == "given" and 0 < plan.representation.steps < plan.representation.schedule.steps
    assert plan.total.epsilon <= config.privacy.epsilon


@pytest.mark.parametrize("privacy", [{"epsilon": 1.0}, {"epsilon": 8.0, "split": {"representation": 0.3,
                                                                                   "release": 0.7}}])
def test_a_vote_release_is_planned_as_counts_then_one_selection_and_the_caps_still_reach_the_total(privacy):
    config = parse_config({"privacy": privacy, "search": {"class_means": "votes"}})
    caps = stage_caps(config, 50)
    plan = plan_budget(config, 50, caps=caps)
    target = config.privacy.epsilon
    assert target * (1 - TOTAL_TOLERANCE) <= plan.total.epsilon <= target
    assert isinstance(plan.release, VotePlan) and 0 < plan.release.vote_epsilon < caps["release"]
    assert plan.release.epsilon == pytest.approx(caps["release"], rel=1e-6)
