"""Accounting: from a list of privacy events to one (ε, δ) guarantee, using Google's ``dp_accounting``.

Pure functions, no state. The ledger calls :func:`account` on every charge.

Rules that must never change:

* Every ε comes from ``dp_accounting``: its privacy-loss-distribution (PLD) code
  and its RDP accountant. Nothing here adds ε values by hand, except the basic
  composition of pure-DP events described below, which is a theorem, not an
  estimate.
* Two sound bounds are computed for the same events at the same δ:

  - **RDP** over all events (``RdpAccountant``). An exponential-mechanism
    selection at ε enters as ``ZCDpEvent(ρ = ε²/8)`` (bounded range ⇒ zCDP).
  - **PLD** over every event PLD can model (Gaussian, Laplace, subsampled
    Gaussian), **plus** the basic composition (plain sum) of the pure ε of the
    exponential-mechanism selections, which PLD cannot model: (ε₁, δ) composed
    with (ε₂, 0) is (ε₁ + ε₂, δ).

  The reported ε is the smaller of the two and :class:`PrivacyAccount` says
  which one it is (``"pld"``, ``"pld+basic"`` or ``"rdp"``).
* No mechanism is ever modelled as an event it is not (in particular nothing
  non-Laplace becomes a Laplace event).
* The PLD is discretised pessimistically (``dp_accounting``'s default), so its ε
  is an upper bound at any discretisation interval; a coarser interval is only
  less tight. The default here (1e-3) keeps a ledger charge quick (docs/performance.md, "Smaller choices").

Why the PLD is composed from ``dp_accounting.pld.privacy_loss_distribution``
directly instead of through ``PLDAccountant``: ``PLDAccountant`` takes one
neighbouring relation for all events and, under ``REPLACE_ONE``, reads a
Gaussian event's sensitivity as the per-record bound (doubling it) and refuses
Laplace events, while ``RdpAccountant`` reads the same event with no doubling.
pcevolve states every non-subsampled event's noise relative to the sensitivity
*under the ledger's relation*; for such events the privacy loss is that of two
noise distributions shifted by exactly that sensitivity, which is what the
library's add/remove construction computes for either relation. Only subsampled
Gaussian (DP-SGD) events need the relation itself, and they get it. The PLD
functions called are the ones ``PLDAccountant`` calls; a test checks that both
give the same ε for add/remove histories.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import dp_accounting
import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.rdp import rdp_privacy_accountant

from pcevolve.privacy.events import (
    ExponentialSelection,
    GaussianRelease,
    LaplaceRelease,
    Neighbouring,
    PostProcessing,
    PrivacyEvent,
    SubsampledGaussianSteps,
    check_neighbouring,
    event_to_json,
)

logger = logging.getLogger(__name__)

DEFAULT_PLD_DISCRETIZATION = 1e-3
"""PLD value discretisation interval. Pessimistic, so always sound; 1e-3 is much faster than 1e-4 (docs/performance.md,
"Smaller choices") and changes the DP-SGD ε of the seed setting in the fourth decimal."""

MAX_PLD_DISCRETIZATION = 0.1
"""The coarsest PLD interval a ledger accepts."""

DISCRETIZATION_GROWS_FROM = 10.0
"""Total ε above which a ledger's interval grows with ε (:func:`pld_discretization_for`)."""


def pld_discretization_for(total_epsilon: float) -> float:
    """The PLD interval of a ledger with this total ε: the default up to ε = 10, then in proportion to ε, at most
    0.1 (the coarsest a ledger takes; reached at ε = 1,000, which only a ledger built in code can have).

    The smaller a Gaussian's noise, the wider its privacy-loss range, and the PLD's size and cost grow with it
    (at ε = 100 the default made planning a run slow: docs/performance.md, "Smaller choices"). Growing the
    interval with ε keeps the PLD's size near that of ε = 10. Pessimistic discretisation is sound at any interval;
    at ε = 100 (interval 0.01) two composed Gaussians' ε moves in the seventh significant digit. Depends on the
    configured total only (public), never on data.
    """
    return min(MAX_PLD_DISCRETIZATION,
               DEFAULT_PLD_DISCRETIZATION * max(1.0, float(total_epsilon) / DISCRETIZATION_GROWS_FROM))

Bound = Literal["pld", "pld+basic", "rdp"]

_RELATION = {
    "add_remove": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
    "replace_one": dp_accounting.NeighboringRelation.REPLACE_ONE,
}


