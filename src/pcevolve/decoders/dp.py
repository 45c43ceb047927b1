"""Optional DP-SGD fine-tuning of a public decoder on the private set (``training: public-then-dp``).

Each private sample's loss is the reconstruction (BCE) of that image from its own encoder
feature. Per-sample gradients are materialised with ``torch.func`` (``vmap(grad(...))`` over
samples) and handed to :class:`~pcevolve.privacy.DPSGDMechanism`, which clips, sums and noises
them; the ledger's ``decoder`` stage pays for each epoch of steps *before* it runs, and batches
are Poisson-sampled from the same noise source.

Neighbouring relation: the ledger's (add/remove-one private sample by default; replace-one is
covered by the accountant when configured). Sensitivity: sample i's gradient depends only on
(x_i, encoder(x_i)) and on weights that are public or earlier DP outputs (the encoder is a
released stage-2 output, so using it is post-processing); the GroupNorm generator never mixes
samples. Each per-sample gradient (all parameters concatenated) is clipped to L2 norm C before
summing, so one sample moves the sum by at most C, and N(0, (σC)²) noise is added per coordinate.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

from pcevolve.encoders.preprocess import to_float_images
from pcevolve.privacy import BudgetLedger, NoiseSource
from pcevolve.privacy.calibration import decoder_sigma
from pcevolve.privacy.dpsgd_resume import DPCheckpoint, noise_state, resume
from pcevolve.progress import progress_bar

if TYPE_CHECKING:
    from pcevolve.decoders.conv import ConvImageDecoder
    from pcevolve.encoders import ImageEncoder

logger = logging.getLogger(__name__)

STAGE = "decoder"


@dataclass(frozen=True)
class DPDecoderResult:
    """What DP fine-tuning did. ``private_loss`` is computed from private data and is not a DP release."""

    noise_multiplier: float
    sampling_probability: float
    steps: int
    stage_epsilon: float
    seconds: float
    private_loss: float


def per_sample_gradients(network: torch.nn.Module, features: torch.Tensor,
                         images: torch.Tensor) -> list[torch.Tensor]:
    """Gradient of each sample's own reconstruction loss, one (B, *param.shape) tensor per trainable parameter."""
    names = [name for name, p in network.named_parameters() if p.requires_grad]
    params = {name: p.detach() for name, p in network.named_parameters() if p.requires_grad}
    if len(features) == 0:
        return [torch.zeros((0, *params[name].shape)) for name in names]

    def loss_one(weights: dict[str, torch.Tensor], feature: torch.Tensor, image: torch.Tensor) -> torch.Tensor:
        logits = functional_call(network, weights, (feature[None],))
        return F.binary_cross_entropy_with_logits(logits, image[None])

    grads = vmap(grad(loss_one), in_dims=(None, 0, 0))(params, features, images)
    return [grads[name] for name in names]


