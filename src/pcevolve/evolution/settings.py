"""Validated, frozen settings of one evolutionary search: loop, operators and mutation schedule."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

from pcevolve.evolution.registry import resolve_crossover, resolve_mutation

if TYPE_CHECKING:  # the engine does not need pydantic at run time
    from pcevolve.config.search import SearchConfig


@dataclass(frozen=True)
class EvolutionSettings:
    """How the engine breeds; every field mirrors the same-named field of ``SearchConfig``.

    Attributes:
        population: Individuals per generation (>= 2).
        elite: Best individuals copied unchanged into the next generation (1..population).
        generations: Generation cap (>= 1); the engine is done after this many evaluations.
        mutation_sigma: Gaussian step as a fraction of each parameter's span, in (0, 1].
        polynomial_every: The periodic mutation round runs at generations that are
            positive multiples of this (>= 1).
        coarse_generations: Generations ``0 .. coarse_generations - 1`` form the coarse
            phase (wide bounds, ``coarse_rate``); 0 disables it.
        coarse_rate / fine_rate / converging_rate: Per-gene mutation probabilities in [0, 1].
        coarse_bound_scale: Coarse-phase bounds are the true ones widened by this (>= 1).
        diversity_threshold: Adaptive mutation starts when the population's mean
            per-parameter std over span falls below this, in (0, 1).
        patience / tolerance: Done after ``patience`` generations in a row without the
            best fitness rising by more than ``tolerance`` (>= 1, >= 0).
        mutation / crossover / periodic_mutation: Registry keys of the operators.

    Raises:
        ValueError: A field is out of range or names an unknown operator; the
            message names the field.
    """

    population: int = 32
    elite: int = 8
    generations: int = 120
    mutation_sigma: float = 0.05
    polynomial_every: int = 20
    coarse_generations: int = 30
    coarse_rate: float = 0.6
    fine_rate: float = 0.15
    converging_rate: float = 0.4
    coarse_bound_scale: float = 2.0
    diversity_threshold: float = 0.02
    patience: int = 30
    tolerance: float = 1e-4
    mutation: str = "gaussian"
    crossover: str = "interpolation"
    periodic_mutation: str = "polynomial"

    def __post_init__(self) -> None:
        for name in ("population", "elite", "generations", "polynomial_every", "coarse_generations", "patience"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an int, got {value!r}")
        _check(self.population >= 2, "population", self.population, ">= 2")
        _check(1 <= self.elite <= self.population, "elite", self.elite, f"in [1, population={self.population}]")
        _check(self.generations >= 1, "generations", self.generations, ">= 1")
        _check(self.polynomial_every >= 1, "polynomial_every", self.polynomial_every, ">= 1")
        _check(self.coarse_generations >= 0, "coarse_generations", self.coarse_generations, ">= 0")
        _check(self.patience >= 1, "patience", self.patience, ">= 1")
        _check(_finite(self.mutation_sigma) and 0 < self.mutation_sigma <= 1, "mutation_sigma", self.mutation_sigma,
               "in (0, 1]")
        for name in ("coarse_rate", "fine_rate", "converging_rate"):
            value = getattr(self, name)
            _check(_finite(value) and 0 <= value <= 1, name, value, "in [0, 1]")
        _check(_finite(self.coarse_bound_scale) and self.coarse_bound_scale >= 1, "coarse_bound_scale",
               self.coarse_bound_scale, ">= 1")
        _check(_finite(self.diversity_threshold) and 0 < self.diversity_threshold < 1, "diversity_threshold",
               self.diversity_threshold, "in (0, 1)")
        _check(_finite(self.tolerance) and self.tolerance >= 0, "tolerance", self.tolerance, ">= 0")
        for name, resolve in (("mutation", resolve_mutation), ("crossover", resolve_crossover),
                              ("periodic_mutation", resolve_mutation)):
            try:
                resolve(getattr(self, name))
            except ValueError as error:
                raise ValueError(f"{name}: {error}") from None

    @classmethod
    def from_config(cls, search: SearchConfig) -> "EvolutionSettings":
        """The settings named by a validated ``SearchConfig`` (fields with the same names)."""
        return cls(**{field.name: getattr(search, field.name) for field in fields(cls)})

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict of every field (what a checkpoint records)."""
        return asdict(self)

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> "EvolutionSettings":
        """Inverse of :meth:`to_json`; unknown keys are an error."""
        known = {field.name for field in fields(cls)}
        unknown = sorted(set(document) - known)
        if unknown:
            raise ValueError(f"unknown evolution settings: {', '.join(unknown)}")
        return cls(**document)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check(ok: bool, name: str, value: Any, rule: str) -> None:
    if not ok:
        raise ValueError(f"{name} must be {rule}, got {value!r}")
