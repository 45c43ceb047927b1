"""Mutation operators: pure functions of arrays, an explicit generator and the bounds.

Every mutation has the signature of :class:`Mutation`: it takes the rows to mutate
(shape ``(n, D)``) and returns a new ``(n, D)`` array inside ``bounds``; the input is
never modified. ``rate`` is the per-gene probability that a gene is changed and
``sigma`` a step size as a fraction of each parameter's span (operators that have
their own step rule ignore it). ``population`` is the evaluated generation the rows
were bred from, for operators that draw on other members (differential).

The random draws an operator makes depend only on the array shapes, never on the
values, so a run is reproducible from its seed alone.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from pcevolve.evolution.bounds import Bounds

DEFAULT_POLYNOMIAL_ETA = 20.0  # Deb & Agrawal's usual distribution index: small, local steps
DEFAULT_DIFFERENTIAL_SCALE = 0.5  # DE's usual F


class Mutation(Protocol):
    """Signature shared by every mutation operator in :data:`pcevolve.evolution.MUTATIONS`."""

    def __call__(
        self,
        individuals: np.ndarray,
        *,
        rng: np.random.Generator,
        bounds: Bounds,
        rate: float,
        sigma: float,
        population: np.ndarray,
    ) -> np.ndarray: ...


def gaussian_mutation(
    individuals: np.ndarray,
    *,
    rng: np.random.Generator,
    bounds: Bounds,
    rate: float,
    sigma: float,
    population: np.ndarray | None = None,
) -> np.ndarray:
    """Add ``N(0, (sigma * span_j)^2)`` to each gene with probability ``rate``, then clip into ``bounds``.

    About ``rate * D`` genes per row change; each step has standard deviation
    ``sigma`` times the parameter's span (before clipping). ``population`` is unused.
    """
    x = np.asarray(individuals, dtype=np.float64)
    mask = rng.random(x.shape) < rate
    noise = rng.standard_normal(x.shape) * (sigma * bounds.span)
    return bounds.clip(np.where(mask, x + noise, x))


def polynomial_mutation(
    individuals: np.ndarray,
    *,
    rng: np.random.Generator,
    bounds: Bounds,
    rate: float,
    sigma: float | None = None,
    population: np.ndarray | None = None,
    eta: float = DEFAULT_POLYNOMIAL_ETA,
) -> np.ndarray:
    """Deb's bounded polynomial mutation (as in NSGA-II), each gene with probability ``rate``.

    The perturbation follows a polynomial distribution with index ``eta``: the
    larger ``eta``, the more the steps concentrate near zero. The bounded form
    scales the step by the distance to the nearer edge, so results stay inside
    ``bounds`` by construction (rows are clipped in first, and once more against
    rounding). ``sigma`` and ``population`` are unused; to use another ``eta``,
    register ``functools.partial(polynomial_mutation, eta=...)`` under a new name.

    Raises:
        ValueError: ``eta`` is negative or not finite.
    """
    if not np.isfinite(eta) or eta < 0:
        raise ValueError(f"polynomial mutation needs a finite eta >= 0, got {eta}")
    x = bounds.clip(individuals)
    mask = rng.random(x.shape) < rate
    u = rng.random(x.shape)
    span = bounds.span
    delta_low = (x - bounds.lower) / span
    delta_high = (bounds.upper - x) / span
    power = 1.0 / (eta + 1.0)
    low_side = u < 0.5
    # Deb's formulas for the two halves of u; each keeps the child between its edge and the parent.
    with np.errstate(invalid="ignore"):
        val_low = 2.0 * u + (1.0 - 2.0 * u) * (1.0 - delta_low) ** (eta + 1.0)
        val_high = 2.0 * (1.0 - u) + 2.0 * (u - 0.5) * (1.0 - delta_high) ** (eta + 1.0)
        delta_q = np.where(low_side, val_low**power - 1.0, 1.0 - val_high**power)
    return bounds.clip(np.where(mask, x + delta_q * span, x))


def differential_mutation(
    individuals: np.ndarray,
    *,
    rng: np.random.Generator,
    bounds: Bounds,
    rate: float,
    sigma: float | None = None,
    population: np.ndarray,
    scale: float = DEFAULT_DIFFERENTIAL_SCALE,
) -> np.ndarray:
    """DE/rand/1 with binomial crossover, drawing donors from ``population``.

    For each row, three distinct members ``r1, r2, r3`` of ``population`` give the
    mutant ``p[r1] + scale * (p[r2] - p[r3])``; each gene of the row is replaced by
    the mutant's with probability ``rate``, and (as in classic DE) one randomly
    chosen gene always is, so every row moves. Donors are drawn with replacement
    only when the population has fewer than three members. Results are clipped
    into ``bounds``. ``sigma`` is unused.

    Raises:
        ValueError: ``population`` is empty or its width differs from the rows'.
    """
    x = np.asarray(individuals, dtype=np.float64)
    pool = np.asarray(population, dtype=np.float64)
    if pool.ndim != 2 or pool.shape[0] == 0 or pool.shape[1] != x.shape[1]:
        raise ValueError(f"differential mutation needs a (P, {x.shape[1]}) population, got {pool.shape}")
    n, dim = x.shape
    size = pool.shape[0]
    if size >= 3:
        # Per row, the first three of a random permutation: three distinct donors.
        donors = np.argsort(rng.random((n, size)), axis=1)[:, :3]
    else:
        donors = rng.integers(0, size, size=(n, 3))
    mutant = pool[donors[:, 0]] + scale * (pool[donors[:, 1]] - pool[donors[:, 2]])
    mask = rng.random(x.shape) < rate
    forced = rng.integers(0, dim, size=n)
    mask[np.arange(n), forced] = True
    return bounds.clip(np.where(mask, mutant, x))
