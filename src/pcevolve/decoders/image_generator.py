"""What the image decoders that draw with one torch network share (``conv``, ``pixel-view``).

Each subclass builds its network (:meth:`NetworkImageDecoder.build_network`) and maps features to float images in
[0, 1] (:meth:`~NetworkImageDecoder.decode_float`); this class holds the rest of the :class:`Decoder` contract for
them: the sample shape, dataset-shaped uint8 output, the checks of public training inputs, and the folder of
weights and metadata (:meth:`~NetworkImageDecoder.save_meta` / :meth:`~NetworkImageDecoder.restore` for fields a
subclass learns besides its weights).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from pcevolve.config import DecoderConfig
from pcevolve.decoders.base import META_FILE, decoder_from_meta, load_weights, save_weights, write_decoder_meta
from pcevolve.decoders.round_trips import LearnedRoundTrip
from pcevolve.io import read_json


class NetworkImageDecoder(LearnedRoundTrip):
    """An image decoder whose weights are one torch network, built from ``seed``.

    Args:
        config: Decoder hyper-parameters.
        feature_dim: Size of the encoder's search features.
        sample_shape: One sample's shape: (H, W) grey or (H, W, C) colour.
        seed: Initial weights.
    """

    modalities: ClassVar[tuple[str, ...]] = ("image",)

    def __init__(self, config: DecoderConfig, *, feature_dim: int, sample_shape: tuple[int, ...], seed: int) -> None:
        if len(sample_shape) not in (2, 3):
            raise ValueError(f"sample_shape must be (H, W) or (H, W, C), got {sample_shape}")
        self.config = config
        self.feature_dim = int(feature_dim)
        self.sample_shape = tuple(int(s) for s in sample_shape)
        self.seed = seed
        self.channels = self.sample_shape[2] if len(self.sample_shape) == 3 else 1
        self.network = self.build_network(torch.Generator().manual_seed(seed))
        self.network.eval()

    def build_network(self, generator: torch.Generator) -> nn.Module:
        """The untrained network, its initial weights drawn from ``generator``."""
        raise NotImplementedError

    def decode_float(self, features: np.ndarray) -> torch.Tensor:
        """Features (N, feature_dim) → float images (N, C, H, W) in [0, 1] (what the encoder takes)."""
        raise NotImplementedError

    def decode(self, features: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
        """Features (N, feature_dim) → uint8 images shaped like the dataset; ``labels`` are accepted for the
        interface and ignored (the class is carried by the feature)."""
        if labels is not None and len(labels) != len(features):
            raise ValueError(f"{len(labels)} labels for {len(features)} features")
        images = (self.decode_float(features) * 255.0).round().clamp(0, 255).to(torch.uint8)
        images = images.permute(0, 2, 3, 1).numpy()
        return images[..., 0] if len(self.sample_shape) == 2 else images

    def public_training_samples(self, public_samples: np.ndarray, encoder: Any) -> np.ndarray:
        """``public_samples`` as an array, checked against this decoder and ``encoder`` before training.

        Raises:
            ValueError: Not uint8 samples of the decoder's shape, or an encoder of another feature size.
        """
        samples = np.asarray(public_samples)
        if samples.dtype != np.uint8 or samples.shape[1:] != self.sample_shape:
            raise ValueError(f"expected uint8 samples of shape (N, {self.sample_shape}), "
                             f"got {samples.dtype} {samples.shape}")
        if encoder.feature_dim != self.feature_dim:
            raise ValueError(f"encoder gives {encoder.feature_dim}-d features, decoder expects {self.feature_dim}")
        return samples

    def save_meta(self) -> dict[str, Any]:
        """Fields learnt besides the weights, for ``decoder.json`` (:meth:`restore` reads them back)."""
        return {}

    def restore(self, meta: dict[str, Any]) -> None:
        """Take back what :meth:`save_meta` wrote (``meta``: the whole ``decoder.json``)."""

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write ``decoder.safetensors`` and ``decoder.json`` into ``folder`` (atomically)."""
        target = Path(folder)
        extra = self.save_meta()
        save_weights(target, self.network)
        write_decoder_meta(target, self, **extra)
        return target

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> NetworkImageDecoder:
        """Rebuild a decoder written by :meth:`save`; its ``decode`` gives identical output."""
        source = Path(folder)
        decoder = decoder_from_meta(cls, source)
        decoder.restore(read_json(source / META_FILE))
        load_weights(decoder.network, source)
        return decoder
