"""Calibration: the smallest noise that meets a target ε, found by root-finding on the accountant.

Rules that must never change:

* One root-finder (:func:`calibrate_noise_multiplier`) serves every mechanism; one more
  (:func:`largest_scale_within`) scales the stages' shares of ε until their events compose to the total.
* It returns only a value it has evaluated and found within the target, so the
  result never overshoots the target ε — whatever the shape of the function.
  Bisection then makes it the smallest such value up to ``rel_tol``, provided
  ε decreases as the noise grows (true of every mechanism here).
* The function it inverts is the accountant itself (``accounting.account``), so
  the ledger later computes exactly the ε the calibration saw.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pcevolve.privacy.accounting import DEFAULT_PLD_DISCRETIZATION, account
from pcevolve.privacy.events import (
    ExponentialSelection,
    GaussianRelease,
    LaplaceRelease,
    Neighbouring,
    PrivacyEvent,
    SubsampledGaussianSteps,
)

if TYPE_CHECKING:
    from pcevolve.config import DecoderConfig, RepresentationConfig
    from pcevolve.privacy.ledger import BudgetLedger

AccountantChoice = Literal["reported", "pld", "rdp"]


class CalibrationError(ValueError):
    """No noise level in the search range meets the target."""


def calibrate_noise_multiplier(
    epsilon_of: Callable[[float], float],
    target_epsilon: float,
    *,
    lower: float = 1e-3,
    upper: float = 1e6,
    start: float = 1.0,
    rel_tol: float = 1e-4,
) -> float:
    """Smallest noise multiplier ``z`` in ``[lower, upper]`` with ``epsilon_of(z) <= target_epsilon``.

    Args:
        epsilon_of: ε as a function of the noise multiplier (non-increasing).
        target_epsilon: The ε not to exceed.
        lower: Smallest noise multiplier considered (returned if it already meets the target).
        upper: Largest noise multiplier considered.
        start: Where the search begins (a guess; any value in range works).
        rel_tol: Stop when the bracket ``[lo, hi]`` satisfies ``hi / lo <= 1 + rel_tol``.

    Returns:
        A value ``hi`` for which ``epsilon_of(hi) <= target_epsilon`` was evaluated, with
        ``epsilon_of(lo) > target_epsilon`` evaluated for some ``lo >= hi / (1 + rel_tol)``
        (unless ``hi == lower``).

    Raises:
        CalibrationError: even ``upper`` does not meet the target.
    """
    if not (target_epsilon > 0 and math.isfinite(target_epsilon)):
        raise ValueError(f"target_epsilon must be positive and finite, got {target_epsilon!r}")
    if not (0 < lower < upper) or not math.isfinite(upper):
        raise ValueError(f"need 0 < lower < upper < inf, got lower={lower!r}, upper={upper!r}")
    if not rel_tol > 0:
        raise ValueError(f"rel_tol must be positive, got {rel_tol!r}")
    # Bracket outwards from ``start``: small noise makes some accountants slow (wide PLDs), so
    # evaluate below ``start`` only as far as needed.
    hi = min(max(start, lower), upper)
    if epsilon_of(hi) <= target_epsilon:
        lo = hi
        while True:
            if lo <= lower:
                return lower
            lo = max(lo / 2.0, lower)
            if epsilon_of(lo) > target_epsilon:
                break
            hi = lo
    else:
        lo = hi
        while True:
            if lo >= upper:
                raise CalibrationError(f"even noise multiplier {upper:g} gives ε above the target {target_epsilon:g}")
            hi = min(2.0 * lo, upper)
            if epsilon_of(hi) <= target_epsilon:
                break
            lo = hi
    # Invariant: epsilon_of(lo) > target >= epsilon_of(hi), both evaluated.
    while hi / lo > 1.0 + rel_tol:
        mid = math.sqrt(lo * hi)
        if epsilon_of(mid) <= target_epsilon:
            hi = mid
        else:
            lo = mid
    return hi


def largest_scale_within(excess: Callable[[float], float], low: float, high: float, *, tolerance: float) -> float:
    """The largest factor ``s`` in ``[low, high]`` found with ``excess(s) <= 0``, where ``excess`` is non-decreasing
    and ``excess(low) <= 0``: the stages' ε shares scaled until their planned events compose to the total.

    Regula falsi (Illinois variant), stopped once ``excess(low) >= -tolerance`` or after 30 steps. Like
    :func:`calibrate_noise_multiplier`, it returns only a factor whose excess was evaluated and found ``<= 0``.
    """
    f_low, f_high = excess(low), excess(high)
    if f_high <= 0:
        return high
    side = 0
    for _ in range(30):
        if f_low >= -tolerance:
            break
        middle = high - f_high * (high - low) / (f_high - f_low)
        if not low < middle < high:
            middle = 0.5 * (low + high)
        f_middle = excess(middle)
        if f_middle <= 0:
            low, f_low = middle, f_middle
            if side == -1:
                f_high *= 0.5  # Illinois: keep the stale end from stalling the interpolation
            side = -1
        else:
            high, f_high = middle, f_middle
            if side == 1:
                f_low *= 0.5
            side = 1
    return low


def _epsilon_function(
    make_event: Callable[[float], PrivacyEvent],
    *,
    delta: float,
    neighbouring: Neighbouring,
    accountant: AccountantChoice,
    pld_discretization: float,
) -> Callable[[float], float]:
    def epsilon_of(noise_multiplier: float) -> float:
        result = account([make_event(noise_multiplier)], delta=delta, neighbouring=neighbouring,
                         pld_discretization=pld_discretization)
        if accountant == "reported":
            return result.epsilon
        if accountant == "pld":
            return result.pld_bound
        if result.rdp_epsilon is None:
            raise CalibrationError(f"the RDP accountant cannot account for this event under {neighbouring!r}")
        return result.rdp_epsilon

    if accountant not in ("reported", "pld", "rdp"):
        raise ValueError(f"accountant must be 'reported', 'pld' or 'rdp', got {accountant!r}")
    return epsilon_of


def gaussian_noise_multiplier(
    target_epsilon: float,
    delta: float,
    *,
    count: int = 1,
    neighbouring: Neighbouring = "add_remove",
    accountant: AccountantChoice = "reported",
    pld_discretization: float = DEFAULT_PLD_DISCRETIZATION,
) -> float:
    """Noise multiplier (std / L2 sensitivity) so that ``count`` Gaussian releases meet (ε, δ)."""
    epsilon_of = _epsilon_function(lambda z: GaussianRelease(z, count), delta=delta, neighbouring=neighbouring,
                                   accountant=accountant, pld_discretization=pld_discretization)
    return calibrate_noise_multiplier(epsilon_of, target_epsilon)


def exponential_selection_epsilon(
    target_epsilon: float,
    delta: float,
    *,
    count: int,
    neighbouring: Neighbouring = "add_remove",
    pld_discretization: float = DEFAULT_PLD_DISCRETIZATION,
) -> float:
    """Largest per-selection ε such that ``count`` exponential-mechanism selections meet (ε, δ) together."""
    # Calibrated as a "noise multiplier" z = 1/ε, which makes ε(z) non-increasing as the search expects.
    epsilon_of = _epsilon_function(lambda z: ExponentialSelection(1.0 / z, count), delta=delta,
                                   neighbouring=neighbouring, accountant="reported",
                                   pld_discretization=pld_discretization)
    return 1.0 / calibrate_noise_multiplier(epsilon_of, target_epsilon)


def laplace_noise_multiplier(
    target_epsilon: float,
    delta: float,
    *,
    count: int = 1,
    neighbouring: Neighbouring = "add_remove",
    accountant: AccountantChoice = "reported",
    pld_discretization: float = DEFAULT_PLD_DISCRETIZATION,
) -> float:
    """Noise multiplier (scale / L1 sensitivity) so that ``count`` Laplace releases meet (ε, δ)."""
    epsilon_of = _epsilon_function(lambda b: LaplaceRelease(b, count), delta=delta, neighbouring=neighbouring,
                                   accountant=accountant, pld_discretization=pld_discretization)
    return calibrate_noise_multiplier(epsilon_of, target_epsilon)


def dpsgd_schedule(num_samples: int, batch_size: int, epochs: int) -> tuple[float, int]:
    """DP-SGD sampling rate and step count: ``q = batch / n``, ``steps = ceil(epochs · n / batch)``."""
    if num_samples < 1 or batch_size < 1 or epochs < 1:
        raise ValueError(f"need n, batch and epochs >= 1, got {num_samples}, {batch_size}, {epochs}")
    if batch_size > num_samples:
        raise ValueError(f"batch size {batch_size} exceeds the number of samples {num_samples}")
    return batch_size / num_samples, math.ceil(epochs * num_samples / batch_size)


@dataclass(frozen=True)
class DPSGDPlan:
    """The public schedule of a DP-SGD stage (n is treated as public, docs/privacy.md §2).

    Attributes:
        sampling_probability: Poisson rate q = min(batch, n) / n.
        steps: ⌈epochs · n / batch⌉ steps in all.
        steps_per_epoch: ⌈n / batch⌉; each epoch is charged before it runs.
    """

    sampling_probability: float
    steps: int
    steps_per_epoch: int


def dpsgd_plan(num_samples: int, batch_size: int, epochs: int) -> DPSGDPlan:
    """The schedule every DP-SGD stage of a run follows, and ``pcevolve budget plan`` prints."""
    batch = min(batch_size, num_samples)
    q, steps = dpsgd_schedule(num_samples, batch, epochs)
    return DPSGDPlan(q, steps, math.ceil(num_samples / batch))


def stage_dpsgd_noise_multiplier(ledger: BudgetLedger, stage: str, *, sampling_probability: float,
                                 steps: int) -> float:
    """Smallest σ whose ``steps`` steps, composed with what ``stage`` already spent, fit the stage cap.

    The ε is the ledger's own accountant (same δ, relation and discretisation), so the
    ledger accepts the steps this σ was calibrated for.
    """
    return _stage_noise_multiplier(ledger, stage, lambda sigma: SubsampledGaussianSteps(sampling_probability, sigma,
                                                                                        steps), lower=0.05)


def dpsgd_stage_sigma(ledger: BudgetLedger, stage: str, *, num_samples: int, batch_size: int, epochs: int,
                      noise_multiplier: float | None) -> tuple[Literal["derived", "given"], float, DPSGDPlan]:
    """σ and schedule of a DP-SGD stage — the one rule of every such stage (the encoder's, the decoder's), called by
    a run and by ``pcevolve budget plan`` alike, so the σ a plan prints is the σ the run uses.

    The config's σ when it gives one (``"given"``: the stage trains until its cap), else the smallest σ whose planned
    steps, composed with what the stage spent, fit its cap (``"derived"``). A stage with nothing left to spend gets
    σ = 1: there is nothing to calibrate against, and its first charge is refused.
    """
    plan = dpsgd_plan(num_samples, batch_size, epochs)
    if noise_multiplier is not None:
        return "given", float(noise_multiplier), plan
    if ledger.remaining(stage) <= 0.0:
        return "derived", 1.0, plan
    return "derived", stage_dpsgd_noise_multiplier(ledger, stage, sampling_probability=plan.sampling_probability,
                                                   steps=plan.steps), plan


def representation_sigma(ledger: BudgetLedger, config: RepresentationConfig, num_samples: int, *,
                         stage: str = "representation") -> tuple[Literal["derived", "given"], float, DPSGDPlan]:
    """σ of the encoder's DP fine-tuning, how it was chosen and the schedule: :func:`dpsgd_stage_sigma` with
    ``representation``'s settings (the run's stage and ``pcevolve budget plan`` both call this)."""
    return dpsgd_stage_sigma(ledger, stage, num_samples=num_samples, batch_size=config.batch_size,
                             epochs=config.epochs, noise_multiplier=config.noise_multiplier)


def decoder_sigma(ledger: BudgetLedger, config: DecoderConfig, num_samples: int) -> tuple[float, DPSGDPlan]:
    """σ and schedule of the decoder's DP-SGD: :func:`dpsgd_stage_sigma` with ``decoder``'s settings."""
    _, sigma, plan = dpsgd_stage_sigma(ledger, "decoder", num_samples=num_samples, batch_size=config.dp_batch_size,
                                       epochs=config.dp_epochs, noise_multiplier=config.noise_multiplier)
    return sigma, plan


def stage_gaussian_noise_multiplier(ledger: BudgetLedger, stage: str,
                                    planned: Sequence[PrivacyEvent] = ()) -> float:
    """Smallest noise multiplier of one Gaussian release that, composed with what ``stage`` already spent (and
    the ``planned`` events that will be charged before it), fits the stage cap — by the ledger's own accountant
    (same δ, relation and discretisation), so the ledger accepts it.

    ``planned`` lets a two-event release calibrate its second event before its first charge, so nothing slow
    sits between a charge and the saving of what it paid for.

    Raises:
        ValueError: the stage has nothing left to spend.
    """
    cap = ledger.stages[stage]
    if cap <= 0 or ledger.spent(stage) >= cap:
        raise ValueError(f"stage {stage!r} has no budget left to calibrate a release against")
    return _stage_noise_multiplier(ledger, stage, GaussianRelease, planned=planned)


def stage_selection_epsilon(ledger: BudgetLedger, stage: str, *, count: int) -> float:
    """Largest ε of each of ``count`` exponential selections that, composed with what ``stage`` already spent, fit
    the stage cap — by the ledger's own accountant, so the ledger accepts all ``count`` of them.

    Raises:
        ValueError: the stage has nothing left to spend.
    """
    cap = ledger.stages[stage]
    if cap <= 0 or ledger.spent(stage) >= cap:
        raise ValueError(f"stage {stage!r} has no budget left to calibrate a selection against")
    # Calibrated as a "noise multiplier" z = 1/ε, which makes ε(z) non-increasing as the search expects.
    return 1.0 / _stage_noise_multiplier(ledger, stage, lambda z: ExponentialSelection(1.0 / z, count),
                                         lower=1e-2)


def _stage_noise_multiplier(ledger: BudgetLedger, stage: str, event_of: Callable[[float], PrivacyEvent],
                            planned: Sequence[PrivacyEvent] = (), **bounds: float) -> float:
    """Smallest noise multiplier z whose ``event_of(z)``, composed with the stage's earlier (and ``planned``)
    events by the ledger's own accountant, fits the stage cap."""
    earlier = (*ledger.events(stage), *planned)

    def epsilon_of(z: float) -> float:
        return account((*earlier, event_of(z)), delta=ledger.delta, neighbouring=ledger.neighbouring,
                       pld_discretization=ledger.pld_discretization).epsilon

    return calibrate_noise_multiplier(epsilon_of, ledger.stages[stage], **bounds)


