"""The ledger's stage names, the run's paying stages, the budget plan's planners, the noise streams and the typed
products name the same stages: a stage that pays has a ledger cap (``privacy.split``), a planner and a noise stream
of its own, and nothing else has either."""

from dataclasses import fields

from pcevolve.config.schema import STAGES as LEDGER_STAGES
from pcevolve.pipeline.plan import PLANNERS
from pcevolve.pipeline.stage import Products
from pcevolve.pipeline.stages import STAGES
from pcevolve.randomness import NOISE_STREAMS, PUBLIC_STREAMS


def test_the_ledger_stages_are_the_stages_that_pay_and_delivery():
    paying = {stage.name for stage in STAGES if stage.pays}
    assert paying == {"representation", "decoder", "release", "verdict"}
    assert set(LEDGER_STAGES) == paying | {"delivery"}  # delivery charges post-processing (ε 0)
    assert set(NOISE_STREAMS) == paying


def test_every_stage_draws_from_a_public_stream_of_its_own_name_or_none():
    named = {stage.name for stage in STAGES} - {"verdict"}  # the verdict draws only mechanism noise
    assert named <= set(PUBLIC_STREAMS)


def test_budget_plan_plans_the_paying_stages_in_the_order_a_run_charges_them():
    assert list(PLANNERS) == [stage.name for stage in STAGES if stage.pays]


def test_every_stage_has_a_typed_product_of_its_own_name():
    assert [field.name for field in fields(Products)] == [stage.name for stage in STAGES]
