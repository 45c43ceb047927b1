"""Stage 2: contrastive representation learning — free on public data, then DP-SGD on private data.

1. **Public pre-training (free).** MoCo on the public pool: two augmented views per
   public image, negatives from a queue of public keys. No private data, no budget.
2. **DP fine-tuning (charged to the ``representation`` stage).** Each private sample
   has a cached bank of K views; a Poisson-sampled batch draws two views per sample,
   per-sample gradients (views summed) are clipped to C, summed and noised by
   :class:`~pcevolve.privacy.DPSGDMechanism`, which the ledger pays for one epoch at
   a time *before* the epoch runs. Negatives stay public throughout (docs/privacy.md).

Which of a sample's views a step uses, and which public keys refill the queue after it, come
from two public generators of their own that advance by public amounts only (views are drawn
for all n samples every step, queue rows for the configured batch size): the private batch
sizes, drawn by the mechanism, never steer a public choice.

σ is either derived by the accountant from the stage budget, epochs and batch size
(``noise_multiplier`` unset), or given — then training runs as many steps as the
ledger accepts and stops cleanly. A stage budget of 0 skips step 2.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import torch

from pcevolve.config import AugmentConfig, RepresentationConfig
from pcevolve.encoders.backbones import BACKBONES, trainable_blocks_for
from pcevolve.encoders.contrastive import MomentumCopy, NegativeQueue
from pcevolve.encoders.diagnostics import CollapseReport, diagnose_collapse
from pcevolve.encoders.encoder import ImageEncoder
from pcevolve.encoders.ghost_norms import GhostNorms
from pcevolve.encoders.per_sample import Projector, contrastive_loss_rows, private_step
from pcevolve.privacy import BudgetLedger, NoiseSource, affordable_steps
from pcevolve.privacy.calibration import representation_sigma
from pcevolve.privacy.dpsgd_resume import DPCheckpoint, noise_state, resume
from pcevolve.progress import progress_bar
from pcevolve.randomness import derived_seed

logger = logging.getLogger(__name__)

Mode = Literal["frozen", "derived", "given"]


@dataclass(frozen=True)
class RepresentationResult:
    """What stage 2 did; the encoder itself is trained in place."""

    mode: Mode
    noise_multiplier: float | None
    sampling_probability: float | None
    steps: int
    stage_epsilon: float
    public_steps: int
    seconds: dict[str, float]
    collapse: CollapseReport | None
    history: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """What may be shared: σ, q, steps, ε and public diagnostics. Not ``seconds``: the private part's time grows
        with the private batch sizes (the pipeline keeps it in ``secure/``)."""
        return {
            "mode": self.mode, "noise_multiplier": self.noise_multiplier,
            "sampling_probability": self.sampling_probability, "steps": self.steps,
            "stage_epsilon": self.stage_epsilon, "public_steps": self.public_steps,
            "collapse": self.collapse.to_json() if self.collapse else None,
        }


def build_encoder(config: RepresentationConfig, *, seed: int, sample_shape: tuple[int, ...]) -> ImageEncoder:
    """The pretrained encoder a config asks for, with its trainable depth and pixel view resolved.

    ``sample_shape`` is one dataset image's shape, (H, W) grey or (H, W, C) colour: the pixel view keeps
    its channels and is at most ``config.pixel_view`` and at most the image's own size a side.
    """
    spec = BACKBONES.get_part(config.backbone)
    blocks = config.trainable_blocks
    if blocks is None:
        blocks = trainable_blocks_for(spec, freeze_fraction=config.freeze_fraction)
    if blocks > spec.n_blocks:
        raise ValueError(f"trainable_blocks {blocks} exceeds the {spec.n_blocks} blocks of {config.backbone}")
    if len(sample_shape) not in (2, 3):
        raise ValueError(f"sample_shape must be (H, W) or (H, W, C), got {sample_shape}")
    side = min(config.pixel_view, *sample_shape[:2])
    channels = (sample_shape[2] if len(sample_shape) == 3 else 1) if side > 0 else 0
    return ImageEncoder.pretrained(config.backbone, trainable_blocks=blocks, input_size=config.input_size,
                                   proj_hidden_dim=config.proj_hidden_dim, feature_dim=config.feature_dim,
                                   pixel_side=side, pixel_channels=channels, seed=seed)


def _optimizer(params: list[torch.nn.Parameter], kind: str, lr: float, weight_decay: float) -> torch.optim.Optimizer:
    if kind == "adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    return torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=weight_decay)


class ContrastiveEncoder(Protocol):
    """What stage 2 trains: a frozen part behind :meth:`view_bank` (cached activations of augmented views), and a
    trainable ``top`` and ``head`` on them. :class:`ImageEncoder` and the text modality's sentence encoder are two."""

    top: torch.nn.Module
    head: torch.nn.Module

    @property
    def projected_dim(self) -> int: ...

    def view_bank(self, samples: np.ndarray, *, views: int, augment: AugmentConfig, generator: torch.Generator,
                  progress: bool = False, desc: str = "caching views") -> torch.Tensor: ...

    def eval(self) -> Any: ...


