"""Stage 4 as one call: build and train the configured decoder the configured way (on public data, or under DP).

``training`` chooses what the decoder may read:

* ``"public"`` — the public pool only; nothing is charged, the private samples are never touched
  (the caller may pass ``None`` for them).
* ``"public-then-dp"`` — the public fit, then DP-SGD fine-tuning on the private set, paid from the
  ledger's ``decoder`` stage (:func:`~pcevolve.decoders.fine_tune_dp`).
* ``"dp"`` — DP-SGD from a random initialisation on the private set only (no public pool needed),
  paid the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.config import DecoderConfig
from pcevolve.decoders.base import Decoder, DecoderTrainingResult
from pcevolve.decoders.dp import DPDecoderResult, fine_tune_dp
from pcevolve.privacy import BudgetLedger, NoiseSource

if TYPE_CHECKING:
    from pcevolve.encoders import ImageEncoder
    from pcevolve.executors import Executor


@dataclass(frozen=True)
class DecoderStageResult:
    """The trained decoder and what each part of its training did (``None`` for a part not run)."""

    decoder: Decoder
    public: DecoderTrainingResult | None
    dp: DPDecoderResult | None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"public": self.public.to_json() if self.public else None}
        if self.dp is not None:
            out["dp"] = {"noise_multiplier": self.dp.noise_multiplier, "steps": self.dp.steps,
                         "sampling_probability": self.dp.sampling_probability,
                         "stage_epsilon": self.dp.stage_epsilon}  # not its seconds: private timing
        return out


def train_decoder(config: DecoderConfig, *, encoder: "ImageEncoder", sample_shape: tuple[int, ...],
                  public_samples: np.ndarray | None, private_samples: np.ndarray | None,
                  ledger: BudgetLedger, noise: NoiseSource, seed: int, progress: bool = False,
                  checkpoint: Path | None = None, executor: Executor | None = None) -> DecoderStageResult:
    """Build ``config.name`` and train it as ``config.training`` says (``checkpoint``: see :func:`fine_tune_dp`;
    ``executor``: where its public fit encodes the pool, if it does).

    Raises:
        ValueError: The chosen training needs data that was not given (no public pool for a
            public fit, no private samples for a DP one).
        BudgetExceeded: A DP mode whose planned steps the ``decoder`` stage cannot pay; raised
            before any private step runs.
    """
    from pcevolve.decoders.registry import build_decoder  # the registry imports this module back

    decoder = build_decoder(config, feature_dim=encoder.feature_dim, sample_shape=sample_shape, seed=seed)
    public_result = dp_result = None
    if config.training in ("public", "public-then-dp"):
        if public_samples is None or len(public_samples) == 0:
            raise ValueError(f"decoder training {config.training!r} needs a public pool (data.public); "
                             "without one, set decoder.training: dp and give the decoder stage a budget")
        public_result = decoder.fit(public_samples, encoder=encoder, seed=seed, progress=progress, executor=executor)
    if config.training in ("public-then-dp", "dp"):
        if private_samples is None:
            raise ValueError(f"decoder training {config.training!r} needs the private samples")
        dp_result = fine_tune_dp(decoder, private_samples, encoder=encoder, ledger=ledger, noise=noise,
                                 progress=progress, checkpoint=checkpoint)
    return DecoderStageResult(decoder=decoder, public=public_result, dp=dp_result)
