"""What an executor does: the two kinds of bulk work of a run that may leave the process, and nothing else.

* ``encode`` — an encoder over many **public** samples (the public pool for the search basis and the retrieval
  decoder). Row i of the result depends only on sample i and its batch, so shards cut at multiples of the batch
  size concatenate to exactly the local result (:meth:`pcevolve.encoders.encoder.Encoder.encode_both`).
* ``evaluate_population`` — the DP fitness of every individual of a generation. An individual's fitness is a
  deterministic function of its vector, the DP release and public data (:class:`~pcevolve.search.SearchProblem`),
  so where it is computed does not change it.

Private samples are never handed to an executor: the stages that read them (the representation's DP-SGD, the
release) run in the head process. What crosses the wire is listed in docs/privacy.md §3.10.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

if TYPE_CHECKING:
    from pcevolve.fitness import FitnessBreakdown
    from pcevolve.search.problem import SearchProblem


class Executor(Protocol):
    """Runs a run's bulk work; registered under ``executor.name``."""

    name: ClassVar[str]
    #: How many parts the work is split into (1 for the local executor).
    workers: int

    def encode(self, encoder: Any, samples: np.ndarray, *, batch_size: int,
               progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``encoder.encode_both(samples, batch_size=batch_size)``, the same floats wherever it runs."""
        ...

    def evaluate_population(self, problem: SearchProblem, population: np.ndarray) -> list[FitnessBreakdown]:
        """``problem.evaluate_population(population)``, the same values in the same order wherever it runs."""
        ...

    def close(self) -> None:
        """Release what the executor started (a cluster it brought up itself); a no-op otherwise."""
        ...