def train_representation(
    encoder: ContrastiveEncoder,
    private_images: np.ndarray,
    public_images: np.ndarray | None,
    *,
    config: RepresentationConfig,
    augment: AugmentConfig,
    ledger: BudgetLedger,
    noise: NoiseSource,
    seed: int,
    stage: str = "representation",
    progress: bool = False,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    checkpoint: Path | None = None,
) -> RepresentationResult:
    """Run stage 2 on ``encoder`` in place and return what it did.

    Args:
        encoder: A pretrained :class:`ContrastiveEncoder` (its top and head are trained).
        private_images: Private samples; their view bank is read only through the DP-SGD mechanism.
        public_images: Public samples (negatives and free pre-training); required when
            fine-tuning under DP, since negatives may not be private (docs/privacy.md).
        config: Stage settings (σ mode, epochs, batch, clip norm, queue …).
        augment: View augmentation settings.
        ledger: The run's ledger; DP-SGD steps are charged to ``stage``, one epoch at a time.
        noise: Noise and Poisson-sampling source (secure in production).
        seed: Drives augmentations, view choice, queue refills and pre-training order (public
            streams, never the DP noise).
        on_record: Called with one dict per epoch (for the run's records.jsonl).
        checkpoint: File for DP fine-tuning's checkpoint after every paid epoch; if it exists (or the ledger has
            paid steps for ``stage``) training resumes from it (:mod:`pcevolve.privacy.dpsgd_resume`).

    Raises:
        BudgetExceeded: the ledger refused even the first epoch (nothing was trained under DP).
        ValueError: DP fine-tuning was asked for without a public pool.
    """
    record = on_record or (lambda _: None)
    generator = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    seconds: dict[str, float] = {}
    stage_budget = ledger.stages[stage]
    fine_tune = stage_budget > 0 and config.epochs > 0 and len(private_images) > 0
    if fine_tune and (public_images is None or len(public_images) == 0):
        raise ValueError("DP fine-tuning needs a public pool for its negatives (they may not be private); "
                         "give one, or set the representation budget to 0 to keep the pretrained encoder")

    projector = Projector(encoder.top, encoder.head)
    key_encoder = MomentumCopy(projector, momentum=config.momentum)
    queue = NegativeQueue(config.queue_size, encoder.projected_dim)
    public_bank = None
    public_steps = 0
    if public_images is not None and len(public_images) > 0:
        started = time.perf_counter()
        pool = public_images[np.sort(rng.choice(len(public_images), min(config.public_pool, len(public_images)),
                                                replace=False))]
        public_bank = encoder.view_bank(pool, views=2, augment=augment, generator=generator, progress=progress,
                                        desc="caching public views")
        seconds["cache_public"] = time.perf_counter() - started
        started = time.perf_counter()
        _fill_queue(queue, key_encoder, public_bank)
        public_steps = _pretrain_public(projector, key_encoder, queue, public_bank, config=config, generator=generator,
                                        progress=progress, record=record)
        seconds["public_pretraining"] = time.perf_counter() - started
        if len(public_bank) < 4096:  # said as a warning only if the diagnostics below find a collapse
            logger.info("%d public images for negatives, fewer than the 4096 a queue is usually filled with",
                        len(public_bank))

    mode: Mode = "frozen"
    sigma = q = None
    steps_done = 0
    history: list[dict[str, Any]] = []
    if fine_tune:
        assert public_bank is not None
        started = time.perf_counter()
        private_bank = encoder.view_bank(private_images, views=config.views_per_sample, augment=augment,
                                         generator=generator, progress=progress, desc="caching private views")
        seconds["cache_private"] = time.perf_counter() - started
        started = time.perf_counter()
        mode, sigma, q, steps_done, history = _dp_fine_tune(
            projector, key_encoder, queue, private_bank, public_bank, config=config, ledger=ledger, stage=stage,
            noise=noise, seed=seed, progress=progress, record=record, checkpoint=checkpoint)
        seconds["dp_training"] = time.perf_counter() - started

    encoder.eval()
    collapse = None
    if public_bank is not None:  # diagnose on public embeddings only, so the diagnostics cost no budget
        with torch.no_grad():
            embeddings = torch.cat([projector(chunk) for chunk in public_bank[:, 0].split(512)]).numpy()
        collapse = diagnose_collapse(embeddings)
        (logger.warning if collapse.collapsed else logger.info)("representation: %s", collapse.message())
    return RepresentationResult(mode, sigma, q, steps_done, ledger.spent(stage), public_steps, seconds, collapse,
                                history)


