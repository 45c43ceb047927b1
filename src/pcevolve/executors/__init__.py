"""Where a run's bulk work runs: in this process (``executor: local``, the default) or on a Ray cluster
(``executor: ray``). Both give identical results; see :mod:`pcevolve.executors.base` for what may be sent out.

The pipeline makes one executor per run and installs it with :func:`use_executor`; the steps that do bulk work
(:func:`bulk_encode`, the search's population evaluation) ask :func:`current_executor`, which is the local one
outside a run.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.executors.base import Executor
from pcevolve.executors.local import LocalExecutor
from pcevolve.executors.ray_cluster import INSTALL_HINT as RAY_INSTALL_HINT
from pcevolve.executors.ray_cluster import RayExecutor, RayUnavailable
from pcevolve.registry import Registry

if TYPE_CHECKING:
    from pcevolve.config import ExecutorConfig

EXECUTORS: Registry[type] = Registry("executor", {LocalExecutor.name: LocalExecutor, RayExecutor.name: RayExecutor})

_CURRENT: contextvars.ContextVar[Any] = contextvars.ContextVar("pcevolve_executor", default=None)


def current_executor() -> Executor:
    """The executor installed by :func:`use_executor`, or a local one."""
    return _CURRENT.get() or LocalExecutor()


@contextlib.contextmanager
def use_executor(config: ExecutorConfig) -> Iterator[Executor]:
    """Build the executor ``config`` names, install it for the block, and close it after (even on error)."""
    executor = EXECUTORS.get_part(config.name)(config)
    token = _CURRENT.set(executor)
    try:
        yield executor
    finally:
        _CURRENT.reset(token)
        executor.close()


def bulk_encode(encoder: Any, samples: np.ndarray, *, batch_size: int,
                progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``encoder.encode_both`` of many **public** samples, on the current executor (never pass private data)."""
    return current_executor().encode(encoder, samples, batch_size=batch_size, progress=progress)


__all__ = ["EXECUTORS", "RAY_INSTALL_HINT", "Executor", "LocalExecutor", "RayExecutor", "RayUnavailable",
           "bulk_encode", "current_executor", "use_executor"]
