"""Bulk work on a Ray cluster (registry key ``"ray"``; ``pip install 'pcevolve[ray]'``).

Connects to ``executor.address``, else to ``RAY_ADDRESS``, else starts a local cluster bound to 127.0.0.1 (and
stops it on :meth:`close`). Every worker must run the same pcevolve, torch and model packages as the head (on a
real cluster: the same image or virtual environment; see docs/scale.md).

* **Encoding** ships the encoder once per worker (one actor each holds it) and sends shards of ``shard_rows``
  samples, rounded up to a multiple of the batch size so that the shards' batches are exactly the local run's;
  each shard is told the whole job's size, so it runs the same way (eager or bulk copy) as the local job, with as
  many torch threads as the head uses. Results come back in order and are concatenated.
* **Chunks** (the search's population evaluation) ship the shared object once while it is the same (the search
  problem changes only when the surrogate is refitted) and split the rows into ``workers`` contiguous chunks, each
  a task run single-threaded like the local loop; the results come back in row order.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from pcevolve.catalog.executors import RAY_INSTALL_HINT
from pcevolve.executors.base import R, S
from pcevolve.progress import progress_bar

if TYPE_CHECKING:
    from pcevolve.config import ExecutorConfig



class RayUnavailable(RuntimeError):
    """Ray is not installed; the message says what to install."""


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable(f"executor: ray needs Ray on this machine and on the cluster: "
                             f"{RAY_INSTALL_HINT}") from None
    return ray


class _EncoderHolder:
    """A worker's copy of one encoder, received once, encoding shard after shard with the head's thread count.

    The thread count matters: the bulk copy's fused kernels round differently with 1 and 2 threads (docs/scale.md),
    and the same floats as the local run are the point.
    """

    def __init__(self, encoder: Any, threads: int) -> None:
        import torch

        torch.set_num_threads(threads)
        self.encoder = encoder.eval()

    def encode(self, samples: np.ndarray, batch_size: int, job_size: int) -> tuple[np.ndarray, np.ndarray]:
        return self.encoder.encode_both(samples, batch_size=batch_size, job_size=job_size)


def _apply(fn: Callable[[Any, np.ndarray], list[Any]], shared: Any, chunk: np.ndarray) -> list[Any]:
    return fn(shared, chunk)


class RayExecutor:
    """Encoding shards and population chunks as Ray actors and tasks."""

    name: ClassVar[str] = "ray"

    def __init__(self, config: ExecutorConfig) -> None:
        ray = _ray()
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            address = config.address or os.environ.get("RAY_ADDRESS")
            quiet = {"logging_level": logging.WARNING, "log_to_driver": False, "include_dashboard": False}
            if address:
                ray.init(address=address, **quiet)
            else:
                ray.init(num_cpus=config.workers, _node_ip_address="127.0.0.1", **quiet)
                self._started = True
        self.workers = int(config.workers or max(1, int(ray.cluster_resources().get("CPU", 1))))
        self.shard_rows = int(config.shard_rows)
        self._holder = ray.remote(num_cpus=1)(_EncoderHolder)
        self._apply = ray.remote(num_cpus=1)(_apply)
        self._shared: tuple[Any, Any] = (None, None)  # (object, its object reference): put once per object

    def encode(self, encoder: Any, samples: np.ndarray, *, batch_size: int,
               progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
        ray = self._ray
        total = len(samples)
        if total == 0:
            return encoder.encode_both(samples, batch_size=batch_size)
        shard = math.ceil(self.shard_rows / batch_size) * batch_size
        starts = list(range(0, total, shard))
        import torch

        shipped = ray.put(encoder)
        threads = torch.get_num_threads()
        holders = [self._holder.remote(shipped, threads) for _ in range(min(self.workers, len(starts)))]
        pending = [holders[i % len(holders)].encode.remote(samples[start:start + shard], batch_size, total)
                   for i, start in enumerate(starts)]
        order = {ref: i for i, ref in enumerate(pending)}
        parts: list[Any] = [None] * len(pending)
        bar = progress_bar(total, "encoding on the cluster", unit="sample", enabled=progress)
        waiting = list(pending)
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            index = order[done[0]]
            parts[index] = ray.get(done[0])
            bar.update(min(shard, total - starts[index]))
        bar.close()
        for holder in holders:
            ray.kill(holder)
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def map_chunks(self, fn: Callable[[S, np.ndarray], list[R]], shared: S, rows: np.ndarray) -> list[R]:
        ray = self._ray
        if self._shared[0] is not shared:
            self._shared = (shared, ray.put(shared))
        chunks = [part for part in np.array_split(np.arange(len(rows)), min(self.workers, len(rows))) if len(part)]
        results = ray.get([self._apply.remote(fn, self._shared[1], rows[part]) for part in chunks])
        return [result for part in results for result in part]

    def close(self) -> None:
        self._shared = (None, None)
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()
            self._started = False
