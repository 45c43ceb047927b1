"""What a run will spend, computed by the very functions the run calls (``pcevolve budget plan``).

:func:`plan_budget` replays a run's charges on a fresh, file-less ledger: stage 2's σ from
:func:`~pcevolve.encoders.training.representation_sigma`, the decoder's from
:func:`~pcevolve.decoders.dp.decoder_sigma`, the release's from
:func:`~pcevolve.search.release.release_mechanism`, in the run's order and with its events. So the
σ it reports is the σ a run records, and its total is the accountant's composition of exactly the
events the run will charge (when every stage spends its plan). It reads no data: n, the number
of private samples, is a public input (docs/privacy.md §2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pcevolve.config import RunConfig
from pcevolve.decoders.dp import decoder_sigma
from pcevolve.encoders.training import representation_sigma
from pcevolve.privacy import BudgetLedger, PrivacyAccount, SubsampledGaussianSteps, affordable_steps
from pcevolve.privacy.calibration import DPSGDPlan
from pcevolve.privacy.statistics import RandomFourierFeatures
from pcevolve.search.release import STAGE as RELEASE_STAGE
from pcevolve.search.release import release_mechanism


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
    """The one Gaussian release of class statistics."""

    noise_multiplier: float
    noise_stds: dict[str, float]  # per component, in units of C, C², 1 (see component_bounds)
    sizes: dict[str, int]  # released numbers per class and component
    epsilon: float


@dataclass(frozen=True)
class BudgetPlan:
    """Every stage's noise and ε, and the accountant's total over all of them."""

    representation: DPSGDStagePlan | None
    decoder: DPSGDStagePlan | None
    release: ReleasePlan | None
    total: PrivacyAccount
    ledger: BudgetLedger


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


def plan_budget(config: RunConfig, num_samples: int) -> BudgetPlan:
    """The noise and ε of every DP stage of ``config`` for ``num_samples`` private samples.

    Raises:
        ValueError: ``num_samples`` < 1.
    """
    if num_samples < 1:
        raise ValueError(f"the number of private samples must be at least 1, got {num_samples}")
    privacy = config.privacy
    ledger = BudgetLedger(privacy.epsilon, privacy.delta, dict(privacy.stages), neighbouring=privacy.neighbouring,
                          reproducible_noise=privacy.reproducible_noise)
    representation = decoder = release = None
    if ledger.stages["representation"] > 0:
        mode, sigma, schedule = representation_sigma(ledger, config.representation, num_samples)
        representation = _dpsgd(ledger, "representation", mode, sigma, schedule, config.representation.clip_norm,
                                partial=True)
    if config.decoder.training != "public" and ledger.stages["decoder"] > 0:
        sigma, schedule = decoder_sigma(ledger, config.decoder, num_samples)
        mode = "derived" if config.decoder.noise_multiplier is None else "given"
        decoder = _dpsgd(ledger, "decoder", mode, sigma, schedule, config.decoder.clip_norm, partial=False)
    if ledger.stages[RELEASE_STAGE] > 0:
        search = config.search
        d, m = search.basis_dim, search.rff_features
        # The frequencies do not change the noise; the run draws its own from the public "rff" stream.
        rff = RandomFourierFeatures(frequencies=np.zeros((m, d)), bandwidth=1.0)
        mechanism = release_mechanism(ledger, num_classes=1, clip_norm=1.0, rff=rff, shares=search.release_shares)
        ledger.charge(RELEASE_STAGE, mechanism.event, description="planned")
        sizes = {"count": 1, "sum": d, "second_moment": d * (d + 1) // 2, "rff": 2 * m}
        release = ReleasePlan(mechanism.noise_multiplier, mechanism.noise_stds(), sizes, ledger.spent(RELEASE_STAGE))
    return BudgetPlan(representation, decoder, release, ledger.account(), ledger)
