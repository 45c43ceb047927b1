"""Cached trunk activations of augmented views (issue: speed on a CPU).

The trunk is frozen, so its output for a given (sample, view) never changes: compute it
once for a fixed bank of K views per sample, then every training step runs only the
trainable top. For private samples the bank is private data — it is only ever read
inside the DP-SGD mechanism's per-sample gradients.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np
import torch

from pcevolve.augment import ImageAugmentation
from pcevolve.encoders.preprocess import to_float_images
from pcevolve.progress import progress_bar

class TrunkSource(Protocol):
    """What the bank needs of an encoder (:class:`~pcevolve.encoders.encoder.ImageEncoder` is one): its trunk, as a
    function of float images for a job of ``images`` images."""

    def trunk_runner(self, images: int) -> Callable[[torch.Tensor], torch.Tensor]: ...


@torch.no_grad()
def build_view_bank(
    encoder: TrunkSource,
    images: np.ndarray,
    *,
    views: int,
    augmentation: ImageAugmentation,
    generator: torch.Generator,
    batch_size: int = 256,
    progress: bool = False,
    desc: str = "caching views",
) -> torch.Tensor:
    """Trunk activations of ``views`` augmented views of every image.

    Args:
        encoder: Supplies ``trunk_runner(count)``, a function float images → trunk activations (B, C, h, w).
        images: uint8 images (N, H, W) or (N, H, W, C).
        views: K ≥ 1 views per image (view 0 is augmented too).
        augmentation: The view generator.
        generator: Drives every augmentation draw.

    Returns:
        (N, K, C, h, w) float32 tensor.
    """
    if views < 1:
        raise ValueError(f"views must be at least 1, got {views}")
    n = len(images)
    parts: list[torch.Tensor] = []
    per_batch = max(1, batch_size // views)
    bar = progress_bar(n * views, desc, "view", enabled=progress)
    trunk = encoder.trunk_runner(n * views)
    for start in range(0, n, per_batch):
        batch = to_float_images(images[start : start + per_batch])
        repeated = batch.repeat_interleave(views, dim=0)
        activations = trunk(augmentation(repeated, generator=generator))
        parts.append(activations.reshape(len(batch), views, *activations.shape[1:]))
        bar.update(len(repeated))
    bar.close()
    return torch.cat(parts) if parts else torch.zeros(0)
