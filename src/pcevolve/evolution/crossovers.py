"""Crossover operators: one child per pair of parents, pure functions of arrays and a generator.

Every crossover has the signature of :class:`Crossover`: parents ``a`` and ``b`` of
shape ``(n, D)`` give ``n`` children inside ``bounds``. As with mutations, the draws
depend only on the shapes, so a run is reproducible from its seed.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from pcevolve.evolution.bounds import Bounds


class Crossover(Protocol):
    """Signature shared by every crossover operator in :data:`pcevolve.evolution.CROSSOVERS`."""

    def __call__(self, a: np.ndarray, b: np.ndarray, *, rng: np.random.Generator, bounds: Bounds) -> np.ndarray: ...


def interpolation_crossover(a: np.ndarray, b: np.ndarray, *, rng: np.random.Generator, bounds: Bounds) -> np.ndarray:
    """``child = a + u * (b - a)`` with one ``u ~ U(0, 1)`` per child (not per gene).

    One ``u`` per child keeps every child on the segment between its parents,
    i.e. it blends whole candidate solutions rather than mixing coordinates.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    u = rng.random((a.shape[0], 1))
    # The clip only removes rounding: a convex blend of in-bounds parents is in bounds.
    return bounds.clip(a + u * (b - a))


def uniform_crossover(a: np.ndarray, b: np.ndarray, *, rng: np.random.Generator, bounds: Bounds) -> np.ndarray:
    """Each gene of a child comes from ``a`` or ``b`` with probability 1/2 (clipped into ``bounds``)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    take_a = rng.random(a.shape) < 0.5
    return bounds.clip(np.where(take_a, a, b))
