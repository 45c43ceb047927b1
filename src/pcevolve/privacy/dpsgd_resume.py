"""Resuming DP-SGD training after a kill: one atomic checkpoint after every paid epoch.

Used by both DP-SGD stages (the encoder's contrastive fine-tuning and the DP decoder). The ledger is charged at
the start of each epoch, before its first noisy step, and the checkpoint is written at its end. A kill therefore
leaves one of two states, told apart by comparing the steps the ledger has paid for with the steps the checkpoint
says were taken:

* **paid = taken** (killed between epochs): training continues from the checkpoint and pays for the epochs left.
* **paid > taken** (killed inside an epoch): that epoch was paid for and its noisy steps were drawn, but their
  result was never written. With secure noise it cannot be reproduced, and running it again would draw new noise
  for the same paid steps — a second look at the private data that nobody paid for. So its steps are counted as
  taken and lost: training continues with the epochs after it, and the stage never spends more than planned.
  With reproducible noise (tests and research, not DP) the checkpoint holds the noise generator's state, so the
  epoch is re-run under its existing charge and draws exactly the noise it drew before: the resumed run equals an
  uninterrupted one.

σ and q on resume are the ones charged (the first DP-SGD event of the stage): recalibrating now would fit σ to what
is left of the stage instead of to the whole schedule.

A checkpoint holds trained weights and optimiser state (computed from paid, noisy steps and public data), the
public generators' states and per-epoch diagnostics (a private loss is not DP), so it lives in ``secure/`` and is
removed once the stage has finished.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from pcevolve.io import atomic_write_bytes
from pcevolve.privacy.dpsgd import DPSGDMechanism
from pcevolve.privacy.events import SubsampledGaussianSteps
from pcevolve.privacy.ledger import BudgetLedger
from pcevolve.privacy.noise import GeneratorNoise, NoiseSource

FORMAT = "pcevolve.dpsgd-checkpoint/1"


@dataclass(frozen=True)
class DPCheckpoint:
    """What a DP-SGD loop needs to continue exactly where it stopped."""

    epoch: int  # epochs finished
    steps_taken: int
    modules: dict[str, dict[str, Any]]  # state dicts: networks, optimiser
    noise_state: dict[str, Any] | None = None  # reproducible noise only
    extra: dict[str, Any] = field(default_factory=dict)  # loop-specific state (queue, public generators, history)

    def save(self, path: Path) -> None:
        """Write atomically (serialised in memory first, so a full disk raises ``OSError`` and leaves no half file)."""
        buffer = io.BytesIO()
        torch.save({"format": FORMAT, **self.__dict__}, buffer)
        atomic_write_bytes(path, buffer.getvalue())

    @classmethod
    def load(cls, path: Path | None) -> DPCheckpoint | None:
        """The checkpoint at ``path``, or ``None`` if there is none."""
        if path is None or not path.exists():
            return None
        data = torch.load(path, weights_only=False)
        if data.pop("format", None) != FORMAT:
            raise ValueError(f"{path}: not a DP-SGD checkpoint of this version")
        return cls(**data)


def paid_events(ledger: BudgetLedger, stage: str) -> list[SubsampledGaussianSteps]:
    """The DP-SGD charges of ``stage``, oldest first (each recorded before its steps ran)."""
    return [event for event in ledger.events(stage) if isinstance(event, SubsampledGaussianSteps)]


def noise_state(noise: NoiseSource) -> dict[str, Any] | None:
    """The generator state of reproducible noise (``None`` for secure noise, which has no state to keep)."""
    return dict(noise.generator.bit_generator.state) if isinstance(noise, GeneratorNoise) else None


@dataclass(frozen=True)
class Resumed:
    """A DP-SGD mechanism set up to continue a stage: the steps the ledger paid and the checkpoint took."""

    mechanism: DPSGDMechanism
    saved: DPCheckpoint | None
    lost_steps: int  # paid, interrupted and counted as spent (secure noise)

    @property
    def epoch(self) -> int:
        """The next epoch's number (a lost epoch counts)."""
        return (self.saved.epoch if self.saved else 0) + (1 if self.lost_steps else 0)


def resume(ledger: BudgetLedger, stage: str, *, sigma: float, sampling_probability: float, clip_norm: float,
           num_samples: int, noise: NoiseSource, checkpoint: Path | None) -> Resumed:
    """The mechanism of a DP-SGD stage, continued from ``checkpoint`` and the ledger (a fresh one if neither has
    anything); restores reproducible noise to the checkpoint's state. See the module docstring for the rules."""
    saved = DPCheckpoint.load(checkpoint)
    paid = paid_events(ledger, stage)
    if paid:
        sigma, sampling_probability = paid[0].noise_multiplier, paid[0].sampling_probability
    mechanism = DPSGDMechanism(sampling_probability, sigma, clip_norm, num_samples)
    mechanism.steps_paid = sum(event.steps for event in paid)
    mechanism.secure_required = bool(paid) and not ledger.reproducible_noise
    if saved is not None:
        mechanism.steps_taken = saved.steps_taken
        if saved.noise_state is not None and isinstance(noise, GeneratorNoise):
            noise.generator.bit_generator.state = saved.noise_state
    lost = 0
    if mechanism.steps_left > 0 and noise.secure:
        lost = mechanism.steps_left
        mechanism.steps_taken += lost
    return Resumed(mechanism, saved, lost)
