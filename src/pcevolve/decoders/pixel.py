"""The pixel-view decoder (registry key ``"pixel-view"``): draw the image a search feature's own pixel view holds.

An image encoder with a pixel view (``representation.pixel_view``) keeps the image itself, averaged down to
``side`` × ``side``, inside every search feature (:mod:`pcevolve.encoders.pixel_view`). A feature the search
asks for therefore already says what its image looks like, in whatever detail the search basis keeps: this
decoder reads that block, gives it the public pool's typical brightness, brings it to the dataset's size and
lets a small convolutional network put back the fine detail a low-frequency image lacks.

Why not a network from the whole feature (``conv``): such a network learns the public pool's shapes and draws
them for every feature — with a pool of shoes, bags and shirts, a "trouser" feature came out as a shirt-like blob.
Here the shape is read, not learnt; the network only sharpens, one neighbourhood of pixels at a time, so it has
no shapes of its own to impose. With ``search.pixel_frequencies`` the basis keeps the pixel view's low spatial
frequencies whatever the public pool shows, so the release and the search can carry shapes the pool lacks.

Trained on public images only (free); nothing private is read, so it cannot be trained under DP and need not be.
"""

from __future__ import annotations

import logging
import math
import time
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from pcevolve.decoders.base import DecoderTrainingResult
from pcevolve.decoders.image_generator import NetworkImageDecoder
from pcevolve.encoders.pixel_view import PixelLayout, cosine_matrix
from pcevolve.encoders.preprocess import pixel_view, to_float_images
from pcevolve.encoders.reencode import reencode_check
from pcevolve.progress import progress_bar

if TYPE_CHECKING:
    from pcevolve.encoders import ImageEncoder
    from pcevolve.executors import Executor

logger = logging.getLogger(__name__)

#: Public images whose round trip (decode → re-encode) is measured after training, for the training record.
_CHECK_IMAGES = 64


class Sharpener(nn.Module):
    """Image → image + a residual of 3×3 convolutions (one dilated): local detail only, no global shape.

    Its receptive field is 11 × 11 pixels, so it cannot carry a shape from one part of the image to another.
    """

    def __init__(self, channels: int, *, width: int, generator: torch.Generator) -> None:
        super().__init__()
        self.layers = nn.ModuleList([
            nn.Conv2d(channels, width, 3, padding=1), nn.Conv2d(width, width, 3, padding=1),
            nn.Conv2d(width, width, 3, padding=2, dilation=2), nn.Conv2d(width, width, 3, padding=1),
            nn.Conv2d(width, channels, 3, padding=1)])
        with torch.no_grad():
            for layer in self.layers:
                bound = 1.0 / layer.weight[0].numel() ** 0.5  # PyTorch's default bounds, drawn from our generator
                layer.weight.uniform_(-bound, bound, generator=generator)
                layer.bias.uniform_(-bound, bound, generator=generator)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = images
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return images + self.layers[-1](x)


def _unit_images(images: torch.Tensor) -> torch.Tensor:
    """Each image (N, C, h, w) scaled to unit length (all zeros stay zeros)."""
    norms = images.flatten(1).norm(dim=1).clamp_min(1e-12)
    return images / norms[:, None, None, None]