def _fill_queue(queue: NegativeQueue, key_encoder: MomentumCopy, public_bank: torch.Tensor) -> None:
    rows = torch.arange(len(public_bank))[-queue.size:]
    for chunk in rows.split(1024):
        queue.enqueue_public(key_encoder(public_bank[chunk, 0]))


def _pretrain_public(projector: Projector, key_encoder: MomentumCopy, queue: NegativeQueue, bank: torch.Tensor, *,
                     config: RepresentationConfig, generator: torch.Generator, progress: bool,
                     record: Callable[[dict[str, Any]], None]) -> int:
    """Ordinary (non-DP) MoCo on public views; returns the number of steps."""
    if config.public_epochs == 0:
        return 0
    params = [p for p in projector.parameters() if p.requires_grad]
    optimizer = _optimizer(params, config.optimizer, config.public_lr, config.weight_decay)
    steps = 0
    batch = min(config.public_batch_size, len(bank))
    total = config.public_epochs * math.ceil(len(bank) / batch)
    bar = progress_bar(total, "public pre-training", "step", enabled=progress)
    for epoch in range(config.public_epochs):
        order = torch.randperm(len(bank), generator=generator)
        losses = []
        for rows in order.split(batch):
            loss = contrastive_loss_rows(projector, key_encoder, bank[rows, 0], bank[rows, 1], queue.negatives(),
                                         temperature=config.temperature).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            key_encoder.update(projector)
            queue.enqueue_public(key_encoder(bank[rows, 1]))
            losses.append(float(loss.detach()))
            steps += 1
            bar.update(1)
        record({"kind": "representation_public_epoch", "epoch": epoch, "loss": float(np.mean(losses))})
    bar.close()
    return steps


