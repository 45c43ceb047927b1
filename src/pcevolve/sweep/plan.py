"""Which runs a sweep makes, and what they spend together, decided before any of them starts.

Every member is the base config with another ``privacy.epsilon`` (and its own name): the same data, settings and
seed. What they spend together is the accountant's composition of every event each member will charge, as
:func:`~pcevolve.pipeline.plan.plan_budget` plans them (the very functions a run calls), at the members' δ. That
depends on the config and n only, both public (n is treated as public, as in a single run: docs/privacy.md §2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pcevolve.config import ConfigError, RunConfig, check_budget, with_settings
from pcevolve.pipeline.plan import BudgetPlan, plan_budget
from pcevolve.privacy import PrivacyAccount, account, pld_discretization_for


class SweepPlanError(ValueError):
    """The ε values or the cap cannot make a sweep; the message says why (nothing was read or written)."""


@dataclass(frozen=True)
class Terms:
    """How the caller names a sweep's arguments in its messages: the command line's flags, or the Python API's
    parameters (an API user is never told to pass a flag)."""

    epsilons: str = "--epsilons"
    out: str = "--out"
    max_epsilon: str = "--max-epsilon"


#: The command line's names, and the Python API's (``Synthesizer.sweep``).
CLI_TERMS, API_TERMS = Terms(), Terms(epsilons="epsilons", out="out", max_epsilon="max_epsilon")


def member_name(epsilon: float) -> str:
    """The folder name of the member at ``epsilon`` (``eps-0.5``, ``eps-8``)."""
    return f"eps-{epsilon:g}"


@dataclass(frozen=True)
class SweepPlan:
    """The members of a sweep and the composition of their planned events.

    Attributes:
        members: One config per ε, ascending.
        plans: Each member's budget plan (its events in ``events``).
        total: The accountant's composition of every planned event of every member at δ.
        pld_discretization: The interval ``total`` was composed at; the sweep's ledger uses the same one.
        num_samples: n, the number of private samples the plans assume.
    """

    members: tuple[RunConfig, ...]
    plans: tuple[BudgetPlan, ...]
    total: PrivacyAccount
    pld_discretization: float
    num_samples: int

    @property
    def epsilons(self) -> tuple[float, ...]:
        return tuple(member.privacy.epsilon for member in self.members)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(member.name for member in self.members)


def check_epsilons(epsilons: Sequence[float], *, source: str = "--epsilons") -> tuple[float, ...]:
    """The sweep's ε values, ascending, each checked as ``privacy.epsilon`` would be.

    Raises:
        SweepPlanError: None given, a value that is not a valid budget, or two values with the same folder name.
    """
    values = []
    for value in epsilons:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise SweepPlanError(f"{source}: every ε must be a finite number, got {value!r}")
        try:
            check_budget(float(value), source=source)
        except ConfigError as error:
            raise SweepPlanError(str(error)) from None
        values.append(float(value))
    if not values:
        raise SweepPlanError(f"{source}: give at least one ε, e.g. {source} 1 2 4 8")
    names = [member_name(value) for value in values]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise SweepPlanError(f"{source}: each ε must differ from the others; repeated: {', '.join(repeated)}")
    return tuple(sorted(values))


def member_configs(config: RunConfig, epsilons: Sequence[float], terms: Terms = CLI_TERMS) -> tuple[RunConfig, ...]:
    """The base config at each ε of ``epsilons`` (checked by :func:`check_epsilons`), named by :func:`member_name`."""
    return tuple(with_settings(config, {"name": member_name(epsilon), "privacy.epsilon": epsilon},
                               source=terms.epsilons) for epsilon in check_epsilons(epsilons, source=terms.epsilons))


def plan_sweep(config: RunConfig, epsilons: Sequence[float], num_samples: int, terms: Terms = CLI_TERMS) -> SweepPlan:
    """The members at ``epsilons`` and what they spend together for ``num_samples`` private samples.

    The composition is computed at a PLD interval that depends on the ε values only (their sum, an upper bound on
    the total), so the sweep's ledger, made with the same interval, composes the same events to the same total.
    """
    members = member_configs(config, epsilons, terms)
    plans = tuple(plan_budget(member, num_samples) for member in members)
    discretization = pld_discretization_for(sum(member.privacy.epsilon for member in members))
    privacy = config.privacy
    total = account([event for plan in plans for event in plan.events], delta=privacy.delta,
                    neighbouring=privacy.neighbouring, pld_discretization=discretization)
    return SweepPlan(members=members, plans=plans, total=total, pld_discretization=discretization,
                     num_samples=num_samples)
