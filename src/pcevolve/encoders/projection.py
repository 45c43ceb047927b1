"""The projection head of contrastive learning: pooled backbone features → the search's feature space."""

from __future__ import annotations

import torch
from torch import nn


class ProjectionHead(nn.Module):
    """Two-layer MLP (SimCLR/MoCo v2 style), no BatchNorm so samples never mix.

    Args:
        in_dim: Pooled backbone feature size (1280 for EfficientNet-Lite).
        hidden_dim: Hidden width (seed: 2048).
        out_dim: Output size (seed: 256; 128/64 when the representation collapses).
        generator: Explicit source of the initial weights.
    """

    def __init__(self, in_dim: int, hidden_dim: int, out_dim: int, *, generator: torch.Generator) -> None:
        super().__init__()
        self.hidden = nn.Linear(in_dim, hidden_dim)
        self.out = nn.Linear(hidden_dim, out_dim)
        self.in_dim, self.hidden_dim, self.out_dim = in_dim, hidden_dim, out_dim
        with torch.no_grad():
            for layer in (self.hidden, self.out):
                bound = 1.0 / layer.in_features**0.5  # PyTorch's default Linear init, drawn from our generator
                layer.weight.uniform_(-bound, bound, generator=generator)
                layer.bias.uniform_(-bound, bound, generator=generator)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.hidden(features)))
