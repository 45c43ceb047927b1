"""The end-to-end audit's guesses and the ε bound they give (:mod:`pcevolve.audit.end_to_end`, step 5).

For each k of a grid fixed before any score is seen (:data:`GUESS_GRID`, each capped at m // 2): "in" for the k
best scores, "out" for the k worst (:func:`guess_bounds`); the right guesses v of r = 2k bound ε through
:func:`pcevolve.privacy.audit.one_run_epsilon` at confidence 1 − alpha / (number of k), so that the largest
bound of the grid holds at confidence 1 − ``alpha`` (Bonferroni). The scores are the caller's
(:mod:`pcevolve.audit.canary_scores`); the coins only count the right guesses, they choose none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pcevolve.privacy.audit import one_run_epsilon

#: The guesses' sizes k (k "in", k "out"), each capped at m // 2; fixed before any score is seen.
GUESS_GRID: tuple[int, ...] = (10, 25, 50, 100, 250)


@dataclass(frozen=True)
class GuessBound:
    """The guesses of one k: the k best scores said "in", the k worst "out".

    Attributes:
        k: Guesses each way.
        guesses: r = 2k.
        correct: v, the right ones.
        epsilon: The ε these guesses refute (at the audit's per-k confidence); 0 if none.
    """

    k: int
    guesses: int
    correct: int
    epsilon: float

    def to_json(self) -> dict[str, Any]:
        return {"k": self.k, "guesses": self.guesses, "correct": self.correct, "epsilon": self.epsilon}


def guess_grid(canaries: int) -> tuple[int, ...]:
    """The k of :data:`GUESS_GRID`, each capped at m // 2 (the k best and k worst must not overlap)."""
    return tuple(sorted({min(k, canaries // 2) for k in GUESS_GRID}))


def guess_bounds(scores: np.ndarray, included: np.ndarray, *, delta: float,
                 alpha: float = 0.05) -> tuple[GuessBound, tuple[GuessBound, ...]]:
    """For each k of :func:`guess_grid`: the k highest scores guessed in, the k lowest out, and the ε their right
    guesses refute at confidence 1 − alpha / (number of k) — so that the largest, returned first, holds at
    confidence 1 − ``alpha`` (Bonferroni). Ties are ordered by canary index, which no coin decides.

    Args:
        scores: (m,) one per canary, higher meaning "more likely in" (+inf allowed).
        included: (m,) the coins: whether each canary was in.
        delta: The δ of the audited claim.
    """
    scores = np.asarray(scores, dtype=np.float64)
    included = np.asarray(included, dtype=bool)
    if scores.shape != included.shape or scores.ndim != 1:
        raise ValueError(f"need one score per canary, got {scores.shape} and {included.shape}")
    if np.isnan(scores).any():
        raise ValueError("scores must not be NaN")
    canaries = len(scores)
    grid = guess_grid(canaries)
    if not grid or grid[0] < 1:
        raise ValueError(f"need at least 2 canaries, got {canaries}")
    order = np.argsort(-scores, kind="stable")  # best first
    bounds = []
    for k in grid:
        correct = int(included[order[:k]].sum() + (~included[order[-k:]]).sum())
        epsilon = one_run_epsilon(canaries, 2 * k, correct, delta=delta, alpha=alpha / len(grid))
        bounds.append(GuessBound(k=k, guesses=2 * k, correct=correct, epsilon=epsilon))
    best = max(bounds, key=lambda bound: (bound.epsilon, bound.correct / bound.guesses))
    return best, tuple(bounds)
