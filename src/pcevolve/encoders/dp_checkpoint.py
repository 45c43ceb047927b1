"""Resuming DP fine-tuning after a kill: one atomic checkpoint after every paid epoch.

The ledger is charged at the start of each epoch, before its first noisy step, and the checkpoint is written at
its end. A kill therefore leaves one of two states, told apart by comparing the steps the ledger has paid for
with the steps the checkpoint says were taken:

* **paid = taken** (killed between epochs): training continues from the checkpoint and pays for the epochs left.
* **paid > taken** (killed inside an epoch): that epoch was paid for and its noisy steps were drawn, but their
  result was never written. With secure noise it cannot be reproduced, and running it again would draw new noise
  for the same paid steps — a second look at the private data that nobody paid for. So its steps are counted as
  taken and lost: training continues with the epochs after it, and the stage never spends more than planned.
  With reproducible noise (tests and research, not DP) the checkpoint holds the noise generator's state, so the
  epoch is re-run under its existing charge and draws exactly the noise it drew before: the resumed run equals an
  uninterrupted one.

The checkpoint holds the trained weights, optimiser state, key encoder and negative queue (all computed from paid,
noisy steps and public data), the public generators' states and the per-epoch history (whose private loss is not
DP), so it lives in ``secure/`` and is removed once the stage has finished.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from pcevolve.io import atomic_write_bytes
from pcevolve.privacy.events import SubsampledGaussianSteps
from pcevolve.privacy.ledger import BudgetLedger
from pcevolve.privacy.noise import GeneratorNoise, NoiseSource

FORMAT = "pcevolve.dp-fine-tuning-checkpoint/1"


@dataclass(frozen=True)
class DPCheckpoint:
    """What DP fine-tuning needs to continue exactly where it stopped."""

    epoch: int  # epochs finished
    steps_taken: int
    modules: dict[str, dict[str, torch.Tensor]]  # projector, key encoder, optimiser state dicts
    queue: dict[str, Any]
    generators: dict[str, torch.Tensor]  # public torch generators' states
    noise_state: dict[str, Any] | None  # reproducible noise only
    history: list[dict[str, Any]]

    def save(self, path: Path) -> None:
        """Write atomically (serialised in memory first, so a full disk raises ``OSError`` and leaves no half file)."""
        buffer = io.BytesIO()
        torch.save({"format": FORMAT, **self.__dict__}, buffer)
        atomic_write_bytes(path, buffer.getvalue())

    @classmethod
    def load(cls, path: Path) -> DPCheckpoint | None:
        """The checkpoint at ``path``, or ``None`` if there is none."""
        if not path.exists():
            return None
        data = torch.load(path, weights_only=False)
        if data.pop("format", None) != FORMAT:
            raise ValueError(f"{path}: not a DP fine-tuning checkpoint of this version")
        return cls(**data)


def paid_events(ledger: BudgetLedger, stage: str) -> list[SubsampledGaussianSteps]:
    """The DP-SGD charges of ``stage``, oldest first (each recorded before its steps ran)."""
    return [event for event in ledger.events(stage) if isinstance(event, SubsampledGaussianSteps)]


def noise_state(noise: NoiseSource) -> dict[str, Any] | None:
    """The generator state of reproducible noise (``None`` for secure noise, which has no state to keep)."""
    return dict(noise.generator.bit_generator.state) if isinstance(noise, GeneratorNoise) else None


def restore_noise(noise: NoiseSource, state: dict[str, Any] | None) -> None:
    if state is not None and isinstance(noise, GeneratorNoise):
        noise.generator.bit_generator.state = state
