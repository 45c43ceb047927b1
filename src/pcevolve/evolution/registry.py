"""The operator registries that configs name by key (``SearchConfig.mutation`` and friends).

They live here rather than in the package ``__init__`` because settings
validation needs them and must not import the package it belongs to. To add an
operator, put it in the dict before building an :class:`~pcevolve.evolution.Evolution`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from pcevolve.evolution.crossovers import Crossover, interpolation_crossover, uniform_crossover
from pcevolve.evolution.mutations import Mutation, differential_mutation, gaussian_mutation, polynomial_mutation

MUTATIONS: dict[str, Mutation] = {
    "gaussian": gaussian_mutation,
    "polynomial": polynomial_mutation,
    "differential": differential_mutation,
}

CROSSOVERS: dict[str, Crossover] = {
    "interpolation": interpolation_crossover,
    "uniform": uniform_crossover,
}

_T = TypeVar("_T")


def _lookup(registry: Mapping[str, _T], kind: str, name: str) -> _T:
    if name not in registry:
        raise ValueError(f"unknown {kind} {name!r}; known: {', '.join(sorted(registry))}")
    return registry[name]


def resolve_mutation(name: str) -> Mutation:
    """The mutation registered as ``name``.

    Raises:
        ValueError: Unknown name; the message lists the known ones.
    """
    return _lookup(MUTATIONS, "mutation", name)


def resolve_crossover(name: str) -> Crossover:
    """The crossover registered as ``name``.

    Raises:
        ValueError: Unknown name; the message lists the known ones.
    """
    return _lookup(CROSSOVERS, "crossover", name)
