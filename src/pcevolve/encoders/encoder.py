"""The image encoder every later stage sees: pretrained trunk → (fine-tuned) top → projection head.

Two outputs (issue: representation stage):

* ``pooled``: the backbone's globally pooled features (1280-d for EfficientNet-Lite), used for
  distances;
* ``features``: what the search moves in — the projection head's output (256-d by default), joined, when
  the encoder has a *pixel view*, with the image itself downsampled to ``pixel_side`` pixels a side. Both
  parts are scaled to unit length and the joined vector by 1/√2, so each weighs the same and the whole has
  unit length. The pixel view is a fixed public transform (no weights); it is there because pretrained
  features and raw appearance mislabel different images (docs/search.md §5).

Saved as safetensors (trainable weights only: top blocks and head) plus a JSON metadata file;
the frozen trunk is re-loaded from its installed package, so nothing pickled is ever read.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from safetensors.torch import save as save_safetensors
from torch import nn

from pcevolve.augment import ImageAugmentation
from pcevolve.encoders.backbones import (
    BACKBONES,
    BackboneTop,
    BackboneTrunk,
    load_split_backbone,
)
from pcevolve.encoders.bulk import inference_runner
from pcevolve.encoders.preprocess import backbone_input, pixel_view, to_float_images
from pcevolve.encoders.projection import ProjectionHead
from pcevolve.encoders.view_bank import build_view_bank
from pcevolve.io import atomic_write_bytes, atomic_write_json, read_json
from pcevolve.progress import progress_bar

if TYPE_CHECKING:
    from pcevolve.config import AugmentConfig


class Encoder(Protocol):
    """What later stages need from an encoder."""

    @property
    def feature_dim(self) -> int:
        """Size of :meth:`encode`'s output."""
        ...

    def encode(self, samples: np.ndarray) -> np.ndarray:
        """Map raw samples (as stored in a dataset) to feature vectors (N, feature_dim), float32."""
        ...

    def encode_both(self, samples: np.ndarray, *, batch_size: int, progress: bool = False,
                    job_size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(projection, search features) in batches of ``batch_size``; row i depends only on sample i and on which
        batch it falls in, so shards cut at multiples of ``batch_size`` (each told the ``job_size``) concatenate to
        exactly the whole job's result (what :mod:`pcevolve.executors` relies on)."""
        ...


@dataclass(frozen=True)
class EncoderMeta:
    """Everything needed to rebuild an :class:`ImageEncoder` besides its weights."""

    backbone: str
    trainable_blocks: int
    input_size: int
    proj_hidden_dim: int
    feature_dim: int  # the projection head's output size
    pixel_side: int = 0  # 0: no pixel view
    pixel_channels: int = 0


class ImageEncoder(nn.Module):
    """Pretrained image backbone split into frozen trunk and trainable top, plus a projection head."""

    def __init__(self, meta: EncoderMeta, trunk: BackboneTrunk, top: BackboneTop, head: ProjectionHead) -> None:
        super().__init__()
        self.meta = meta
        self.trunk = trunk
        self.top = top
        self.head = head

    @classmethod
    def pretrained(
        cls,
        backbone: str = "efficientnet-lite0",
        *,
        trainable_blocks: int,
        input_size: int = 64,
        proj_hidden_dim: int = 2048,
        feature_dim: int = 256,
        pixel_side: int = 0,
        pixel_channels: int = 0,
        seed: int = 0,
    ) -> ImageEncoder:
        """Load a registered backbone and attach a freshly initialised projection head.

        ``pixel_side`` > 0 adds the pixel view (``pixel_channels`` 1 for grey, 3 for colour images).
        """
        if (pixel_side > 0) != (pixel_channels > 0):
            raise ValueError(f"a pixel view needs both a side and channels, got {pixel_side} and {pixel_channels}")
        trunk, top = load_split_backbone(backbone, trainable_blocks=trainable_blocks)
        head = ProjectionHead(
            top.feature_dim, proj_hidden_dim, feature_dim, generator=torch.Generator().manual_seed(seed)
        )
        meta = EncoderMeta(backbone, trainable_blocks, input_size, proj_hidden_dim, feature_dim, pixel_side,
                           pixel_channels)
        return cls(meta, trunk, top, head)

    @property
    def feature_dim(self) -> int:
        """Size of the search features (:meth:`encode`): the projection plus the pixel view, if any."""
        return self.meta.feature_dim + self.meta.pixel_channels * self.meta.pixel_side**2

    @property
    def projected_dim(self) -> int:
        return self.meta.feature_dim

    @property
    def pooled_dim(self) -> int:
        return self.top.feature_dim

    def prepare(self, images: torch.Tensor) -> torch.Tensor:
        """Float images (N, C, H, W) in [0, 1] → backbone input at this encoder's size."""
        return backbone_input(images, size=self.meta.input_size)

    def trunk_activations(self, images: torch.Tensor) -> torch.Tensor:
        """Frozen trunk output for float images in [0, 1]; cacheable, since it never trains."""
        with torch.no_grad():
            return self.trunk(self.prepare(images))

    def trunk_runner(self, images: int) -> Callable[[torch.Tensor], torch.Tensor]:
        """:meth:`trunk_activations` for a job of ``images`` images (a frozen copy for a large one, :mod:`.bulk`)."""
        return inference_runner(_PreparedTrunk(self.trunk, self.meta.input_size), images,  # type: ignore[return-value]
                                side=self.meta.input_size)

    def view_bank(self, images: np.ndarray, *, views: int, augment: AugmentConfig, generator: torch.Generator,
                  progress: bool = False, desc: str = "caching views") -> torch.Tensor:
        """Trunk activations of ``views`` augmented views of every uint8 image, (N, K, C, h, w): what the trainable
        top and head (:class:`~pcevolve.encoders.per_sample.Projector`) are trained on (:func:`build_view_bank`)."""
        augmentation = ImageAugmentation(strength=augment.strength, crop=augment.crop, flip=augment.flip,
                                         color_jitter=augment.color_jitter, blur=augment.blur)
        return build_view_bank(self, images, views=views, augmentation=augmentation, generator=generator,
                               progress=progress, desc=desc)

    def forward(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Float images in [0, 1] → (pooled, projected)."""
        pooled = self.top(self.trunk(self.prepare(images)))
        return pooled, self.head(pooled)

    def join(self, projected: torch.Tensor, images: torch.Tensor) -> torch.Tensor:
        """Search features from the projection of float ``images`` (N, C, H, W) in [0, 1] and the images."""
        if self.meta.pixel_side == 0:
            return projected
        if images.shape[1] != self.meta.pixel_channels:
            raise ValueError(f"this encoder's pixel view takes {self.meta.pixel_channels}-channel images, "
                             f"got {images.shape[1]}")
        pixels = pixel_view(images, side=self.meta.pixel_side)
        return torch.cat([F.normalize(projected, dim=1), F.normalize(pixels, dim=1)], dim=1) / math.sqrt(2.0)

    def search_features(self, images: torch.Tensor) -> torch.Tensor:
        """Float images in [0, 1] → the search features, differentiably (a decoder's consistency loss)."""
        return self.join(self(images)[1], images)

    @torch.no_grad()
    def encode_both(
        self, samples: np.ndarray, *, batch_size: int = 128, progress: bool = False, job_size: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """uint8 dataset images → (pooled, search features) float32 arrays, computed in batches.

        ``job_size``: the size of the whole job when this call encodes one shard of it (an executor's worker), so
        the shard runs the same way (eager or the bulk copy) as the whole job would and gives the same floats.
        """
        pooled_parts, feature_parts = [], []
        forward = inference_runner(self, len(samples) if job_size is None else job_size, side=self.meta.input_size)
        for batch in _batches(samples, batch_size, progress=progress, desc="encoding"):
            images = to_float_images(batch)
            pooled, projected = forward(images)  # type: ignore[misc]
            pooled_parts.append(pooled.numpy())
            feature_parts.append(self.join(projected, images).numpy())
        if not pooled_parts:
            return np.zeros((0, self.pooled_dim), np.float32), np.zeros((0, self.feature_dim), np.float32)
        return np.concatenate(pooled_parts), np.concatenate(feature_parts)

    def encode(self, samples: np.ndarray) -> np.ndarray:
        """uint8 dataset images → search features (N, feature_dim)."""
        return self.encode_both(samples)[1]

    def trainable_state(self) -> dict[str, torch.Tensor]:
        """Weights that fine-tuning may change: the top blocks and the head (the trunk is frozen)."""
        state = {f"top.{k}": v for k, v in self.top.state_dict().items()}
        state.update({f"head.{k}": v for k, v in self.head.state_dict().items()})
        return {k: v.detach().contiguous().clone() for k, v in state.items()}

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write ``encoder.safetensors`` and ``encoder.json`` into ``folder`` (atomically)."""
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        # Serialised in memory, written by one atomic write: a full disk raises OSError and leaves no half file.
        atomic_write_bytes(target / "encoder.safetensors", save_safetensors(self.trainable_state()))
        atomic_write_json(target / "encoder.json", asdict(self.meta))
        return target

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> ImageEncoder:
        """Rebuild an encoder saved by :meth:`save`: pretrained trunk from its package, saved top and head."""
        source = Path(folder)
        meta = EncoderMeta(**read_json(source / "encoder.json"))
        if meta.backbone not in BACKBONES:
            raise ValueError(f"{source}/encoder.json names unknown backbone {meta.backbone!r}")
        encoder = cls.pretrained(
            meta.backbone,
            trainable_blocks=meta.trainable_blocks,
            input_size=meta.input_size,
            proj_hidden_dim=meta.proj_hidden_dim,
            feature_dim=meta.feature_dim,
            pixel_side=meta.pixel_side,
            pixel_channels=meta.pixel_channels,
        )
        state = load_file(str(source / "encoder.safetensors"))
        top = {k[len("top."):]: v for k, v in state.items() if k.startswith("top.")}
        head = {k[len("head."):]: v for k, v in state.items() if k.startswith("head.")}
        encoder.top.load_state_dict(top, strict=True)
        encoder.head.load_state_dict(head, strict=True)
        return encoder


class _PreparedTrunk(nn.Module):
    """Resize to the backbone's input, then the frozen trunk: the module a bulk trunk job traces."""

    def __init__(self, trunk: BackboneTrunk, input_size: int) -> None:
        super().__init__()
        self.trunk = trunk
        self.input_size = input_size

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.trunk(backbone_input(images, size=self.input_size))


def _batches(samples: np.ndarray, batch_size: int, *, progress: bool, desc: str) -> Iterator[np.ndarray]:
    starts = range(0, len(samples), batch_size)
    bar = progress_bar(len(samples), desc, "img", enabled=progress)
    for start in starts:
        batch = samples[start : start + batch_size]
        yield batch
        bar.update(len(batch))
    bar.close()
