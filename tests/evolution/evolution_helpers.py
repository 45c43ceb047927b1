"""Shared toy problems and run drivers for the evolution tests."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pcevolve.evolution import Bounds, Evolution, EvolutionSettings

TARGET = np.linspace(-3.0, 3.0, 10)
BOX = Bounds.uniform(-5.0, 5.0, 10)


def sphere(x: np.ndarray) -> np.ndarray:
    """Maximise −‖x − TARGET‖² (optimum 0 at TARGET, inside BOX)."""
    return -np.sum((x - TARGET) ** 2, axis=1)


def small_settings(**changes) -> EvolutionSettings:
    """Fast settings that still exercise the coarse phase, a periodic round and adaptation."""
    base = EvolutionSettings(population=12, elite=3, generations=15, coarse_generations=5, polynomial_every=4,
                             patience=50)
    return replace(base, **changes)


def run(engine: Evolution, fitness=sphere, *, tells: int | None = None) -> list[np.ndarray]:
    """Drive ``engine`` until done (or ``tells`` generations); return every population it was asked."""
    asked = []
    while not engine.done and (tells is None or len(asked) < tells):
        population = engine.ask()
        asked.append(population)
        engine.tell(fitness(population))
    return asked
