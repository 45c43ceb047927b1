"""MoCo-style contrastive pieces: InfoNCE against a queue of negatives, the queue, and the EMA key encoder.

Privacy contract (docs/privacy.md §3.4): the queue holds keys of **public**
samples only. A private sample's loss then depends on its own views, the current
weights and public data, so its per-sample gradient carries no other private sample.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn


def info_nce(queries: torch.Tensor, keys: torch.Tensor, negatives: torch.Tensor, *, temperature: float) -> torch.Tensor:
    """Per-row InfoNCE loss: row r's positive is ``keys[r]``, its negatives are the rows of ``negatives``.

    No row uses another row of ``queries``/``keys`` as a negative, so row r's loss depends only
    on (queries[r], keys[r], negatives).

    Args:
        queries: (R, D) L2-normalised query embeddings (gradients flow through these).
        keys: (R, D) L2-normalised positive keys (treated as constants).
        negatives: (Q, D) L2-normalised negative keys (constants).
        temperature: τ > 0.

    Returns:
        (R,) losses.
    """
    positive = (queries * keys.detach()).sum(dim=1, keepdim=True)
    negative = queries @ negatives.detach().T
    logits = torch.cat([positive, negative], dim=1) / temperature
    return F.cross_entropy(logits, torch.zeros(len(queries), dtype=torch.long, device=queries.device), reduction="none")


class NegativeQueue:
    """A fixed-size FIFO of L2-normalised keys, filled from public data only."""

    def __init__(self, size: int, dim: int) -> None:
        if size < 1:
            raise ValueError(f"queue size must be positive, got {size}")
        self.keys = torch.zeros(size, dim)
        self.filled = 0
        self._pointer = 0

    @property
    def size(self) -> int:
        return self.keys.shape[0]

    def enqueue_public(self, keys: torch.Tensor) -> None:
        """Add keys computed from **public** samples, replacing the oldest ones."""
        keys = F.normalize(keys.detach(), dim=1)
        for start in range(0, len(keys), self.size):
            chunk = keys[start : start + self.size]
            end = self._pointer + len(chunk)
            if end <= self.size:
                self.keys[self._pointer : end] = chunk
            else:
                first = self.size - self._pointer
                self.keys[self._pointer :] = chunk[:first]
                self.keys[: end - self.size] = chunk[first:]
            self._pointer = end % self.size
            self.filled = min(self.size, self.filled + len(chunk))

    def negatives(self) -> torch.Tensor:
        """The keys filled so far (all of them once the queue has wrapped)."""
        return self.keys[: self.filled]


class MomentumCopy:
    """An exponential moving average of a module's weights: θ_k ← m·θ_k + (1 − m)·θ_q (MoCo's key encoder).

    The EMA is a function of the (DP-noised) query weights only, hence post-processing.
    """

    def __init__(self, module: nn.Module, *, momentum: float) -> None:
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"momentum must be in [0, 1), got {momentum}")
        self.momentum = momentum
        self.module = copy.deepcopy(module)
        for parameter in self.module.parameters():
            parameter.requires_grad_(False)

    @torch.no_grad()
    def update(self, source: nn.Module) -> None:
        for target, param in zip(self.module.parameters(), source.parameters(), strict=True):
            target.mul_(self.momentum).add_(param.detach(), alpha=1.0 - self.momentum)

    @torch.no_grad()
    def __call__(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.module(inputs)
