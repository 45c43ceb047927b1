"""Batched image augmentations in pure torch: random resized crop, flip, colour jitter, blur.

One ``strength`` in [0, 1] scales every transform at once (reported with the run): 0 is the
identity, 0.5 is a SimCLR-like default for small grey images, 1 is aggressive.
Too strong breaks positive pairs; too weak collapses the representation — the
strength used is recorded with the run.

Every draw comes from an explicit ``torch.Generator`` so a seed reproduces the views.
Images are float tensors of shape (N, C, H, W) with values in [0, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class ImageAugmentation:
    """A random view generator; each call transforms every image independently.

    Attributes:
        strength: Global strength in [0, 1].
        crop: Random resized crop (area scale down to ``1 - 0.8·strength``, aspect ratio up to 1 ± 0.33·strength).
        flip: Horizontal flip with probability 0.5 (when strength > 0).
        color_jitter: Brightness/contrast factors in 1 ± 0.6·strength (saturation for RGB too).
        blur: Gaussian blur with probability 0.5·strength, σ up to 1.5·strength pixels.
    """

    strength: float = 0.5
    crop: bool = True
    flip: bool = True
    color_jitter: bool = True
    blur: bool = True

    def __post_init__(self) -> None:
        if not 0.0 <= self.strength <= 1.0:
            raise ValueError(f"strength must be in [0, 1], got {self.strength}")

    def __call__(self, images: torch.Tensor, *, generator: torch.Generator) -> torch.Tensor:
        """Return one augmented view of each image.

        Args:
            images: (N, C, H, W) float tensor in [0, 1].
            generator: Source of every random draw.

        Returns:
            A new tensor of the same shape and dtype, values in [0, 1].
        """
        if images.ndim != 4:
            raise ValueError(f"expected (N, C, H, W) images, got shape {tuple(images.shape)}")
        out = images
        if self.strength == 0.0:
            return out.clone()
        if self.crop:
            out = random_resized_crop(out, strength=self.strength, generator=generator)
        if self.flip:
            out = random_flip(out, generator=generator)
        if self.color_jitter:
            out = color_jitter(out, strength=self.strength, generator=generator)
        if self.blur:
            out = random_blur(out, strength=self.strength, generator=generator)
        return out.clamp_(0.0, 1.0)


def _uniform(n: int, low: float, high: float, generator: torch.Generator, device: torch.device) -> torch.Tensor:
    return low + (high - low) * torch.rand(n, generator=generator, device=device)


def random_resized_crop(images: torch.Tensor, *, strength: float, generator: torch.Generator) -> torch.Tensor:
    """Crop a random box of each image and resize it back to the full size (bilinear, via affine grids)."""
    n = images.shape[0]
    device = images.device
    min_area = 1.0 - 0.8 * strength
    area = _uniform(n, min_area, 1.0, generator, device)
    log_ratio = math.log(1.0 + 0.33 * strength)
    ratio = torch.exp(_uniform(n, -log_ratio, log_ratio, generator, device))
    width = torch.sqrt(area * ratio).clamp(max=1.0)
    height = torch.sqrt(area / ratio).clamp(max=1.0)
    # Box centre anywhere that keeps the box inside the image; coordinates in [-1, 1].
    cx = (1.0 - width) * _uniform(n, -1.0, 1.0, generator, device)
    cy = (1.0 - height) * _uniform(n, -1.0, 1.0, generator, device)
    theta = torch.zeros(n, 2, 3, device=device, dtype=images.dtype)
    theta[:, 0, 0] = width
    theta[:, 0, 2] = cx
    theta[:, 1, 1] = height
    theta[:, 1, 2] = cy
    grid = F.affine_grid(theta, list(images.shape), align_corners=False)
    return F.grid_sample(images, grid, mode="bilinear", padding_mode="border", align_corners=False)


def random_flip(images: torch.Tensor, *, generator: torch.Generator) -> torch.Tensor:
    """Flip each image left-right with probability 0.5."""
    flip = torch.rand(images.shape[0], generator=generator, device=images.device) < 0.5
    return torch.where(flip[:, None, None, None], images.flip(-1), images)


def color_jitter(images: torch.Tensor, *, strength: float, generator: torch.Generator) -> torch.Tensor:
    """Random brightness and contrast (and saturation for RGB), each a factor in 1 ± 0.6·strength."""
    n = images.shape[0]
    device = images.device
    spread = 0.6 * strength
    brightness = _uniform(n, 1.0 - spread, 1.0 + spread, generator, device)[:, None, None, None]
    contrast = _uniform(n, 1.0 - spread, 1.0 + spread, generator, device)[:, None, None, None]
    out = images * brightness
    mean = out.mean(dim=(1, 2, 3), keepdim=True)
    out = (out - mean) * contrast + mean
    if images.shape[1] == 3:
        saturation = _uniform(n, 1.0 - spread, 1.0 + spread, generator, device)[:, None, None, None]
        grey = (0.299 * out[:, :1] + 0.587 * out[:, 1:2] + 0.114 * out[:, 2:3])
        out = (out - grey) * saturation + grey
    return out.clamp(0.0, 1.0)


def random_blur(images: torch.Tensor, *, strength: float, generator: torch.Generator) -> torch.Tensor:
    """Gaussian-blur each image with probability 0.5·strength, σ uniform in [0.1, 1.5·strength] pixels."""
    n, channels, _, _ = images.shape
    device = images.device
    apply = torch.rand(n, generator=generator, device=device) < 0.5 * strength
    sigma = _uniform(n, 0.1, max(0.1, 1.5 * strength), generator, device)
    radius = 3
    offsets = torch.arange(-radius, radius + 1, device=device, dtype=images.dtype)
    kernels = torch.exp(-(offsets[None, :] ** 2) / (2 * sigma[:, None] ** 2))
    kernels = kernels / kernels.sum(dim=1, keepdim=True)  # (N, K)
    # Separable blur with a per-image kernel: fold the batch into channels and use groups.
    stacked = images.reshape(1, n * channels, *images.shape[2:])
    k = kernels.repeat_interleave(channels, dim=0)
    padded = F.pad(stacked, (radius, radius, 0, 0), mode="replicate")
    horizontal = F.conv2d(padded, k[:, None, None, :], groups=n * channels)
    padded = F.pad(horizontal, (0, 0, radius, radius), mode="replicate")
    blurred = F.conv2d(padded, k[:, None, :, None], groups=n * channels).reshape(images.shape)
    return torch.where(apply[:, None, None, None], blurred, images)