class _PublicDraws:
    """The public choices of DP fine-tuning, each from its own generator, advanced by public amounts only."""

    def __init__(self, seed: int, *, samples: int, views: int, public_rows: int, queue_batch: int) -> None:
        self.views_generator = torch.Generator().manual_seed(derived_seed(seed, "views"))
        self.queue_generator = torch.Generator().manual_seed(derived_seed(seed, "queue"))
        self.samples, self.views, self.public_rows, self.queue_batch = samples, views, public_rows, queue_batch

    def view_pairs(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Two distinct view indices for **every** private sample (the step keeps its batch's rows)."""
        first = torch.randint(0, self.views, (self.samples,), generator=self.views_generator)
        second = (first + torch.randint(1, self.views, (self.samples,), generator=self.views_generator)) % self.views
        return first, second

    def queue_rows(self) -> torch.Tensor:
        """Public rows whose keys enter the negative queue after a step (always ``queue_batch`` of them)."""
        return torch.randint(0, self.public_rows, (self.queue_batch,), generator=self.queue_generator)


def _dp_fine_tune(projector: Projector, key_encoder: MomentumCopy, queue: NegativeQueue, private_bank: torch.Tensor,
                  public_bank: torch.Tensor, *, config: RepresentationConfig, ledger: BudgetLedger, stage: str,
                  noise: NoiseSource, seed: int, progress: bool, record: Callable[[dict[str, Any]], None],
                  checkpoint: Path | None = None) -> tuple[Mode, float, float, int, list[dict[str, Any]]]:
    n, views = private_bank.shape[:2]
    mode, sigma, plan = representation_sigma(ledger, config, n, stage=stage)
    q, planned, per_epoch = plan.sampling_probability, plan.steps, plan.steps_per_epoch
    draws = _PublicDraws(seed, samples=n, views=views, public_rows=len(public_bank),
                         queue_batch=min(config.batch_size, n))
    ghost = GhostNorms(projector)
    params = [p for p in projector.parameters() if p.requires_grad]
    optimizer = _optimizer(params, config.optimizer, config.base_lr, config.weight_decay)
    # Resume (privacy/dpsgd_resume.py): continue from the last finished epoch; steps paid but not taken are
    # re-run under their charge with reproducible noise, and lost with secure noise.
    resumed = resume(ledger, stage, sigma=sigma, sampling_probability=q, clip_norm=config.clip_norm, num_samples=n,
                     noise=noise, checkpoint=checkpoint)
    mechanism, saved = resumed.mechanism, resumed.saved
    sigma, q = mechanism.noise_multiplier, mechanism.sampling_probability
    history: list[dict[str, Any]] = []
    if saved is not None:
        projector.load_state_dict(saved.modules["projector"])
        key_encoder.module.load_state_dict(saved.modules["key_encoder"])
        optimizer.load_state_dict(saved.modules["optimizer"])
        queue.keys.copy_(saved.extra["queue"]["keys"])
        queue.filled, queue._pointer = saved.extra["queue"]["filled"], saved.extra["queue"]["pointer"]
        draws.views_generator.set_state(saved.extra["generators"]["views"])
        draws.queue_generator.set_state(saved.extra["generators"]["queue"])
        history = list(saved.extra["history"])
    if resumed.lost_steps:
        logger.warning("representation: DP epoch %d was paid for and interrupted; its %d steps cannot be re-run "
                       "without paying again, so they are counted as spent and training continues after them",
                       resumed.epoch - 1, resumed.lost_steps)
        record({"kind": "representation_dp_epoch_lost", "epoch": resumed.epoch - 1, "steps": resumed.lost_steps})
    epoch = resumed.epoch
    logger.info("representation: DP-SGD σ = %.4g (%s), q = %.4g, up to %d steps (%d taken)", sigma, mode, q,
                planned, mechanism.steps_taken)

    bar = progress_bar(planned, "DP fine-tuning", "step", enabled=progress, initial=mechanism.steps_taken)
    try:
        while mechanism.steps_taken < planned:
            want = min(per_epoch, planned - mechanism.steps_taken)
            grant = min(want, mechanism.steps_left)  # > 0 only when re-running a paid epoch (reproducible noise)
            if grant == 0:
                grant = want
                if mode == "given":
                    grant = affordable_steps(ledger, stage, sampling_probability=q, noise_multiplier=sigma,
                                             max_steps=want)
                    if grant == 0:
                        logger.info("representation: stage budget spent after %d steps; stopping",
                                    mechanism.steps_taken)
                        break
                mechanism.charge(ledger, stage, grant, description=f"representation DP-SGD epoch {epoch}",
                                 noise=noise)
            losses, clipped = [], []
            for _ in range(grant):
                rows = torch.from_numpy(mechanism.sample_batch(noise))
                first, second = draws.view_pairs()
                noisy, stats = private_step(projector, ghost, key_encoder, private_bank[rows, first[rows]],
                                            private_bank[rows, second[rows]], queue.negatives(),
                                            temperature=config.temperature, mechanism=mechanism, noise=noise)
                for p, g in zip(params, noisy):
                    p.grad = g
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                key_encoder.update(projector)
                queue.enqueue_public(key_encoder(public_bank[draws.queue_rows(), 0]))
                losses.append(stats["loss"])
                clipped.append(stats["clipped_fraction"])
                bar.update(1)
            entry = {"kind": "representation_dp_epoch", "epoch": epoch, "steps": mechanism.steps_taken,
                     "noise_multiplier": sigma, "stage_epsilon": ledger.spent(stage)}
            # Loss and clipping rate come from private data and are not DP: the pipeline keeps them in secure/.
            entry.update({"private_loss": float(np.mean(losses)), "clipped_fraction": float(np.mean(clipped))})
            history.append(entry)
            epoch += 1
            if checkpoint is not None:
                DPCheckpoint(epoch=epoch, steps_taken=mechanism.steps_taken,
                             modules={"projector": projector.state_dict(),
                                      "key_encoder": key_encoder.module.state_dict(),
                                      "optimizer": optimizer.state_dict()},
                             noise_state=noise_state(noise),
                             extra={"queue": {"keys": queue.keys.clone(), "filled": queue.filled,
                                              "pointer": queue._pointer},
                                    "generators": {"views": draws.views_generator.get_state(),
                                                   "queue": draws.queue_generator.get_state()},
                                    "history": history}).save(checkpoint)
            record(entry)
    finally:
        bar.close()
    return mode, sigma, q, mechanism.steps_taken, history
