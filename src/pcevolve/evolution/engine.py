"""The ask/tell evolutionary search engine: deterministic, checkpointable.

Rules that must not change:

* The engine knows nothing about what a vector means: the caller asks for a
  population, evaluates it and tells the fitness back. Higher fitness is better;
  NaN and ±inf rank worst and never stop the search.
* All randomness comes from one ``numpy.random.Generator`` (PCG64) seeded at
  construction and saved in every checkpoint; the global random state is never
  touched. The same settings, bounds, seed and fitness give the same run, and a
  run resumed from a checkpoint is bit-identical to one that never stopped.
* The best individual is never lost: the top ``elite`` are copied unchanged into
  the next generation (only clipped in when the coarse phase ends), and
  :attr:`Evolution.best` holds the best vector ever evaluated.

One generation ``g``: its population lies in the bounds of its phase (the true
bounds widened by ``coarse_bound_scale`` while ``g < coarse_generations``, the
true bounds after). :meth:`Evolution.tell` ranks it, records a
:class:`GenerationSummary`, and unless the search is done breeds generation
``g + 1``: elites, then children from binary-tournament parents, crossover, the
main mutation at the phase's rate (``converging_rate`` instead when diversity is
under the threshold and that is faster), and at positive multiples of
``polynomial_every`` the periodic mutation in addition to the main one.
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.evolution.bounds import Bounds
from pcevolve.evolution.checkpoint import (
    CheckpointError,
    generator_from_json,
    generator_state_to_json,
    load_state,
    save_state,
)
from pcevolve.evolution.registry import resolve_crossover, resolve_mutation
from pcevolve.evolution.selection import clean_fitness, rank_order, tournament_select
from pcevolve.evolution.settings import EvolutionSettings
from pcevolve.evolution.summary import GenerationSummary, Phase

logger = logging.getLogger(__name__)

STATE_FORMAT = "pcevolve.evolution/1"


class Evolution:
    """A deterministic, resumable ask/tell evolutionary search over a box of real vectors.

    Typical use::

        search = Evolution(settings, bounds, seed=run_seed)
        while not search.done:
            search.tell(evaluate(search.ask()))
            search.save(checkpoint_folder)
        vector, fitness = search.best

    Args:
        settings: How to breed (validated).
        bounds: The true search box; the coarse phase widens it.
        seed: Seeds the engine's own PCG64 generator (a non-negative int).
        initial: Optional ``(k, D)`` (or ``(D,)``) individuals placed first in
            generation 0, ``k <= population``, clipped into the generation-0
            bounds; the remaining rows are drawn uniformly in those bounds.

    Raises:
        ValueError: Bad seed, or ``initial`` of the wrong shape, too many rows, or not finite.
    """

    def __init__(
        self,
        settings: EvolutionSettings,
        bounds: Bounds,
        *,
        seed: int,
        initial: np.ndarray | None = None,
    ) -> None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {seed!r}")
        self._configure(settings, bounds)
        self._seed = int(seed)
        self._rng = np.random.Generator(np.random.PCG64(self._seed))
        self._generation = 0
        self._population = self._initial_population(initial)
        self._best_vector: np.ndarray | None = None
        self._best_fitness = -math.inf
        self._reference = -math.inf  # best fitness at the last generation that counted as an improvement
        self._stale = 0  # generations in a row without such an improvement
        self._history: list[GenerationSummary] = []

    def _configure(self, settings: EvolutionSettings, bounds: Bounds) -> None:
        if not isinstance(settings, EvolutionSettings):
            raise TypeError(f"settings must be EvolutionSettings, got {type(settings).__name__}")
        if not isinstance(bounds, Bounds):
            raise TypeError(f"bounds must be Bounds, got {type(bounds).__name__}")
        self._settings = settings
        self._bounds = bounds
        self._coarse_bounds = bounds.widened(settings.coarse_bound_scale)
        self._mutation = resolve_mutation(settings.mutation)
        self._periodic_mutation = resolve_mutation(settings.periodic_mutation)
        self._crossover = resolve_crossover(settings.crossover)

    def _initial_population(self, initial: np.ndarray | None) -> np.ndarray:
        size, dim = self._settings.population, self._bounds.dim
        box = self.phase_bounds(0)
        seeded = np.empty((0, dim))
        if initial is not None:
            seeded = np.atleast_2d(np.asarray(initial, dtype=np.float64))
            if seeded.ndim != 2 or seeded.shape[1] != dim:
                raise ValueError(f"initial must have shape (k, {dim}), got {np.shape(initial)}")
            if seeded.shape[0] > size:
                raise ValueError(f"initial has {seeded.shape[0]} rows, more than the population ({size})")
            if not np.all(np.isfinite(seeded)):
                raise ValueError("initial individuals must be finite")
            seeded = box.clip(seeded)
        drawn = box.lower + self._rng.random((size - seeded.shape[0], dim)) * box.span
        return np.vstack([seeded, box.clip(drawn)])

    # -- schedule -----------------------------------------------------------------------------------

    def phase(self, generation: int) -> Phase:
        """``"coarse"`` for generations before ``coarse_generations``, else ``"fine"``."""
        return "coarse" if generation < self._settings.coarse_generations else "fine"

    def phase_bounds(self, generation: int) -> Bounds:
        """The box generation ``generation`` lives in: widened while coarse, the true one after."""
        return self._coarse_bounds if self.phase(generation) == "coarse" else self._bounds

    def scheduled_rate(self, generation: int) -> float:
        """The phase's mutation rate for breeding from ``generation`` (before adaptation)."""
        settings = self._settings
        return settings.coarse_rate if self.phase(generation) == "coarse" else settings.fine_rate

    def is_periodic(self, generation: int) -> bool:
        """Whether breeding from ``generation`` adds the periodic round (positive multiples only)."""
        return generation > 0 and generation % self._settings.polynomial_every == 0

    def diversity(self, population: np.ndarray) -> float:
        """Mean over parameters of the population's std divided by the true span."""
        return float(np.mean(np.std(population, axis=0) / self._bounds.span))

    # -- ask / tell ---------------------------------------------------------------------------------

    def ask(self) -> np.ndarray:
        """A copy of the current ``(population, D)`` generation to evaluate (the same until :meth:`tell`).

        Once the search is done nothing more is bred, so this is the last generation
        evaluated (the final population), and :meth:`tell` refuses further fitness.
        """
        return self._population.copy()

    def tell(self, fitness: np.ndarray) -> GenerationSummary:
        """Record the fitness of the generation :meth:`ask` returned and breed the next one.

        Args:
            fitness: ``(population,)`` values, higher is better; NaN/±inf rank worst.

        Returns:
            The summary of the generation just evaluated (also appended to :attr:`history`).

        Raises:
            RuntimeError: The search is done.
            ValueError: ``fitness`` has the wrong shape.
        """
        if self.done:
            raise RuntimeError("the search is done; no generation is waiting for fitness")
        settings = self._settings
        values = np.asarray(fitness, dtype=np.float64)
        if values.shape != (settings.population,):
            raise ValueError(f"fitness must have shape ({settings.population},), got {values.shape}")
        cleaned = clean_fitness(values)
        finite = cleaned[np.isfinite(cleaned)]
        if finite.size < cleaned.size:
            logger.warning("generation %d: %d non-finite fitness values ranked worst",
                           self._generation, cleaned.size - finite.size)
        order = rank_order(cleaned)
        generation = self._generation

        top = float(cleaned[order[0]])
        if self._best_vector is None or top > self._best_fitness:
            self._best_vector = self._population[order[0]].copy()
            self._best_fitness = top
        improved = self._best_fitness > self._reference + settings.tolerance
        if improved:
            self._reference = self._best_fitness
            self._stale = 0
        else:
            self._stale += 1

        diversity = self.diversity(self._population)
        adaptive = diversity < settings.diversity_threshold
        rate = self.scheduled_rate(generation)
        if adaptive:
            # Adaptive mutation "speeds up when converging": never slower than the phase's own rate.
            rate = max(rate, settings.converging_rate)
        periodic = self.is_periodic(generation)

        self._generation = generation + 1
        bred = not self.done
        if bred:
            self._population = self._breed(order, generation=generation, rate=rate, periodic=periodic)
        summary = GenerationSummary(
            generation=generation,
            phase=self.phase(generation),
            best_fitness=_finite_or_none(np.max(finite)) if finite.size else None,
            mean_fitness=_finite_or_none(np.mean(finite)) if finite.size else None,
            std_fitness=_finite_or_none(np.std(finite)) if finite.size else None,
            best_so_far=_finite_or_none(self._best_fitness),
            invalid=int(cleaned.size - finite.size),
            diversity=diversity,
            mutation_rate=float(rate) if bred else None,
            periodic=periodic and bred,
            adaptive=bool(adaptive),
            improved=bool(improved),
        )
        self._history.append(summary)
        return summary

    def _breed(self, order: np.ndarray, *, generation: int, rate: float, periodic: bool) -> np.ndarray:
        """Generation ``generation + 1`` from the ranked generation ``generation``."""
        settings, rng = self._settings, self._rng
        parents_pool = self._population
        step_box = self.phase_bounds(generation)  # operators (and sigma's span) work in the parents' phase box
        next_box = self.phase_bounds(generation + 1)  # the bred generation must lie in its own phase's box
        elites = next_box.clip(parents_pool[order[: settings.elite]])
        count = settings.population - settings.elite
        if count == 0:
            return elites
        picks = tournament_select(order, 2 * count, rng=rng)
        children = self._crossover(parents_pool[picks[:count]], parents_pool[picks[count:]], rng=rng, bounds=step_box)
        children = self._mutation(children, rng=rng, bounds=step_box, rate=rate, sigma=settings.mutation_sigma,
                                  population=parents_pool)
        if periodic:
            children = self._periodic_mutation(children, rng=rng, bounds=step_box, rate=rate,
                                               sigma=settings.mutation_sigma, population=parents_pool)
        return np.vstack([elites, next_box.clip(children)])

    # -- read-only state ----------------------------------------------------------------------------

    @property
    def settings(self) -> EvolutionSettings:
        """The settings the engine breeds by."""
        return self._settings

    @property
    def bounds(self) -> Bounds:
        """The true search box."""
        return self._bounds

    @property
    def generation(self) -> int:
        """How many generations have been evaluated (= index of the population :meth:`ask` returns)."""
        return self._generation

    @property
    def done(self) -> bool:
        """True after ``generations`` evaluations, or ``patience`` in a row without an improvement > ``tolerance``."""
        return self._generation >= self._settings.generations or self._stale >= self._settings.patience

    @property
    def best(self) -> tuple[np.ndarray, float]:
        """A copy of the best vector ever evaluated and its fitness (``-inf`` if none was finite).

        A vector found in the coarse phase may lie outside the true bounds (inside
        the widened ones); clip it with :attr:`bounds` if that matters to the caller.

        Raises:
            RuntimeError: Nothing has been evaluated yet.
        """
        if self._best_vector is None:
            raise RuntimeError("no generation has been evaluated yet")
        return self._best_vector.copy(), float(self._best_fitness)

    @property
    def history(self) -> tuple[GenerationSummary, ...]:
        """One summary per evaluated generation, oldest first."""
        return tuple(self._history)

    # -- checkpoints --------------------------------------------------------------------------------

    def state_dict(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Everything needed to resume: ``(arrays, meta)``.

        ``arrays`` are numeric (``np.savez``-able without pickle); ``meta`` is JSON-able
        without NaN and holds the exact generator state (big integers as strings),
        the settings and the history.
        """
        dim = self._bounds.dim
        arrays = {
            "population": self._population.copy(),
            "best_vector": np.empty((0, dim)) if self._best_vector is None else self._best_vector[None, :].copy(),
            "bounds_lower": self._bounds.lower.copy(),
            "bounds_upper": self._bounds.upper.copy(),
        }
        meta = {
            "format": STATE_FORMAT,
            "seed": str(self._seed),
            "generation": self._generation,
            "settings": self._settings.to_json(),
            "best_fitness": _finite_or_none(self._best_fitness),
            "reference_fitness": _finite_or_none(self._reference),
            "stale": self._stale,
            "rng": generator_state_to_json(self._rng),
            "history": [summary.to_json() for summary in self._history],
        }
        return arrays, meta

    @classmethod
    def from_state_dict(
        cls, settings: EvolutionSettings, bounds: Bounds, arrays: dict[str, np.ndarray], meta: dict[str, Any]
    ) -> "Evolution":
        """Rebuild the engine :meth:`state_dict` described, continuing exactly where it stopped.

        Raises:
            CheckpointError: Unknown format, missing pieces, or settings/bounds that
                differ from the saved ones (the message names the differing fields).
        """
        if meta.get("format") != STATE_FORMAT:
            raise CheckpointError(f"unsupported evolution state format {meta.get('format')!r}")
        saved = meta.get("settings", {})
        differing = sorted(k for k, v in settings.to_json().items() if saved.get(k) != v)
        if differing:
            raise CheckpointError(f"settings differ from the checkpoint's: {', '.join(differing)}")
        try:
            saved_bounds = Bounds(arrays["bounds_lower"], arrays["bounds_upper"])
            population = np.asarray(arrays["population"], dtype=np.float64)
            best_vector = np.asarray(arrays["best_vector"], dtype=np.float64)
        except (KeyError, ValueError) as error:
            raise CheckpointError(f"bad evolution arrays: {error}") from None
        if saved_bounds != bounds:
            raise CheckpointError("bounds differ from the checkpoint's")
        if population.shape != (settings.population, bounds.dim) or best_vector.shape[0] > 1:
            raise CheckpointError(f"arrays have the wrong shapes: population {population.shape}, "
                                  f"best {best_vector.shape}")
        engine = cls.__new__(cls)
        engine._configure(settings, bounds)
        try:
            engine._seed = int(meta["seed"])
            engine._rng = generator_from_json(meta["rng"])
            engine._generation = int(meta["generation"])
            engine._population = population.copy()
            engine._best_vector = best_vector[0].copy() if best_vector.shape[0] else None
            engine._best_fitness = _none_to_worst(meta["best_fitness"])
            engine._reference = _none_to_worst(meta["reference_fitness"])
            engine._stale = int(meta["stale"])
            engine._history = [GenerationSummary.from_json(item) for item in meta["history"]]
        except (KeyError, TypeError, ValueError) as error:
            if isinstance(error, CheckpointError):
                raise
            raise CheckpointError(f"bad evolution state: {error!r}") from None
        if len(engine._history) != engine._generation:
            raise CheckpointError(f"history has {len(engine._history)} entries for generation {engine._generation}")
        return engine

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write a checkpoint into ``folder`` atomically (see :mod:`pcevolve.evolution.checkpoint`).

        Returns:
            The path of the checkpoint's JSON file.
        """
        arrays, meta = self.state_dict()
        return save_state(folder, arrays, meta)

    @classmethod
    def load(cls, folder: str | os.PathLike[str], settings: EvolutionSettings, bounds: Bounds) -> "Evolution":
        """Resume from a checkpoint that :meth:`save` wrote into ``folder``.

        Raises:
            CheckpointError: Missing or damaged checkpoint, or different settings/bounds.
        """
        arrays, meta = load_state(folder)
        return cls.from_state_dict(settings, bounds, arrays, meta)


def _finite_or_none(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _none_to_worst(value: float | None) -> float:
    return -math.inf if value is None else float(value)
