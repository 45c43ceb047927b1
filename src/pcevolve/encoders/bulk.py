"""Bulk inference through a frozen module: a traced, frozen, channels-last copy run on small batches (issue #6).

Such a copy encodes far faster than the eager module, and in less memory with small batches than with large ones,
for which the graph executor keeps larger activation buffers (measured in docs/performance.md, "Bulk encoding").
Freezing folds batch norm into the convolutions, channels-last memory suits the depthwise kernels, and small batches
keep activations in cache — so the rows per call shrink as the backbone's input grows (:func:`bulk_rows`).
Outputs agree with the eager module to about 5e-5 (float32 rounding of the folded weights).

The calls run one per core side by side, each on one thread (:func:`_map_per_core`), rather than one at a time on
every core: a 16-row call is too small for the cores to share it without waiting for each other. Every call computes
on one thread, so a job's floats are the same whatever the machine's core count (with several threads to a call
some kernels round differently, by ~2e-5).

The copy holds the weights as constants at the time it is built, so it is built for one bulk job and thrown
away: never kept across training steps. Building it (tracing, freezing, the first calls' profiling) costs a few
seconds, so small jobs run the module eagerly (:func:`bulk_min_images`). What a job saves grows with the image's
area and the build cost much less, so larger inputs pay for the copy with fewer images (docs/performance.md).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn

#: Below this many images a job at a backbone input of :data:`BULK_SIDE` px or less runs the module eagerly (the
#: copy's build would not pay: docs/performance.md); larger inputs pay sooner (:func:`bulk_min_images`).
BULK_MIN_IMAGES = 1024
#: Rows per call of the frozen copy at a backbone input of :data:`BULK_SIDE` px or less (see the module docstring).
BULK_BATCH = 32
#: Above this input side the rows per call shrink as the side grows (:func:`bulk_rows`).
BULK_SIDE = 64


def bulk_rows(side: int) -> int:
    """Rows per call of the frozen copy for a backbone input of ``side`` px: :data:`BULK_BATCH` up to
    :data:`BULK_SIDE`, then fewer in proportion to the side (16 at 128 px), at least 8."""
    if side <= BULK_SIDE:
        return BULK_BATCH
    return max(8, BULK_BATCH * BULK_SIDE // side)


def bulk_min_images(side: int) -> int:
    """The smallest job worth a frozen copy at a backbone input of ``side`` px: :data:`BULK_MIN_IMAGES` up to
    :data:`BULK_SIDE`, then fewer in proportion to the input's area (256 at 128 px), since an image's eager cost
    grows with its area while the build's does not (see the module docstring)."""
    if side <= BULK_SIDE:
        return BULK_MIN_IMAGES
    return max(1, BULK_MIN_IMAGES * BULK_SIDE * BULK_SIDE // (side * side))


def inference_runner(module: nn.Module, images: int, *, side: int) -> Callable[[torch.Tensor], object]:
    """How to run ``module``, whose backbone takes ``side``-px inputs, without gradients for a job of ``images``
    images.

    Its :func:`frozen_copy` (:func:`bulk_rows` per call) when the job is large enough to pay for building one
    (:func:`bulk_min_images`), else the module itself, eagerly.
    """
    if images >= bulk_min_images(side):
        return frozen_copy(module, rows=bulk_rows(side))

    def run(inputs: torch.Tensor) -> object:
        with torch.no_grad():
            return module(inputs)

    return run


def frozen_copy(module: nn.Module, *, rows: int = BULK_BATCH) -> Callable[[torch.Tensor], object]:
    """A traced, frozen, channels-last copy of ``module`` (in eval mode), built on its first call.

    The copy runs ``rows`` rows at a time, as many calls side by side as torch has threads (one thread each,
    :func:`_map_per_core`), and concatenates the outputs (a tensor or a tuple of tensors, batch first). The first
    call's first rows are the tracing example: later inputs must have the same layout. ``module`` itself is left
    untouched (``nn.Module.to`` would convert it in place, hence the copy). Runs under ``no_grad`` (not
    ``inference_mode``: cached outputs may feed a trainable module later).
    """
    traced: list[torch.jit.ScriptModule] = []

    def call(chunk: torch.Tensor) -> object:
        with torch.no_grad():
            return traced[0](chunk)

    def run(inputs: torch.Tensor) -> object:
        chunks = [chunk.contiguous(memory_format=torch.channels_last) if chunk.dim() == 4 else chunk
                  for chunk in inputs.split(rows)]
        first = 0
        if not traced:
            with torch.no_grad():
                traced.append(_trace(module, chunks[0]))
            # The executor profiles and optimises the graph on its first calls: make those one at a time.
            first = _WARM_UP_CALLS
        return _concatenate(_map_per_core(call, chunks, one_at_a_time=first))

    return run


#: Calls of a new copy made one at a time before calls run side by side.
_WARM_UP_CALLS = 2


def _map_per_core(call: Callable[[torch.Tensor], object], chunks: Sequence[torch.Tensor], *,
                  one_at_a_time: int = 0) -> list:
    """``call`` on every chunk, in order, each call on one thread, as many at a time as torch had threads.

    The first ``one_at_a_time`` calls run one after another. Torch's thread count is 1 while the calls run (the
    threads started for them take it up) and is restored after; nothing else may use torch in this process
    meanwhile — a bulk job is the only work while it runs. Every call thus computes on one thread whatever the
    thread count, so the outputs do not depend on it (with several threads some kernels round differently).
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        outputs = [call(chunk) for chunk in chunks[:one_at_a_time]]
        rest = chunks[one_at_a_time:]
        if threads <= 1 or len(rest) <= 1:
            return outputs + [call(chunk) for chunk in rest]
        with ThreadPoolExecutor(max_workers=min(threads, len(rest)), thread_name_prefix="bulk") as pool:
            return outputs + list(pool.map(call, rest))
    finally:
        torch.set_num_threads(threads)


def _trace(module: nn.Module, example: torch.Tensor) -> torch.jit.ScriptModule:
    clone = copy.deepcopy(module).eval().to(memory_format=torch.channels_last)
    with warnings.catch_warnings():
        # Shape branches (grey → RGB, resize) are traced as constants: right, since every batch of one job has
        # the first batch's layout.
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        return torch.jit.freeze(torch.jit.trace(clone, example))


def _concatenate(parts: list) -> object:
    if isinstance(parts[0], tuple):
        return tuple(torch.cat([part[i] for part in parts]).contiguous() for i in range(len(parts[0])))
    return torch.cat(parts).contiguous()
