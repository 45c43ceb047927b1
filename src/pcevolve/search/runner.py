"""The search loop with a checkpoint every generation, so a killed run resumes where it stopped.

Per generation: ask the engine for the population, score every individual
(:class:`~pcevolve.search.problem.SearchProblem`), tell the engine, append one ``generation``
record, then save the engine's checkpoint (npz + JSON, atomic). The record is written *before*
the checkpoint, so a run killed between the two recomputes that generation on resume and
writes the same record again (the computation is deterministic); readers keep the last record
of each generation (:func:`generation_records`). Every few generations the best individual is
round-tripped for real and the surrogate refitted (:mod:`pcevolve.search.roundtrip`); the pairs
are saved per generation before the checkpoint, so a resume refits the same surrogate.

Generation 0 is seeded with the baseline individual (the released Gaussians), so the search can
only keep or improve on it as judged by the DP fitness.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.evolution import Evolution, EvolutionSettings
from pcevolve.executors import Executor, LocalExecutor
from pcevolve.fitness import FitnessBreakdown, dp_gaussian_predict
from pcevolve.progress import progress_bar
from pcevolve.search.problem import SearchProblem
from pcevolve.search.roundtrip import SurrogateData

CHECKPOINT = "checkpoint"
SURROGATE_DATA = "roundtrips.npz"
CHECK_STREAM = 0xC4EC  # seeds the check draws apart from every other stream of the run


#: Decimals of the fitness terms in a generation record. The terms are post-processing of the release (the attack
#: term too: it compares candidates with the released statistics, never with a private sample), but the records ship
#: with the run, and one rule serves every shipped file: no figure named like an attack, member or distance one
#: carries more than three decimals. Three show every move that matters (a term's step is hundredths); the totals the
#: search ranks by (``best``, ``mean``) stay exact.
TERM_DECIMALS = 3


def _shown(terms: Mapping[str, float]) -> dict[str, float]:
    return {name: round(float(value), TERM_DECIMALS) for name, value in terms.items()}


def _mean_terms(breakdowns: list) -> dict[str, float]:
    names = breakdowns[0].terms
    return _shown({name: float(np.mean([b.terms[name] for b in breakdowns])) for name in names})


@dataclass(frozen=True)
class SearchOutcome:
    """The finished engine and the problem as it stood at the end (its surrogate refitted on the checks)."""

    engine: Evolution
    problem: SearchProblem


@dataclass(frozen=True)
class SearchResult:
    """The search's product: its best individuals, best first, with their DP fitness (the one-shot start alone
    when the evolution is off), the start's fitness and the generations run."""

    vectors: np.ndarray
    fitness: np.ndarray
    baseline_fitness: float
    generations: int


def evaluate_chunk(problem: SearchProblem, population: np.ndarray) -> list[FitnessBreakdown]:
    """The breakdowns of a chunk of the population (what an executor runs, wherever it runs)."""
    return problem.evaluate_population(population)


