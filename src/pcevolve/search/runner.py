"""The search loop with a checkpoint every generation (SPEC R4.3, R4.6).

Per generation: ask the engine for the population, score every individual
(:class:`~pcevolve.search.problem.SearchProblem`), tell the engine, append one ``generation``
record, then save the engine's checkpoint (npz + JSON, atomic). The record is written *before*
the checkpoint, so a run killed between the two recomputes that generation on resume and
writes the same record again (the computation is deterministic); readers keep the last record
of each generation (:func:`generation_records`).

Generation 0 is seeded with the baseline individual (the released Gaussians), so the search can
only keep or improve on it as judged by the DP fitness.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from pcevolve.evolution import Evolution, EvolutionSettings
from pcevolve.search.problem import SearchProblem

CHECKPOINT = "checkpoint"


def _mean_terms(breakdowns: list) -> dict[str, float]:
    names = breakdowns[0].terms
    return {name: float(np.mean([b.terms[name] for b in breakdowns])) for name in names}


def run_search(problem: SearchProblem, settings: EvolutionSettings, *, seed: int, folder: Path,
               record: Callable[[dict[str, Any]], None],
               check: Callable[[np.ndarray], dict[str, Any]] | None = None, check_every: int = 10,
               progress: bool = False) -> Evolution:
    """Run (or resume) the search whose checkpoint lives in ``folder``; returns the finished engine.

    Args:
        problem: The fitness.
        settings: Engine settings.
        seed: The engine's seed.
        folder: Checkpoint folder; an existing checkpoint is resumed.
        record: Receives one dict per generation (best/mean fitness, the best's terms, the
            population's mean terms, the engine's summary, and ``roundtrip`` when checked).
        check: Called with the generation's best vector every ``check_every`` generations and on
            the last one (the real decode → re-encode check); its dict is added to the record.
        progress: Show a progress bar over generations.
    """
    bounds = problem.space.bounds()
    if (folder / CHECKPOINT).exists():
        search = Evolution.load(folder / CHECKPOINT, settings, bounds)
    else:
        search = Evolution(settings, bounds, seed=seed, initial=problem.space.baseline()[None, :])
    bar = tqdm(total=settings.generations, initial=search.generation, desc="search", unit="gen",
               disable=not progress, leave=False)
    try:
        while not search.done:
            population = search.ask()
            breakdowns = problem.evaluate_population(population)
            totals = np.array([b.total for b in breakdowns])
            summary = search.tell(totals)
            best_index = int(np.nanargmax(np.where(np.isfinite(totals), totals, -np.inf)))
            entry: dict[str, Any] = {"generation": summary.generation, "best": float(totals[best_index]),
                                     "mean": float(np.nanmean(totals)), "terms": dict(breakdowns[best_index].terms),
                                     "mean_terms": _mean_terms(breakdowns), "engine": summary.to_json()}
            if check is not None and (summary.generation % check_every == 0 or search.done):
                entry["roundtrip"] = check(population[best_index])
            record(entry)
            search.save(folder / CHECKPOINT)
            bar.update(1)
            if summary.best_so_far is not None:
                bar.set_postfix(best=f"{summary.best_so_far:.4f}")
    finally:
        bar.close()
    return search


def generation_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last record of each generation, in generation order (a resumed run may repeat one)."""
    latest: dict[int, dict[str, Any]] = {}
    for entry in records:
        latest[int(entry["generation"])] = entry
    return [latest[g] for g in sorted(latest)]


def rank_final(problem: SearchProblem, search: Evolution, top: int) -> list[tuple[np.ndarray, float]]:
    """The ``top`` distinct individuals of the final population and the best ever, by DP fitness only (R7.5)."""
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
