"""What one individual is worth: sample its candidate set, predict the round trip, score it, deterministically.

The fitness of an individual is the mean of :func:`pcevolve.fitness.evaluate` over
``eval_seeds`` fixed draws of ε (common random numbers, against noisy fitness): every individual of every
generation is scored on the same draws, so the fitness is a deterministic function of the
vector and differences between individuals are not sampling noise. The problem holds only the
search space (built from the DP release), the DP fitness targets and the public surrogate —
nothing private.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from pcevolve.config import FitnessWeights
from pcevolve.fitness import FitnessBreakdown, FitnessTargets, evaluate
from pcevolve.search.roundtrip import ExactRoundTrip, RoundTripSurrogate
from pcevolve.search.space import SearchSpace


@dataclass(frozen=True, eq=False)
class SearchProblem:
    """The fitness of individuals of ``space``; ``draws`` are the fixed ε of each evaluation seed."""

    space: SearchSpace
    targets: FitnessTargets
    weights: FitnessWeights
    surrogate: RoundTripSurrogate | ExactRoundTrip | None
    draws: tuple[np.ndarray, ...]

    @classmethod
    def build(cls, space: SearchSpace, targets: FitnessTargets, weights: FitnessWeights,
              surrogate: RoundTripSurrogate | ExactRoundTrip | None, *, per_class: int, eval_seeds: int,
              seed: int) -> "SearchProblem":
        rng = np.random.default_rng([seed, 0x5EA4C4])
        draws = tuple(space.noise(per_class, rng) for _ in range(eval_seeds))
        return cls(space=space, targets=targets, weights=weights, surrogate=surrogate, draws=draws)

    def candidate(self, individual: np.ndarray, seed_index: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """The candidate set (coordinates, labels) of one evaluation seed."""
        return self.space.sample(individual, self.draws[seed_index])

    def evaluate(self, individual: np.ndarray) -> FitnessBreakdown:
        """Terms and total averaged over the evaluation seeds."""
        results = []
        shift = self.space.shift(individual)
        for index in range(len(self.draws)):
            z, labels = self.candidate(individual, index)
            roundtrip = self.surrogate.predict(z, labels) if self.surrogate is not None else None
            results.append(evaluate(z, labels, self.targets, self.weights, roundtrip=roundtrip, shift=shift))
        terms = {name: float(np.mean([r.terms[name] for r in results])) for name in results[0].terms}
        return FitnessBreakdown(terms=terms, total=float(np.mean([r.total for r in results])))

    def evaluate_population(self, population: np.ndarray) -> list[FitnessBreakdown]:
        """Every individual's breakdown. BLAS runs single-threaded here: the products are small (≈ 500 × 32),
        and threaded OpenBLAS on a busy CPU of few cores makes them slower (measured in docs/performance.md,
        "Smaller choices")."""
        with threadpool_limits(1, user_api="blas"):
            return [self.evaluate(individual) for individual in population]
