"""What an executor does: the two kinds of bulk work of a run that may leave the process, and nothing else.

* ``encode`` — an encoder over many **public** samples (the public pool for the search basis and the retrieval
  decoder). Row i of the result depends only on sample i and its batch, so shards cut at multiples of the batch
  size concatenate to exactly the local result (:meth:`pcevolve.encoders.encoder.Encoder.encode_both`).
* ``map_chunks`` — any function of a shared object and a chunk of rows, over contiguous chunks of the rows (the
  search: the DP fitness of every individual of a generation, a deterministic function of its vector, the DP release
  and public data, so where it is computed does not change it).

An executor is handed to what uses it (the run's stages pass theirs on); it knows nothing of what it runs.

Private samples are never handed to an executor: the stages that read them (the representation's DP-SGD, the
release) run in the head process. What crosses the wire is listed in docs/privacy.md §3.10.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Protocol, TypeVar

import numpy as np

S = TypeVar("S")  # what map_chunks shares with every chunk
R = TypeVar("R")  # what it returns per row


class Executor(Protocol):
    """Runs a run's bulk work; registered under ``executor.name``."""

    name: ClassVar[str]
    #: How many parts the work is split into (1 for the local executor).
    workers: int

    def encode(self, encoder: Any, samples: np.ndarray, *, batch_size: int,
               progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``encoder.encode_both(samples, batch_size=batch_size)``, the same floats wherever it runs."""
        ...

    def map_chunks(self, fn: Callable[[S, np.ndarray], list[R]], shared: S, rows: np.ndarray) -> list[R]:
        """``fn(shared, chunk)`` over contiguous chunks of ``rows`` (one per worker), the results concatenated in
        order: ``fn(shared, rows)`` wherever it runs, for a ``fn`` whose result for a row depends on that row alone.
        ``shared`` is shipped once while it stays the same object."""
        ...

    def close(self) -> None:
        """Release what the executor started (a cluster it brought up itself); a no-op otherwise."""
        ...
