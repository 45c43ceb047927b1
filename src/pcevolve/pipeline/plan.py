"""What a run will spend, computed by the very functions the run calls (``pcevolve budget plan``).

:func:`plan_budget` replays a run's charges on a fresh, file-less ledger, each paying stage by its planner
(:data:`PLANNERS`): stage 2's σ from
:func:`~pcevolve.privacy.calibration.representation_sigma`, the decoder's from
:func:`~pcevolve.privacy.calibration.decoder_sigma`, the release's from
:meth:`~pcevolve.privacy.class_release.ClassStatisticsFamily.events`, the verdict's from
:mod:`~pcevolve.privacy.selection_rounds`, in the run's order and with its events. So the
σ it reports is the σ a run records, and its total is the accountant's composition of exactly the
events the run will charge (when every stage spends its plan). It reads no data: n, the number
of private samples, is a public input (docs/privacy.md §2).

:func:`stage_caps` turns the config's shares (``privacy.split``) into the ledger's per-stage caps:
the shares scaled by one factor s ≥ 1, the largest for which the planned events compose to at most
the total ε. Composition is sub-additive, so s = 1 (caps summing to ε) would leave budget unspent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pcevolve.config import RunConfig
from pcevolve.data.table_schema import TableSchema
from pcevolve.privacy import (
    BudgetLedger,
    PrivacyAccount,
    SubsampledGaussianSteps,
    affordable_steps,
    pld_discretization_for,
)
from pcevolve.privacy.calibration import (
    DPSGDPlan,
    decoder_sigma,
    largest_scale_within,
    representation_sigma,
)
from pcevolve.privacy.class_release import CLASS_STATISTICS, combined_noise_multiplier, count_noise_std, unit_noise
from pcevolve.privacy.class_release import STAGE as RELEASE_STAGE
from pcevolve.privacy.events import PrivacyEvent
from pcevolve.privacy.histograms import histogram_sensitivity
from pcevolve.privacy.selection_rounds import EVOLUTION_ROUNDS, VERDICT_ROUNDS
from pcevolve.search.verdict import STAGE as VERDICT_STAGE
from pcevolve.synthesis.labeller import feature_bound
from pcevolve.synthesis.release import part_noise_multipliers, planned_events, release_parts


@dataclass(frozen=True)
class DPSGDStagePlan:
    """One DP-SGD stage as a run will execute it."""

    stage: str
    mode: str  # "derived" (σ from the stage cap) or "given" (σ from the config, steps until the cap)
    noise_multiplier: float
    schedule: DPSGDPlan
    steps: int  # steps the ledger will accept (all planned ones in derived mode)
    clip_norm: float
    epsilon: float  # the stage's ε after these steps
    refused: bool = False  # the run would stop here: the stage cannot pay for its planned steps


@dataclass(frozen=True)
class ReleasePlan:
    """The release of class statistics: the counts' Gaussian event, then the rest's."""

    noise_multiplier: float  # of the two events as one Gaussian
    event_noise_multipliers: tuple[float, float]  # counts, rest
    noise_stds: dict[str, float]  # per component if all are kept, in units of C, C², 1 (see component_bounds)
    sizes: dict[str, int]  # released numbers per class and component
    epsilon: float
    # The smallest typical class size (noisy count) at which the rule keeps each optional statistic: for the
    # second moment in units of C² / v₁ (v₁: the largest public variance, known once the pool is encoded).
    kept_from: dict[str, float]
    # t: a class sum's noise std per coordinate, in units of C, when the sums take the whole second event (the
    # dimension rule's view): a class mean of n̂ samples carries t·C(d)/n̂ (privacy/release_rule.py).
    sum_noise_multiplier: float


@dataclass(frozen=True)
class VotePlan:
    """The release with ``search.class_means: votes``: a Gaussian release of the class sizes, then one exponential
    selection of a public cluster for every class; nothing else is released."""

    count_noise_multiplier: float
    count_noise_std: float  # per class size
    vote_epsilon: float  # the selection's pure ε
    epsilon: float  # the stage's ε, both events composed


@dataclass(frozen=True)
class MadeReleasePlan:
    """The release of a table without a public pool (:mod:`pcevolve.synthesis.release`): its Gaussian parts."""

    noise_multipliers: dict[str, float]  # per part and release, in the order charged (synthesis/release.py)
    noise_stds: dict[str, float]  # per part: the noise std on every released number
    sensitivities: dict[str, float]  # per part: its L2 sensitivity under the run's neighbouring relation
    repeats: dict[str, int]  # per part: how many times it is released (the labeller's steps)
    placed: tuple[str, ...]  # the columns whose bins the placement release sets
    epsilon: float  # the stage's ε, the parts composed


@dataclass(frozen=True)
class VerdictPlan:
    """The private verdict: ``generations`` exponential selections of ``selection_epsilon`` each."""

    generations: int
    selection_epsilon: float
    epsilon: float  # the stage's ε, the selections composed


@dataclass(frozen=True)
class BudgetPlan:
    """Every stage's noise and ε, and the accountant's total over all of them."""

    representation: DPSGDStagePlan | None
    decoder: DPSGDStagePlan | None
    release: ReleasePlan | VotePlan | MadeReleasePlan | None
    total: PrivacyAccount
    caps: dict[str, float]
    verdict: VerdictPlan | None = None
    events: tuple[PrivacyEvent, ...] = ()  # every planned event in the run's order (``total`` composes them)
    stage_events: dict[str, tuple[PrivacyEvent, ...]] | None = None  # the same, per stage

    def events_of(self, stage: str) -> tuple[PrivacyEvent, ...]:
        """The planned events of one stage, in the run's order (none for a stage that pays nothing)."""
        return (self.stage_events or {}).get(stage, ())