class PixelViewDecoder(NetworkImageDecoder):
    """Search feature → its pixel view at the public pool's brightness → dataset size → sharpened uint8 image.

    ``labels`` passed to :meth:`decode` are accepted for the interface and ignored: the feature carries the image.
    :meth:`fit` must run first (it reads the pixel view's place in the features from the encoder).

    Args:
        config: Decoder hyper-parameters (``width``, ``epochs``, ``batch_size``, ``learning_rate``,
            ``public_images``, ``feature_noise``: the relative noise the sharpener learns to ignore).
        feature_dim: Size of the encoder's search features.
        sample_shape: One sample's shape: (H, W) grey or (H, W, C) colour.
        seed: Initial weights.
    """

    name: ClassVar[str] = "pixel-view"
    trainable_under_dp: ClassVar[bool] = False  # it reads the feature's pixels; what it learns is sharpening
    #: It decodes the encoder's pixel view, so a config without one is refused when it is loaded.
    needs_pixel_view: ClassVar[bool] = True
    #: Where the pixel view sits in the features (from the encoder, in :meth:`fit`).
    layout: PixelLayout | None = None
    #: The public pool's median length of a pixel view (its images in [0, 1]): the brightness decoded images get.
    brightness: float | None = None

    def build_network(self, generator: torch.Generator) -> Sharpener:
        return Sharpener(self.channels, width=self.config.width, generator=generator)

    # --- decoding ------------------------------------------------------------------------------------------------

    def _ready(self) -> PixelLayout:
        if self.layout is None or self.brightness is None:
            raise RuntimeError("the pixel-view decoder decodes only after fit (it learns where the pixel view is)")
        return self.layout

    def _render(self, views: torch.Tensor) -> torch.Tensor:
        """Unit pixel views (N, C, side, side) → float images (N, C, H, W), unclamped, before sharpening."""
        images = views * self.brightness
        height, width = self.sample_shape[:2]
        if images.shape[-2:] != (height, width):
            images = F.interpolate(images, size=(height, width), mode="bilinear", align_corners=False)
        return images

    @torch.no_grad()
    def decode_float(self, features: np.ndarray, *, batch_size: int = 512) -> torch.Tensor:
        """Features → float images (N, C, H, W) in [0, 1] (what the encoder takes)."""
        layout = self._ready()
        feats = np.asarray(features, dtype=np.float32)
        if feats.ndim != 2 or feats.shape[1] != self.feature_dim:
            raise ValueError(f"expected features (N, {self.feature_dim}), got {feats.shape}")
        views = torch.from_numpy(layout.images(feats).astype(np.float32))
        self.network.eval()
        parts = [self.network(self._render(views[i : i + batch_size])).clamp(0.0, 1.0)
                 for i in range(0, len(views), batch_size)]
        if not parts:
            return torch.zeros((0, self.channels, *self.sample_shape[:2]))
        return torch.cat(parts)

    # --- training (public only) ----------------------------------------------------------------------------------

    def fit(self, public_samples: np.ndarray, *, encoder: ImageEncoder, seed: int, progress: bool = False,
            executor: Executor | None = None) -> DecoderTrainingResult:
        """Learn the brightness and the sharpener from public samples only (free, nothing is charged).

        The sharpener sees what decoding will give it — a public image's pixel view with only its lowest
        spatial frequencies kept (a random cut-off per image, so it serves any search basis), plus noise of
        relative size up to ``feature_noise``, at the common brightness — and learns to return the image itself
        at that brightness.

        Raises:
            ValueError: Samples of the wrong shape, or an encoder without a pixel view.
        """
        samples = self.public_training_samples(public_samples, encoder)
        layout = PixelLayout.of(encoder.meta)
        if layout is None:
            raise ValueError("the pixel-view decoder needs an encoder with a pixel view (representation.pixel_view "
                             "above 0)")
        rng = np.random.default_rng(seed)
        generator = torch.Generator().manual_seed(seed)
        if len(samples) > self.config.public_images:
            samples = samples[np.sort(rng.choice(len(samples), self.config.public_images, replace=False))]
        if len(samples) == 0:
            raise ValueError("no public samples to train the decoder on")
        started = time.perf_counter()
        images = to_float_images(samples)
        views = pixel_view(images, side=layout.side).view(-1, layout.channels, layout.side, layout.side)
        norms = views.flatten(1).norm(dim=1)
        self.layout, self.brightness = layout, float(norms.median())
        targets = images * (self.brightness / norms.clamp_min(1e-12))[:, None, None, None]
        losses = self._train_sharpener(views, targets, generator=generator, progress=progress)
        seconds = {"training": time.perf_counter() - started}
        started = time.perf_counter()
        consistency = self._round_trip_cosine(samples[:_CHECK_IMAGES], encoder)
        seconds["check"] = time.perf_counter() - started
        tail = max(1, len(losses) // 10)
        logger.info("pixel-view decoder trained on %d public images in %.1fs", len(samples), sum(seconds.values()))
        return DecoderTrainingResult(steps=len(losses), images=len(samples), seconds=seconds,
                                     final_consistency=consistency,
                                     final_reconstruction=float(np.mean(losses[-tail:])) if losses else float("nan"))

    def _train_sharpener(self, views: torch.Tensor, targets: torch.Tensor, *, generator: torch.Generator,
                         progress: bool) -> list[float]:
        config, side = self.config, views.shape[-1]
        cosines = torch.from_numpy(cosine_matrix(side).astype(np.float32))
        steps_per_epoch = -(-len(views) // config.batch_size)
        optimizer = torch.optim.Adam(self.network.parameters(), lr=config.learning_rate)
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps_per_epoch * config.epochs)
        bar = progress_bar(steps_per_epoch * config.epochs, "decoder (public)", "step", enabled=progress)
        losses: list[float] = []
        self.network.train()
        for _ in range(config.epochs):
            order = torch.randperm(len(views), generator=generator)
            for start in range(0, len(views), config.batch_size):
                rows = order[start : start + config.batch_size]
                inputs = self._render(_blurred(views[rows], cosines, noise=config.feature_noise, generator=generator))
                loss = F.mse_loss(self.network(inputs), targets[rows])
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                schedule.step()
                losses.append(loss.item())
                bar.update(1)
                bar.set_postfix(mse=f"{losses[-1]:.4f}")
        bar.close()
        self.network.eval()
        return losses

    def _round_trip_cosine(self, samples: np.ndarray, encoder: ImageEncoder) -> float:
        """Mean cosine between public samples' features and the features of their decoded images."""
        _, features = encoder.encode_both(samples, batch_size=256)
        return float(np.mean(reencode_check(encoder, self.decode(features), features).cosine))

    # --- files ---------------------------------------------------------------------------------------------------

    def save_meta(self) -> dict[str, Any]:
        """The pixel layout and the brightness (``decoder.json``), read back by :meth:`restore`."""
        layout = self._ready()
        return {"pixel_layout": {"offset": layout.offset, "channels": layout.channels, "side": layout.side},
                "brightness": self.brightness}

    def restore(self, meta: dict[str, Any]) -> None:
        self.layout = PixelLayout(**{k: int(v) for k, v in meta["pixel_layout"].items()})
        self.brightness = float(meta["brightness"])


def _blurred(views: torch.Tensor, cosines: torch.Tensor, *, noise: float, generator: torch.Generator) -> torch.Tensor:
    """Unit pixel views with only each one's k × k lowest spatial frequencies kept (k drawn per image between a
    quarter of the side and the whole side) plus white noise of relative norm up to ``noise``, unit again."""
    side = views.shape[-1]
    cutoffs = torch.randint(max(1, side // 4), side + 1, (len(views),), generator=generator)
    keep = (torch.arange(side)[None, :] < cutoffs[:, None]).float()  # (N, side): frequencies kept per image
    spectrum = cosines @ views @ cosines.T  # (N, C, side, side) 2-D DCT
    spectrum = spectrum * keep[:, None, :, None] * keep[:, None, None, :]
    blurred = cosines.T @ spectrum @ cosines
    if noise > 0:
        levels = torch.rand(len(views), generator=generator) * noise / math.sqrt(views[0].numel())
        blurred = blurred + torch.randn(blurred.shape, generator=generator) * levels[:, None, None, None]
    return _unit_images(blurred)
