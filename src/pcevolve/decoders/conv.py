"""The default image decoder (registry key ``"conv"``): projected feature → image, trained on public data."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np
import torch

from pcevolve.decoders.base import DecoderTrainingResult
from pcevolve.decoders.image_generator import NetworkImageDecoder
from pcevolve.decoders.network import ConvGenerator
from pcevolve.decoders.training import train_public

if TYPE_CHECKING:
    from pcevolve.encoders import ImageEncoder
    from pcevolve.executors import Executor


class ConvImageDecoder(NetworkImageDecoder):
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

    def build_network(self, generator: torch.Generator) -> ConvGenerator:
        height, width_px = self.sample_shape[:2]
        return ConvGenerator(self.feature_dim, height=height, width_px=width_px, channels=self.channels,
                             width=self.config.width, generator=generator)

    def fit(self, public_samples: np.ndarray, *, encoder: "ImageEncoder", seed: int, progress: bool = False,
            executor: Executor | None = None) -> DecoderTrainingResult:
        """Train on public samples only (free, nothing is charged); see :mod:`pcevolve.decoders.training`."""
        samples = self.public_training_samples(public_samples, encoder)
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
            return torch.zeros((0, self.channels, *self.sample_shape[:2]))
        return torch.cat(parts)