@dataclass(frozen=True)
class PrivacyAccount:
    """The accountant's verdict on a set of events at one δ.

    Attributes:
        epsilon: The reported ε: ``min(pld_bound, rdp_epsilon)``.
        delta: The δ all numbers are computed at.
        bound: Which bound ``epsilon`` is: ``"pld"`` (PLD, no pure-DP events),
            ``"pld+basic"`` (PLD plus basic composition of pure-DP events) or ``"rdp"``.
        pld_epsilon: ε of the PLD over the events it can model (0 if none).
        pure_epsilon: Sum of the pure ε of exponential-mechanism selections.
        rdp_epsilon: ε of the RDP accountant over all events, or ``None`` where RDP
            cannot account for an event (Poisson-subsampled Gaussian under replace-one).
    """

    epsilon: float
    delta: float
    bound: Bound
    pld_epsilon: float
    pure_epsilon: float
    rdp_epsilon: float | None

    @property
    def pld_bound(self) -> float:
        """ε of the PLD-based bound: ``pld_epsilon + pure_epsilon``."""
        return self.pld_epsilon + self.pure_epsilon


def account(
    events: Iterable[PrivacyEvent],
    *,
    delta: float,
    neighbouring: Neighbouring = "add_remove",
    pld_discretization: float = DEFAULT_PLD_DISCRETIZATION,
) -> PrivacyAccount:
    """Compose ``events`` and return the (ε, δ) guarantee at ``delta``.

    The result depends only on the multiset of mechanisms, not on how the history
    was split: events that differ only in their repetition count are merged first.

    Args:
        events: Events to compose (any order).
        delta: Target δ, in (0, 1).
        neighbouring: The relation the events' sensitivities refer to.
        pld_discretization: PLD discretisation interval (pessimistic).

    Returns:
        The composed guarantee.
    """
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    if not (0.0 < pld_discretization <= MAX_PLD_DISCRETIZATION):
        raise ValueError(f"pld_discretization must be in (0, {MAX_PLD_DISCRETIZATION:g}], got {pld_discretization!r}")
    check_neighbouring(neighbouring)
    return _account_groups(canonical_groups(events), float(delta), neighbouring, float(pld_discretization))


def canonical_groups(events: Iterable[PrivacyEvent]) -> tuple[PrivacyEvent, ...]:
    """Merge events that differ only in repetition count, drop post-processing, sort canonically."""
    counts: dict[PrivacyEvent, int] = {}
    for event in events:
        if not isinstance(event, PrivacyEvent):
            raise TypeError(f"not a pcevolve privacy event: {event!r}")
        if isinstance(event, PostProcessing):
            continue
        base = event.with_repetitions(1)
        counts[base] = counts.get(base, 0) + event.repetitions
    groups = [base.with_repetitions(count) for base, count in counts.items()]
    return tuple(sorted(groups, key=lambda e: repr(sorted(event_to_json(e).items()))))


def pld_delta(
    events: Iterable[PrivacyEvent],
    *,
    epsilon: float,
    neighbouring: Neighbouring = "add_remove",
    pld_discretization: float = DEFAULT_PLD_DISCRETIZATION,
) -> float:
    """δ(ε) of the PLD of ``events``; refuses events the PLD cannot model (exponential selections)."""
    groups = canonical_groups(events)
    if any(isinstance(e, ExponentialSelection) for e in groups):
        raise ValueError("the PLD cannot model exponential-mechanism selections; use account() instead")
    check_neighbouring(neighbouring)
    return float(_compose_pld(groups, neighbouring, float(pld_discretization)).get_delta_for_epsilon(epsilon))


def to_rdp_event(event: PrivacyEvent) -> dp_accounting.DpEvent:
    """The ``dp_accounting`` event an RDP accountant with ADD_OR_REMOVE_ONE should compose for ``event``.

    Non-subsampled events are stated relative to the sensitivity under the
    ledger's relation, so the add/remove accountant is exact for them under
    either relation. Subsampled events are handled in :func:`_rdp_epsilon`.
    """
    if isinstance(event, GaussianRelease):
        base: dp_accounting.DpEvent = dp_accounting.GaussianDpEvent(event.noise_multiplier)
    elif isinstance(event, LaplaceRelease):
        base = dp_accounting.LaplaceDpEvent(event.noise_multiplier)
    elif isinstance(event, ExponentialSelection):
        # ε-DP exponential mechanism is ε-bounded-range, hence (ε²/8)-zCDP (Cesar & Rogers 2021, Lemma 3.2).
        base = dp_accounting.ZCDpEvent(rho=event.epsilon**2 / 8.0)
    elif isinstance(event, SubsampledGaussianSteps):
        base = dp_accounting.PoissonSampledDpEvent(
            event.sampling_probability, dp_accounting.GaussianDpEvent(event.noise_multiplier)
        )
    elif isinstance(event, PostProcessing):
        return dp_accounting.NoOpDpEvent()
    else:
        raise TypeError(f"no accounting rule for {event!r}")
    count = event.repetitions
    return base if count == 1 else dp_accounting.SelfComposedDpEvent(base, count)


