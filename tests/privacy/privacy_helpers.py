"""Shared helpers of the privacy tests (imported by name, like tests/data/data_helpers.py)."""

from __future__ import annotations

import numpy as np

from pcevolve.privacy import BudgetLedger, NoiseSource
from pcevolve.privacy.noise import GeneratorNoise

SEED_STAGES = {"representation": 3.0, "release": 5.0, "decoder": 0.0, "delivery": 0.0}


class ZeroNoise(NoiseSource):
    """Draws no randomness: a release through it returns the exact statistic (tests only)."""

    def uniform(self, size):
        return np.full(size, 0.5)

    def normal(self, scale, size):
        return np.zeros(size)

    def laplace(self, scale, size):
        return np.zeros(size)


class ScaledNoise(NoiseSource):
    """A deliberately broken noise source: every draw is ``factor`` times what was asked for."""

    def __init__(self, inner: NoiseSource, factor: float) -> None:
        self.inner, self.factor = inner, factor

    def uniform(self, size):
        return self.inner.uniform(size)

    def normal(self, scale, size):
        return self.inner.normal(scale * self.factor, size)

    def laplace(self, scale, size):
        return self.inner.laplace(scale * self.factor, size)


def roomy_ledger(neighbouring: str = "add_remove") -> BudgetLedger:
    """A throw-away ledger with a budget no test release can exhaust."""
    return BudgetLedger(1e9, 1e-5, {"test": 1e9}, neighbouring=neighbouring, reproducible_noise=True)


def seeded(seed: int = 0) -> GeneratorNoise:
    return GeneratorNoise(np.random.default_rng(seed))


class LockedPrivate(np.ndarray):
    """A private array that fails the test when read while ``locked`` (i.e. outside the mechanism under test).

    Make one with ``array.view(LockedPrivate)``; :func:`unlocking` wraps the function the mechanism reads it in.
    """

    locked = True

    def __getitem__(self, key):
        if LockedPrivate.locked:
            raise AssertionError("private data was read outside the mechanism")
        return np.asarray(self.view(np.ndarray))[key]

    def __array__(self, *args, **kwargs):
        if LockedPrivate.locked:
            raise AssertionError("private data was read outside the mechanism")
        return self.view(np.ndarray)


def unlocking(function):
    """``function`` with :class:`LockedPrivate` arrays readable while it runs (and locked again after)."""

    def wrapper(*args, **kwargs):
        LockedPrivate.locked = False
        try:
            return function(*args, **kwargs)
        finally:
            LockedPrivate.locked = True

    return wrapper
