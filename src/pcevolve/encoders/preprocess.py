"""Turn dataset images into backbone inputs: resize, grey → 3 channels, ImageNet-lite normalisation."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F


def to_float_images(samples: np.ndarray) -> torch.Tensor:
    """uint8 images (N, H, W) or (N, H, W, C) → float tensor (N, C, H, W) in [0, 1]."""
    array = np.asarray(samples)
    if array.dtype != np.uint8:
        raise TypeError(f"expected uint8 images, got {array.dtype}")
    if array.ndim == 3:
        array = array[:, :, :, None]
    if array.ndim != 4:
        raise ValueError(f"expected (N, H, W) or (N, H, W, C) images, got shape {array.shape}")
    # Copy: dataset arrays are read-only, and torch must not alias memory it may write to.
    return torch.from_numpy(np.array(array, copy=True)).permute(0, 3, 1, 2).float().div_(255.0)


def backbone_input(images: torch.Tensor, *, size: int) -> torch.Tensor:
    """(N, C, H, W) floats in [0, 1] → (N, 3, size, size) normalised to [-1, 1] as EfficientNet-Lite expects."""
    if images.shape[1] == 1:
        images = images.expand(-1, 3, -1, -1)
    elif images.shape[1] != 3:
        raise ValueError(f"expected 1 or 3 channels, got {images.shape[1]}")
    if images.shape[-2:] != (size, size):
        images = F.interpolate(images, size=(size, size), mode="bilinear", align_corners=False, antialias=True)
    return (images - 0.5) / 0.5


def pixel_view(images: torch.Tensor, *, side: int) -> torch.Tensor:
    """(N, C, H, W) floats in [0, 1] → (N, C·side²): the images averaged down to ``side`` × ``side``, flattened."""
    return F.adaptive_avg_pool2d(images, side).flatten(1)