@functools.lru_cache(maxsize=2048)
def _account_groups(
    groups: tuple[PrivacyEvent, ...], delta: float, neighbouring: Neighbouring, discretization: float
) -> PrivacyAccount:
    pure = math.fsum(e.epsilon * e.count for e in groups if isinstance(e, ExponentialSelection))
    pld_events = tuple(e for e in groups if not isinstance(e, ExponentialSelection))
    pld_eps = float(_compose_pld(pld_events, neighbouring, discretization).get_epsilon_for_delta(delta))
    rdp_eps = _rdp_epsilon(groups, delta, neighbouring)
    pld_bound = pld_eps + pure
    if rdp_eps is not None and rdp_eps < pld_bound:
        epsilon, bound = rdp_eps, "rdp"
    else:
        epsilon, bound = pld_bound, ("pld+basic" if pure > 0 else "pld")
    return PrivacyAccount(
        epsilon=float(epsilon),
        delta=delta,
        bound=bound,  # type: ignore[arg-type]
        pld_epsilon=pld_eps,
        pure_epsilon=pure,
        rdp_epsilon=rdp_eps,
    )


def _compose_pld(
    groups: tuple[PrivacyEvent, ...], neighbouring: Neighbouring, discretization: float
) -> pld_lib.PrivacyLossDistribution:
    total = pld_lib.identity(value_discretization_interval=discretization)
    for event in groups:
        total = total.compose(_event_pld(event, neighbouring, discretization))
    return total


@functools.lru_cache(maxsize=64)  # a composed PLD can take megabytes; the ledger reuses only the latest few
def _event_pld(
    event: PrivacyEvent, neighbouring: Neighbouring, discretization: float
) -> pld_lib.PrivacyLossDistribution:
    count = event.repetitions
    single = _single_pld(event.with_repetitions(1), neighbouring, discretization)
    return single if count == 1 else single.self_compose(count)


@functools.lru_cache(maxsize=128)
def _single_pld(
    event: PrivacyEvent, neighbouring: Neighbouring, discretization: float
) -> pld_lib.PrivacyLossDistribution:
    if isinstance(event, GaussianRelease):
        # Shift by exactly one sensitivity, noise std = noise_multiplier: the relation-independent pair.
        return pld_lib.from_gaussian_mechanism(
            standard_deviation=event.noise_multiplier, sensitivity=1.0,
            value_discretization_interval=discretization,
        )
    if isinstance(event, LaplaceRelease):
        return pld_lib.from_laplace_mechanism(
            parameter=event.noise_multiplier, sensitivity=1.0, value_discretization_interval=discretization
        )
    if isinstance(event, SubsampledGaussianSteps):
        # Per-record contribution at most 1 (in units of C); the library's model of the relation applies.
        return pld_lib.from_gaussian_mechanism(
            standard_deviation=event.noise_multiplier, sensitivity=1.0,
            value_discretization_interval=discretization,
            sampling_prob=event.sampling_probability,
            neighboring_relation=_RELATION[neighbouring],
        )
    raise TypeError(f"the PLD has no model for {event!r}")


def _rdp_epsilon(groups: tuple[PrivacyEvent, ...], delta: float, neighbouring: Neighbouring) -> float | None:
    if neighbouring == "replace_one" and any(isinstance(e, SubsampledGaussianSteps) for e in groups):
        # dp_accounting's RDP analysis of Poisson subsampling is for add/remove only; no RDP bound here.
        return None
    orders = np.asarray(rdp_privacy_accountant.DEFAULT_RDP_ORDERS, dtype=np.float64)
    total = np.zeros_like(orders)
    for event in groups:
        # RDP composes additively and linearly in the repetition count (as RdpAccountant does), so the
        # per-application curve is computed once per mechanism and cached.
        total = total + event.repetitions * _single_rdp(event.with_repetitions(1))
    epsilon, _ = rdp_privacy_accountant.compute_epsilon(orders, total, delta)
    return float(epsilon)


@functools.lru_cache(maxsize=512)
def _single_rdp(event: PrivacyEvent) -> np.ndarray:
    accountant = rdp_privacy_accountant.RdpAccountant(
        orders=rdp_privacy_accountant.DEFAULT_RDP_ORDERS,
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
    )
    # dp_accounting warns when a fractional order fails to converge and then leaves that order out
    # (still sound: fewer orders, a looser bound). Keep the warning out of user output, scoped to this call.
    absl_logger = logging.getLogger("absl")
    quiet = _ConvergenceNotice()
    absl_logger.addFilter(quiet)
    try:
        accountant.compose(to_rdp_event(event))
    finally:
        absl_logger.removeFilter(quiet)
    if quiet.dropped:
        logger.debug("RDP: %d orders left out for %r (no convergence)", quiet.dropped, event)
    curve = accountant.rdp
    curve.setflags(write=False)
    return curve


class _ConvergenceNotice(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self.dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if "failed to converge" in record.getMessage():
            self.dropped += 1
            return False
        return True