def _dpsgd(ledger: BudgetLedger, stage: str, mode: str, sigma: float, schedule: DPSGDPlan, clip_norm: float, *,
           partial: bool) -> DPSGDStagePlan:
    """Charge what the stage will charge. ``partial``: a given σ trains until the cap (stage 2); otherwise the
    whole plan must fit or the stage is refused before its first step (the decoder)."""
    steps = schedule.steps
    if mode == "given" and partial:
        steps = affordable_steps(ledger, stage, sampling_probability=schedule.sampling_probability,
                                 noise_multiplier=sigma, max_steps=schedule.steps)
    event = SubsampledGaussianSteps(schedule.sampling_probability, sigma, max(steps, 1))
    if steps == 0 or not ledger.can_afford(stage, event):
        return DPSGDStagePlan(stage, mode, sigma, schedule, 0, clip_norm, ledger.spent(stage), refused=True)
    ledger.charge(stage, event, description="planned")
    return DPSGDStagePlan(stage, mode, sigma, schedule, steps, clip_norm, ledger.spent(stage))


#: The total a calibrated split reaches is within this fraction below the target, never above it.
TOTAL_TOLERANCE = 0.005


def plan_budget(config: RunConfig, num_samples: int, *, caps: dict[str, float] | None = None) -> BudgetPlan:
    """The noise and ε of every DP stage of ``config`` for ``num_samples`` private samples: each stage that pays
    charges what it will charge (:data:`PLANNERS`, in the run's order) on a ledger of its own.

    Args:
        caps: The ledger's stage caps to plan with; default :func:`stage_caps` (what a run uses).

    Raises:
        ValueError: ``num_samples`` < 1 with a DP-SGD stage (its sampling rate is batch / n); the release needs no n.
    """
    privacy = config.privacy
    if num_samples < 1 and config.trains_with_dp_sgd:
        raise ValueError(f"DP-SGD needs at least one private sample (q = batch / n), got n = {num_samples}")
    caps = stage_caps(config, num_samples) if caps is None else caps
    # Each stage calibrates against its own cap, as in a run; the simulated ledger's total is left roomy so that
    # the plan can report what a set of caps composes to (stage_caps keeps a run's caps within the true total).
    # The interval of the run's own ledger (it follows the total ε), so that plan and run calibrate alike.
    # Roomier than the caps' sum: at one δ, events calibrated to caps that sum to ε can compose to a little more.
    ledger = BudgetLedger(2.0 * max(privacy.epsilon, sum(caps.values())), privacy.delta, caps,
                          neighbouring=privacy.neighbouring, reproducible_noise=privacy.reproducible_noise,
                          pld_discretization=pld_discretization_for(privacy.epsilon))
    plans = {stage: planner(ledger, config, num_samples) for stage, planner in PLANNERS.items()}
    return BudgetPlan(plans["representation"], plans["decoder"], plans[RELEASE_STAGE], ledger.account(),
                      dict(caps), plans[VERDICT_STAGE], ledger.events(),
                      {stage: ledger.events(stage) for stage in ledger.stages})