def fine_tune_dp(decoder: "ConvImageDecoder", private_samples: np.ndarray, *, encoder: "ImageEncoder",
                 ledger: BudgetLedger, noise: NoiseSource, progress: bool = False,
                 checkpoint: Path | None = None) -> DPDecoderResult:
    """DP-SGD fine-tuning of ``decoder.network`` on private samples, paid from the ledger's ``decoder`` stage.

    Args:
        decoder: A (publicly trained) decoder; trained in place.
        private_samples: uint8 private images shaped like the decoder's samples.
        encoder: The frozen encoder giving each private sample's feature.
        ledger: Pays for every epoch before it runs.
        noise: Gaussian noise and Poisson sampling (secure mode in production).
        progress: Show a progress bar.
        checkpoint: File for a checkpoint after every paid epoch; training resumes from it and the ledger
            (:mod:`pcevolve.privacy.dpsgd_resume`: a paid, interrupted epoch is never paid again).

    Returns:
        σ, q, steps taken, the stage's ε spent, time and the (non-released) mean private loss.

    Raises:
        BudgetExceeded: The stage cannot pay for the planned steps; raised before any step runs
            (a stage budget of 0 always refuses).
    """
    config = decoder.config
    samples = np.asarray(private_samples)
    if samples.dtype != np.uint8 or samples.shape[1:] != decoder.sample_shape:
        raise ValueError(f"expected uint8 samples of shape (N, {decoder.sample_shape}), got {samples.dtype} "
                         f"{samples.shape}")
    n = len(samples)
    sigma, plan = decoder_sigma(ledger, config, n)
    q, planned, per_epoch = plan.sampling_probability, plan.steps, plan.steps_per_epoch
    network = decoder.network
    params = [p for p in network.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=config.dp_learning_rate)
    resumed = resume(ledger, STAGE, sigma=sigma, sampling_probability=q, clip_norm=config.clip_norm, num_samples=n,
                     noise=noise, checkpoint=checkpoint)
    mechanism, saved = resumed.mechanism, resumed.saved
    sigma, q = mechanism.noise_multiplier, mechanism.sampling_probability
    unpaid = planned - mechanism.steps_paid
    if unpaid > 0 and not ledger.can_afford(STAGE, mechanism.event(unpaid)):
        mechanism.charge(ledger, STAGE, unpaid, noise=noise)  # raises BudgetExceeded and records nothing
    losses: list[float] = []
    if saved is not None:
        network.load_state_dict(saved.modules["network"])
        optimizer.load_state_dict(saved.modules["optimizer"])
        losses = list(saved.extra["losses"])
    if resumed.lost_steps:
        logger.warning("decoder: DP epoch %d was paid for and interrupted; its %d steps are counted as spent",
                       resumed.epoch - 1, resumed.lost_steps)
    logger.info("decoder: DP-SGD σ = %.4g, q = %.4g, %d steps (%d taken)", sigma, q, planned, mechanism.steps_taken)

    started = time.perf_counter()
    was_training = encoder.training
    encoder.eval()
    try:
        _, projected = encoder.encode_both(samples, batch_size=256)
    finally:
        encoder.train(was_training)
    features = torch.from_numpy(projected)
    images = to_float_images(samples)
    bar = progress_bar(planned, "decoder (DP)", "step", enabled=progress, initial=mechanism.steps_taken)
    network.train()
    try:
        epoch = resumed.epoch
        while mechanism.steps_taken < planned:
            grant = min(per_epoch, planned - mechanism.steps_taken)
            if mechanism.steps_left < grant:  # not paid yet (a paid one is a re-run with reproducible noise)
                mechanism.charge(ledger, STAGE, grant - mechanism.steps_left,
                                 description=f"decoder DP-SGD epoch {epoch}", noise=noise)
            for _ in range(grant):
                rows = torch.from_numpy(mechanism.sample_batch(noise))
                grads = per_sample_gradients(network, features[rows], images[rows])
                noisy, _ = mechanism.noisy_gradient(grads, noise)
                for p, g in zip(params, noisy, strict=True):
                    p.grad = g
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                if len(rows):
                    with torch.no_grad():
                        losses.append(F.binary_cross_entropy_with_logits(network(features[rows]), images[rows]).item())
                bar.update(1)
            epoch += 1
            if checkpoint is not None:
                DPCheckpoint(epoch=epoch, steps_taken=mechanism.steps_taken,
                             modules={"network": network.state_dict(), "optimizer": optimizer.state_dict()},
                             noise_state=noise_state(noise), extra={"losses": losses}).save(checkpoint)
    finally:
        bar.close()
        network.eval()
    return DPDecoderResult(noise_multiplier=sigma, sampling_probability=q, steps=mechanism.steps_taken,
                           stage_epsilon=ledger.spent(STAGE), seconds=time.perf_counter() - started,
                           private_loss=float(np.mean(losses[-per_epoch:])) if losses else float("nan"))
