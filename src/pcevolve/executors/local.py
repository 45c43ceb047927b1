"""The default executor: everything in this process, nothing to install or start."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from pcevolve.executors.base import R, S

if TYPE_CHECKING:
    from pcevolve.config import ExecutorConfig


class LocalExecutor:
    """In-process bulk work (registry key ``"local"``)."""

    name: ClassVar[str] = "local"

    def __init__(self, config: ExecutorConfig | None = None) -> None:
        del config
        self.workers = 1

    def encode(self, encoder: Any, samples: np.ndarray, *, batch_size: int,
               progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
        return encoder.encode_both(samples, batch_size=batch_size, progress=progress)

    def map_chunks(self, fn: Callable[[S, np.ndarray], list[R]], shared: S, rows: np.ndarray) -> list[R]:
        return fn(shared, rows)

    def close(self) -> None:
        return None