def run_search(problem: SearchProblem, settings: EvolutionSettings, *, seed: int, folder: Path,
               record: Callable[[dict[str, Any]], None],
               round_trip: Callable[[np.ndarray], np.ndarray] | None = None,
               surrogate_data: SurrogateData | None = None, check_every: int = 10, check_per_class: int = 16,
               progress: bool = False, executor: Executor | None = None) -> SearchOutcome:
    """Run (or resume) the search whose checkpoint lives in ``folder``.

    Args:
        problem: The fitness (its surrogate is replaced as checks come in).
        settings: Engine settings.
        seed: The engine's seed (also seeds the check draws).
        folder: Checkpoint folder; an existing checkpoint is resumed.
        record: Receives one dict per generation (best/mean fitness, the best's terms, the
            population's mean terms, the engine's summary, and ``roundtrip`` when checked).
        round_trip: Real decode → re-encode of coordinates. With it, every ``check_every``
            generations and on the last one, ``check_per_class`` fresh samples per class of the
            generation's best are round-tripped for real; the record gets the surrogate's R² on them
            and the real vs predicted consistency, and the pairs refit the surrogate.
        surrogate_data: The surrogate's training pairs (required with ``round_trip``).
        progress: Show a progress bar over generations.
        executor: Where each generation is scored (:meth:`~pcevolve.executors.Executor.map_chunks`); local
            without one.
    """
    executor = executor if executor is not None else LocalExecutor()
    if round_trip is not None and surrogate_data is None:
        raise ValueError("real round-trip checks need the surrogate's training data")
    bounds = problem.space.bounds()
    data_path = folder / SURROGATE_DATA
    if (folder / CHECKPOINT).exists():
        search = Evolution.load(folder / CHECKPOINT, settings, bounds)
        if surrogate_data is not None and data_path.exists():
            surrogate_data = SurrogateData.load(data_path).before(search.generation)
            problem = replace(problem, surrogate=surrogate_data.fit())
    else:
        search = Evolution(settings, bounds, seed=seed, initial=problem.space.baseline()[None, :])
    # settings.generations is a most: the search stops once it has not improved for `patience` generations.
    bar = progress_bar(settings.generations, "search", "gen", enabled=progress, initial=search.generation,
                       total_is_limit=True)
    try:
        while not search.done:
            population = search.ask()
            breakdowns = executor.map_chunks(evaluate_chunk, problem, population)  # local or a cluster
            totals = np.array([b.total for b in breakdowns])
            summary = search.tell(totals)
            best_index = int(np.nanargmax(np.where(np.isfinite(totals), totals, -np.inf)))
            entry: dict[str, Any] = {"generation": summary.generation, "best": float(totals[best_index]),
                                     "mean": float(np.nanmean(totals)), "terms": _shown(breakdowns[best_index].terms),
                                     "mean_terms": _mean_terms(breakdowns), "engine": summary.to_json()}
            if round_trip is not None and (summary.generation % check_every == 0 or search.done):
                assert surrogate_data is not None
                draws = problem.space.noise(check_per_class,
                                            np.random.default_rng([seed, CHECK_STREAM, summary.generation]))
                z, labels = problem.space.sample(population[best_index], draws)
                actual = round_trip(z)
                entry["roundtrip"] = _check_record(problem, z, labels, actual)
                surrogate_data = surrogate_data.with_check(summary.generation, z, actual)
                surrogate_data.save(data_path)  # before the checkpoint: a resume refits from generations < its own
                problem = replace(problem, surrogate=surrogate_data.fit())
            record(entry)
            search.save(folder / CHECKPOINT)
            bar.update(1)
            if summary.best_so_far is not None:
                bar.set_postfix(best=f"{summary.best_so_far:.4f}")
    finally:
        bar.close()
    return SearchOutcome(engine=search, problem=problem)


def _check_record(problem: SearchProblem, z: np.ndarray, labels: np.ndarray, actual: np.ndarray) -> dict[str, Any]:
    """How the surrogate did on fresh real round trips (before it is refitted on them)."""
    out: dict[str, Any] = {"samples": int(len(z)),
                           "consistency_real": float(np.mean(dp_gaussian_predict(actual, problem.targets) == labels))}
    if problem.surrogate is not None:
        predicted = problem.surrogate.predict(z)
        out["surrogate_r2"] = problem.surrogate.agreement(z, actual)
        out["consistency_surrogate"] = float(np.mean(dp_gaussian_predict(predicted, problem.targets) == labels))
    return out


def generation_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last record of each generation, in generation order (a resumed run may repeat one)."""
    latest: dict[int, dict[str, Any]] = {}
    for entry in records:
        latest[int(entry["generation"])] = entry
    return [latest[g] for g in sorted(latest)]


def rank_final(problem: SearchProblem, search: Evolution, top: int) -> list[tuple[np.ndarray, float]]:
    """The ``top`` distinct individuals of the final population and the best ever, by DP fitness only."""
    candidates = [search.best[0], *search.ask()]
    seen: set[bytes] = set()
    scored = []
    for vector in candidates:
        key = np.asarray(vector, dtype=np.float64).tobytes()
        if key in seen:
            continue
        seen.add(key)
        scored.append((np.asarray(vector, dtype=np.float64), problem.evaluate(vector).total))
    scored.sort(key=lambda item: -item[1])
    return scored[:top]