def _plan_representation(ledger: BudgetLedger, config: RunConfig, num_samples: int) -> DPSGDStagePlan | None:
    """Stage 2's DP-SGD, σ derived from its cap or given (then it trains until the cap)."""
    if ledger.stages["representation"] <= 0:
        return None
    mode, sigma, schedule = representation_sigma(ledger, config.representation, num_samples)
    return _dpsgd(ledger, "representation", mode, sigma, schedule, config.representation.clip_norm, partial=True)


def _plan_decoder(ledger: BudgetLedger, config: RunConfig, num_samples: int) -> DPSGDStagePlan | None:
    """The decoder's DP-SGD when it trains on the private data; its whole plan must fit."""
    if config.decoder.training == "public" or ledger.stages["decoder"] <= 0:
        return None
    sigma, schedule = decoder_sigma(ledger, config.decoder, num_samples)
    mode = "derived" if config.decoder.noise_multiplier is None else "given"
    return _dpsgd(ledger, "decoder", mode, sigma, schedule, config.decoder.clip_norm, partial=False)


def _plan_release(ledger: BudgetLedger, config: RunConfig, num_samples: int) -> ReleasePlan | VotePlan | None:
    """The release of class statistics: the counts' Gaussian event, then the rest's (or the classes' vote)."""
    if ledger.stages[RELEASE_STAGE] <= 0:
        return None
    if config.makes_samples:
        return _plan_made_release(ledger, config)
    search = config.search
    events = CLASS_STATISTICS.events(ledger, search.release_shares[0], votes=search.class_means == "votes")
    charged = [ledger.charge(RELEASE_STAGE, event, description=f"planned: {name}").event for name, event in events]
    if search.class_means == "votes":
        counts, vote = charged
        count_std = count_noise_std(counts.noise_multiplier, ledger.neighbouring)
        return VotePlan(counts.noise_multiplier, count_std, vote.epsilon, ledger.spent(RELEASE_STAGE))
    z_count, z_rest = (event.noise_multiplier for event in charged)
    d, m = config.basis_size, search.rff_features
    unit = unit_noise(z_count, z_rest, shares=search.release_shares, dim=d, rff_features=m,
                      min_snr=search.release_min_snr, neighbouring=ledger.neighbouring)
    sizes = {"count": 1, "sum": d, "second_moment": d * (d + 1) // 2, "rff": 2 * m}
    return ReleasePlan(combined_noise_multiplier(z_count, z_rest), (z_count, z_rest), unit.stds, sizes,
                       ledger.spent(RELEASE_STAGE), unit.kept_from, unit.sum_alone)


def _plan_made_release(ledger: BudgetLedger, config: RunConfig) -> MadeReleasePlan:
    """The release a run without a public pool makes: the parts :func:`pcevolve.synthesis.release.planned_events`
    names for the declared schema (a public file; no private row is read)."""
    schema = TableSchema.load(config.data.schema_file)
    classes = len(config.data.classes or ())
    parts = release_parts(schema, config.synthesis, config.privacy.epsilon, classes)
    noise = part_noise_multipliers(ledger, parts)
    for name, event in planned_events(parts, noise):
        ledger.charge(RELEASE_STAGE, event, description=f"planned: {name.replace('_', ' ')}")
    twice = 2.0 if ledger.neighbouring == "replace_one" else 1.0
    sensitivity = {"bin_placement": lambda: histogram_sensitivity(len(parts.placed), ledger.neighbouring),
                   "marginals": lambda: histogram_sensitivity(len(schema.columns) + 1, ledger.neighbouring),
                   "gradient": lambda: twice * feature_bound(schema)}
    sensitivities = {name: sensitivity[name]() for name in noise}
    return MadeReleasePlan(noise, {name: z * sensitivities[name] for name, z in noise.items()}, sensitivities,
                           dict(parts.repeats), tuple(schema.columns[j].name for j in parts.placed),
                           ledger.spent(RELEASE_STAGE))


def _plan_verdict(ledger: BudgetLedger, config: RunConfig, num_samples: int) -> VerdictPlan | None:
    """The verdict's rounds of exponential selections as :mod:`pcevolve.privacy.selection_rounds` states them: the
    private verdict's generations, or a pool-free table's evolution (:mod:`pcevolve.synthesis.evolve`)."""
    if ledger.stages[VERDICT_STAGE] <= 0:
        return None
    made = config.makes_samples
    rounds = EVOLUTION_ROUNDS if made else VERDICT_ROUNDS
    generations = config.synthesis.generations if made else config.search.verdict_generations
    for event in rounds.events(ledger, generations):
        ledger.charge(VERDICT_STAGE, event, description="planned: evolution" if made else "planned: verdict")
    epsilon, _ = rounds.parameters(ledger.events(VERDICT_STAGE))
    return VerdictPlan(generations, epsilon, ledger.spent(VERDICT_STAGE))


#: What charges a stage plans on a ledger, for ``num_samples`` private samples: what it returns is the stage's plan
#: (``None`` when the stage pays nothing under the config).
Planner = Callable[[BudgetLedger, RunConfig, int], Any]

#: The stages that pay, in the order a run charges them (``tests/pipeline/test_stage_names.py`` holds them equal to
#: the run's paying stages), each with what it will charge: the one place a run's charges are planned.
PLANNERS: dict[str, Planner] = {"representation": _plan_representation, "decoder": _plan_decoder,
                                RELEASE_STAGE: _plan_release, VERDICT_STAGE: _plan_verdict}


def stage_caps(config: RunConfig, num_samples: int) -> dict[str, float]:
    """Per-stage ε caps ∝ ``privacy.split`` whose planned events compose to the total ε (within 0.5 %, not above).

    :func:`~pcevolve.privacy.calibration.largest_scale_within` on the common factor s between the largest power of
    ½ at or below 1 whose caps are affordable (1 — caps summing to ε — for like events) and the factor at which the
    largest cap reaches ε; the accountant's total is non-decreasing in s, and the answer is always a factor whose
    total was computed and found ≤ ε.
    """
    privacy = config.privacy
    target = privacy.epsilon

    def scaled(factor: float) -> dict[str, float]:
        return {stage: min(factor * share * target, target) for stage, share in privacy.split.items()}

    if sum(share > 0 for share in privacy.split.values()) == 1:
        return scaled(1.0)  # one paying stage: its cap is the total, and its own calibration fits it

    def excess(factor: float) -> float:
        return plan_budget(config, num_samples, caps=scaled(factor)).total.epsilon - target

    # Caps summing to ε usually compose to less (composition is sub-additive in ε at a fixed δ for like events),
    # but stages of unlike mechanisms — Gaussian releases beside exponential selections, each calibrated to its
    # cap at the whole δ — can compose to a little more: then the factor is searched below 1.
    low = 1.0
    while low > 1 / 64 and excess(low) > 0:
        low /= 2
    return scaled(largest_scale_within(excess, low, 1.0 / max(privacy.split.values()),
                                       tolerance=TOTAL_TOLERANCE * target))
