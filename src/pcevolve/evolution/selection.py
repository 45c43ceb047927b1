"""Ranking and parent selection. Fitness is maximised; non-finite fitness ranks last."""

from __future__ import annotations

import numpy as np


def clean_fitness(fitness: np.ndarray) -> np.ndarray:
    """``fitness`` as float64 with NaN and ±inf replaced by ``-inf`` (the worst value).

    +inf is treated as invalid too: a fitness function that returns it has failed,
    and letting it win would make the search chase the failure.
    """
    values = np.asarray(fitness, dtype=np.float64)
    return np.where(np.isfinite(values), values, -np.inf)


def rank_order(fitness: np.ndarray) -> np.ndarray:
    """Indices from best to worst; ties keep index order, so the ranking is deterministic."""
    return np.argsort(-clean_fitness(fitness), kind="stable")


def tournament_select(
    order: np.ndarray, count: int, *, rng: np.random.Generator, size: int = 2
) -> np.ndarray:
    """Pick ``count`` parent indices by tournaments of ``size`` members drawn with replacement.

    Each tournament's winner is the member with the best rank in ``order`` (see
    :func:`rank_order`). Comparing ranks rather than raw fitness makes ties and
    ``-inf`` harmless and keeps the pressure independent of the fitness scale.
    """
    population = order.shape[0]
    rank = np.empty(population, dtype=np.int64)
    rank[order] = np.arange(population)
    entrants = rng.integers(0, population, size=(count, size))
    winners = np.argmin(rank[entrants], axis=1)
    return entrants[np.arange(count), winners]
