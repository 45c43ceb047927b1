"""The operator registries that configs name by key (``SearchConfig.mutation`` and friends).

The config checks names against :mod:`pcevolve.catalog.search`, which lists the same keys as plain data
(``tests/test_part_catalogs.py`` holds the two equal). To add an operator, put it in the dict before building an
:class:`~pcevolve.evolution.Evolution`, and its name in the catalogue.
"""

from __future__ import annotations

from pcevolve.evolution.crossovers import Crossover, interpolation_crossover, uniform_crossover
from pcevolve.evolution.mutations import Mutation, differential_mutation, gaussian_mutation, polynomial_mutation
from pcevolve.registry import Registry

MUTATIONS: Registry[Mutation] = Registry("mutation", {
    "gaussian": gaussian_mutation,
    "polynomial": polynomial_mutation,
    "differential": differential_mutation,
})

CROSSOVERS: Registry[Crossover] = Registry("crossover", {
    "interpolation": interpolation_crossover,
    "uniform": uniform_crossover,
})


def resolve_mutation(name: str) -> Mutation:
    """The mutation registered as ``name``.

    Raises:
        ValueError: Unknown name; the message lists the known ones.
    """
    return MUTATIONS.get_part(name)


def resolve_crossover(name: str) -> Crossover:
    """The crossover registered as ``name``.

    Raises:
        ValueError: Unknown name; the message lists the known ones.
    """
    return CROSSOVERS.get_part(name)
