"""The default image decoder (registry key ``"conv"``): projected feature → image, trained on public data."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import torch
from safetensors.torch import load_file
from safetensors.torch import save as save_safetensors

from pcevolve.config import DecoderConfig
from pcevolve.decoders.base import (
    DecoderTrainingResult,
    decoder_from_meta,
    write_decoder_meta,
)
from pcevolve.decoders.network import ConvGenerator
from pcevolve.decoders.round_trips import LearnedRoundTrip
from pcevolve.decoders.training import train_public
from pcevolve.io import atomic_write_bytes

if TYPE_CHECKING:
    from pcevolve.encoders import ImageEncoder

_WEIGHTS = "decoder.safetensors"


class ConvImageDecoder(LearnedRoundTrip):
    """Lightweight conditional generator: the search's feature vector → a dataset-shaped uint8 image.

    Conditioned on the feature vector only; the public pool it trains on is unlabelled, so
    ``labels`` passed to :meth:`decode` are accepted for the interface and ignored (the class is
    carried by the feature, and :func:`~pcevolve.decoders.reencode_check` verifies it).

    Args:
        config: Decoder hyper-parameters.
        feature_dim: Size of the encoder's projected features.
        sample_shape: One sample's shape: (H, W) grey or (H, W, C) colour.
        seed: Initial weights.
    """

    name: ClassVar[str] = "conv"
    modalities: ClassVar[tuple[str, ...]] = ("image",)

    def __init__(self, config: DecoderConfig, *, feature_dim: int, sample_shape: tuple[int, ...], seed: int) -> None:
        if len(sample_shape) not in (2, 3):
            raise ValueError(f"sample_shape must be (H, W) or (H, W, C), got {sample_shape}")
        self.config = config
        self.feature_dim = int(feature_dim)
        self.sample_shape = tuple(int(s) for s in sample_shape)
        self.seed = seed
        height, width_px = self.sample_shape[:2]
        channels = self.sample_shape[2] if len(self.sample_shape) == 3 else 1
        self.network = ConvGenerator(self.feature_dim, height=height, width_px=width_px, channels=channels,
                                     width=config.width, generator=torch.Generator().manual_seed(seed))
        self.network.eval()

    def fit(self, public_samples: np.ndarray, *, encoder: "ImageEncoder", seed: int,
            progress: bool = False) -> DecoderTrainingResult:
        """Train on public samples only (free, nothing is charged); see :mod:`pcevolve.decoders.training`."""
        samples = np.asarray(public_samples)
        if samples.dtype != np.uint8 or samples.shape[1:] != self.sample_shape:
            raise ValueError(f"expected uint8 samples of shape (N, {self.sample_shape}), "
                             f"got {samples.dtype} {samples.shape}")
        if encoder.feature_dim != self.feature_dim:
            raise ValueError(f"encoder gives {encoder.feature_dim}-d features, decoder expects {self.feature_dim}")
        return train_public(self.network, samples, encoder=encoder, config=self.config, seed=seed, progress=progress)

    @torch.no_grad()
    def decode_float(self, features: np.ndarray | torch.Tensor, *, batch_size: int = 512) -> torch.Tensor:
        """Features → float images (N, C, H, W) in [0, 1] (what the encoder takes)."""
        feats = torch.as_tensor(np.asarray(features, dtype=np.float32))
        if feats.ndim != 2 or feats.shape[1] != self.feature_dim:
            raise ValueError(f"expected features (N, {self.feature_dim}), got {tuple(feats.shape)}")
        self.network.eval()
        parts = [torch.sigmoid(self.network(feats[i : i + batch_size])) for i in range(0, len(feats), batch_size)]
        if not parts:
            return torch.zeros((0, self.network.out.out_channels, *self.sample_shape[:2]))
        return torch.cat(parts)

    def decode(self, features: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
        """Features (N, feature_dim) → uint8 images shaped like the dataset; ``labels`` are ignored."""
        if labels is not None and len(labels) != len(features):
            raise ValueError(f"{len(labels)} labels for {len(features)} features")
        images = (self.decode_float(features) * 255.0).round().clamp(0, 255).to(torch.uint8)
        images = images.permute(0, 2, 3, 1).numpy()
        return images[..., 0] if len(self.sample_shape) == 2 else images

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write ``decoder.safetensors`` and ``decoder.json`` into ``folder`` (atomically)."""
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        state = {k: v.detach().contiguous().clone() for k, v in self.network.state_dict().items()}
        atomic_write_bytes(target / _WEIGHTS, save_safetensors(state))  # in memory, then one atomic write
        write_decoder_meta(target, self)
        return target

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> "ConvImageDecoder":
        """Rebuild a decoder written by :meth:`save`."""
        source = Path(folder)
        decoder = decoder_from_meta(cls, source)
        decoder.network.load_state_dict(load_file(str(source / _WEIGHTS)), strict=True)
        decoder.network.eval()
        return decoder