def dpsgd_noise_multiplier(
    target_epsilon: float,
    delta: float,
    *,
    sampling_probability: float,
    steps: int,
    neighbouring: Neighbouring = "add_remove",
    accountant: AccountantChoice = "reported",
    pld_discretization: float = DEFAULT_PLD_DISCRETIZATION,
) -> float:
    """DP-SGD noise multiplier σ so that ``steps`` Poisson-subsampled steps at rate q meet (ε, δ).

    ``accountant="reported"`` calibrates against the bound the ledger reports (the
    smaller of PLD and RDP), so the ledger accepts the resulting steps.
    """
    epsilon_of = _epsilon_function(
        lambda s: SubsampledGaussianSteps(sampling_probability, s, steps), delta=delta,
        neighbouring=neighbouring, accountant=accountant, pld_discretization=pld_discretization,
    )
    return calibrate_noise_multiplier(epsilon_of, target_epsilon, lower=0.05)


def affordable_steps(
    ledger: BudgetLedger,
    stage: str,
    *,
    sampling_probability: float,
    noise_multiplier: float,
    max_steps: int,
) -> int:
    """How many more DP-SGD steps at (q, σ) the ledger would accept for ``stage`` (0 to ``max_steps``).

    For the "σ given, stop when the stage budget is spent" mode: charge what this
    returns (one event) before training those steps.
    """
    if max_steps < 1:
        return 0

    def fits(steps: int) -> bool:
        return ledger.can_afford(stage, SubsampledGaussianSteps(sampling_probability, noise_multiplier, steps))

    if not fits(1):
        return 0
    lo, hi = 1, max_steps  # fits(lo) is known true
    if fits(hi):
        return hi
    while hi - lo > 1:  # invariant: fits(lo) and not fits(hi)
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo


def delta_advice(delta: float, num_samples: int) -> str | None:
    """A warning when δ is not well below 1/n (shown on the console only: n is private).

    δ is the probability that the ε guarantee fails; a mechanism that publishes one random private sample
    outright is (0, 1/n)-DP, so a δ near 1/n permits exactly that kind of leak.
    """
    if delta * num_samples < 0.1:
        return None
    return (f"privacy.delta = {delta:g} is not far below 1 / {num_samples} (one over the number of private "
            f"samples): a guarantee that may fail with that probability would allow publishing about "
            f"{delta * num_samples:.2g} private samples outright; set privacy.delta below {0.1 / num_samples:.1g}")
