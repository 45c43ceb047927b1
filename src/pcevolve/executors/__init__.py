"""Where a run's bulk work runs: in this process (``executor: local``, the default) or on a Ray cluster
(``executor: ray``). Both give identical results; see :mod:`pcevolve.executors.base` for what may be sent out.

The pipeline makes one executor per run with :func:`use_executor` and hands it to the steps that do bulk work
(:func:`bulk_encode` of the public pool, the search's population evaluation); without one they run locally.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.catalog.executors import RAY_INSTALL_HINT
from pcevolve.executors.base import Executor
from pcevolve.executors.local import LocalExecutor
from pcevolve.executors.ray_cluster import RayExecutor, RayUnavailable
from pcevolve.registry import Registry

if TYPE_CHECKING:
    from pcevolve.config import ExecutorConfig

EXECUTORS: Registry[type] = Registry("executor", {LocalExecutor.name: LocalExecutor, RayExecutor.name: RayExecutor})

@contextlib.contextmanager
def use_executor(config: ExecutorConfig) -> Iterator[Executor]:
    """Build the executor ``config`` names for the block, and close it after (even on error)."""
    executor = EXECUTORS.get_part(config.name)(config)
    try:
        yield executor
    finally:
        executor.close()


def bulk_encode(encoder: Any, samples: np.ndarray, *, batch_size: int, progress: bool = False,
                executor: Executor | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``encoder.encode_both`` of many **public** samples, on ``executor`` (local without one; never pass private
    data)."""
    executor = executor if executor is not None else LocalExecutor()
    return executor.encode(encoder, samples, batch_size=batch_size, progress=progress)


__all__ = ["EXECUTORS", "RAY_INSTALL_HINT", "Executor", "LocalExecutor", "RayExecutor", "RayUnavailable",
           "bulk_encode", "use_executor"]
