"""The conditional image generator: feature vector → image logits.

Upsampling + 3x3 convolutions (no ConvTranspose2d) and GroupNorm (per-sample, no batch
statistics), so per-sample gradient machinery (torch.func, Opacus) applies unchanged and one
sample's output never depends on another's.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class ConvGenerator(nn.Module):
    """Linear → (C0, h/4, w/4) → [upsample ×2, conv3x3, GroupNorm, ReLU] ×2 → conv3x3 → logits.

    Args:
        feature_dim: Size of the input feature vectors.
        height: Output height.
        width_px: Output width.
        channels: Output channels (1 grey, 3 colour).
        width: Channels of the last hidden layer; the first has twice as many.
        generator: Explicit source of the initial weights.
    """

    def __init__(self, feature_dim: int, *, height: int, width_px: int, channels: int, width: int,
                 generator: torch.Generator) -> None:
        super().__init__()
        self.height, self.width_px = height, width_px
        self.base = (math.ceil(height / 4), math.ceil(width_px / 4))
        self.hidden = 2 * width
        self.project = nn.Linear(feature_dim, self.hidden * self.base[0] * self.base[1])
        self.conv1 = nn.Conv2d(self.hidden, width, 3, padding=1)
        self.norm1 = nn.GroupNorm(min(8, width), width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1)
        self.norm2 = nn.GroupNorm(min(8, width), width)
        self.out = nn.Conv2d(width, channels, 3, padding=1)
        self.norm0 = nn.GroupNorm(min(8, self.hidden), self.hidden)
        with torch.no_grad():
            for layer in (self.project, self.conv1, self.conv2, self.out):
                fan_in = layer.weight[0].numel()
                bound = 1.0 / fan_in**0.5  # PyTorch's default bound, drawn from our generator
                layer.weight.uniform_(-bound * 3**0.5, bound * 3**0.5, generator=generator)
                layer.bias.uniform_(-bound, bound, generator=generator)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """Features (N, feature_dim) → pixel logits (N, channels, height, width_px)."""
        x = self.project(F.normalize(features, dim=-1) * features.shape[-1] ** 0.5)
        x = torch.relu(self.norm0(x.view(-1, self.hidden, *self.base)))
        x = F.interpolate(x, scale_factor=2, mode="nearest")
        x = torch.relu(self.norm1(self.conv1(x)))
        x = F.interpolate(x, scale_factor=2, mode="nearest")
        x = torch.relu(self.norm2(self.conv2(x)))
        x = self.out(x)
        return x[:, :, : self.height, : self.width_px]
