"""The default executor: everything in this process, nothing to install or start."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:
    from pcevolve.config import ExecutorConfig
    from pcevolve.fitness import FitnessBreakdown
    from pcevolve.search.problem import SearchProblem


class LocalExecutor:
    """In-process bulk work (registry key ``"local"``)."""

    name: ClassVar[str] = "local"

    def __init__(self, config: ExecutorConfig | None = None) -> None:
        del config
        self.workers = 1

    def encode(self, encoder: Any, samples: np.ndarray, *, batch_size: int,
               progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
        return encoder.encode_both(samples, batch_size=batch_size, progress=progress)

    def evaluate_population(self, problem: SearchProblem, population: np.ndarray) -> list[FitnessBreakdown]:
        return problem.evaluate_population(population)

    def close(self) -> None:
        return None
