"""Free public training of an image decoder: reconstruction plus feature consistency.

The public pool is encoded once with the frozen encoder (features cached). Each step decodes a
batch of (noised) features and pays a pixel reconstruction loss (BCE); every
``consistency_every``-th step a sub-batch of decoded images is re-encoded, differentiably,
through the frozen encoder and the decoder is pushed to maximise cosine(requested, re-encoded),
so decoded images land where the search put them. Input-feature noise (relative norm
``feature_noise``) makes the decoder robust to points the search moves off the data manifold;
the consistency target is the *noised* feature, the reconstruction target the clean image.

Only public samples enter here; nothing is charged to the ledger.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F

from pcevolve.config import DecoderConfig
from pcevolve.decoders.base import DecoderTrainingResult
from pcevolve.decoders.network import ConvGenerator
from pcevolve.encoders.preprocess import to_float_images
from pcevolve.progress import progress_bar

if TYPE_CHECKING:
    from pcevolve.encoders import ImageEncoder

logger = logging.getLogger(__name__)


@contextlib.contextmanager
def frozen(encoder: "ImageEncoder") -> Iterator["ImageEncoder"]:
    """Eval mode and no parameter gradients for the duration; gradients still flow to the input."""
    was_training = encoder.training
    flags = [(p, p.requires_grad) for p in encoder.parameters()]
    encoder.eval()
    for p, _ in flags:
        p.requires_grad_(False)
    try:
        yield encoder
    finally:
        for p, flag in flags:
            p.requires_grad_(flag)
        encoder.train(was_training)


def noisy_features(features: torch.Tensor, scale: float, generator: torch.Generator) -> torch.Tensor:
    """Unit-normalised features plus isotropic noise of relative norm ≈ ``scale``."""
    unit = F.normalize(features, dim=-1)
    if scale == 0.0:
        return unit
    noise = torch.randn(unit.shape, generator=generator) * (scale / unit.shape[-1] ** 0.5)
    return unit + noise


def train_public(network: ConvGenerator, public_samples: np.ndarray, *, encoder: "ImageEncoder",
                 config: DecoderConfig, seed: int, progress: bool = False) -> DecoderTrainingResult:
    """Train ``network`` in place on public samples only.

    Args:
        network: The generator to train.
        public_samples: uint8 public images (N, H, W) or (N, H, W, C); a seeded subset of
            ``config.public_images`` is used when there are more.
        encoder: The frozen encoder whose projected space the decoder inverts; never trained here.
        config: Hyper-parameters (``DecoderConfig``).
        seed: Drives the subset, the batch order and the input noise.
        progress: Show a progress bar.

    Returns:
        Steps, images, timings and the final consistency / reconstruction losses.
    """
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(seed)
    samples = np.asarray(public_samples)
    if len(samples) > config.public_images:
        samples = samples[np.sort(rng.choice(len(samples), config.public_images, replace=False))]
    if len(samples) == 0:
        raise ValueError("no public samples to train the decoder on")

    started = time.perf_counter()
    with frozen(encoder):
        _, projected = encoder.encode_both(samples, batch_size=256, progress=progress)
    features = torch.from_numpy(projected)
    targets = to_float_images(samples)
    seconds = {"features": time.perf_counter() - started}

    started = time.perf_counter()
    steps_per_epoch = -(-len(samples) // config.batch_size)
    total = steps_per_epoch * config.epochs
    optimizer = torch.optim.Adam(network.parameters(), lr=config.learning_rate)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total)
    recon_log: list[float] = []
    consistency_log: list[float] = []
    network.train()
    bar = progress_bar(total, "decoder (public)", "step", enabled=progress)
    step = 0
    with frozen(encoder):
        for _ in range(config.epochs):
            order = torch.randperm(len(samples), generator=generator)
            for start in range(0, len(samples), config.batch_size):
                rows = order[start : start + config.batch_size]
                inputs = noisy_features(features[rows], config.feature_noise, generator)
                logits = network(inputs)
                loss = F.binary_cross_entropy_with_logits(logits, targets[rows])
                recon_log.append(loss.item())
                if config.consistency_weight > 0 and step % config.consistency_every == 0:
                    sub = slice(0, config.consistency_batch)
                    again = encoder.search_features(torch.sigmoid(logits[sub]))
                    cosine = F.cosine_similarity(again, inputs[sub], dim=-1).mean()
                    loss = loss + config.consistency_weight * (1.0 - cosine)
                    consistency_log.append(cosine.item())
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                schedule.step()
                step += 1
                bar.update(1)
                if consistency_log:
                    bar.set_postfix(recon=f"{recon_log[-1]:.3f}", cos=f"{consistency_log[-1]:.3f}")
    bar.close()
    network.eval()
    seconds["training"] = time.perf_counter() - started
    tail = max(1, len(consistency_log) // 10)
    result = DecoderTrainingResult(
        steps=step, images=len(samples), seconds=seconds,
        final_consistency=float(np.mean(consistency_log[-tail:])) if consistency_log else float("nan"),
        final_reconstruction=float(np.mean(recon_log[-max(1, len(recon_log) // 10):])),
    )
    logger.info("decoder trained on %d public images in %.1fs", len(samples), result.total_seconds)
    return result
