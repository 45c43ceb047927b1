"""DP-SGD as a mechanism: Poisson-sampled batches, per-sample clipping, Gaussian noise on the sum.

Neighbouring relation: the ledger's (add/remove-one by default). Sensitivity: each
sample's whole gradient (all its augmented views summed, every trainable parameter
concatenated) is clipped to L2 norm C before summing, so one sample changes the sum
by at most C under add/remove (the library's replace-one analysis covers replace-one).
Noise N(0, (σC)²) is added to every coordinate of the sum. This is the subsampled
Gaussian mechanism the ledger accounts as :class:`SubsampledGaussianSteps`.

Pay before training: :meth:`DPSGDMechanism.charge` records ``steps`` steps in the
ledger and grants that many noisy steps; :meth:`DPSGDMechanism.noisy_gradient`
consumes one and refuses when none is left, so no step can run unpaid. Poisson
sampling draws from the same :class:`NoiseSource` as the noise, so secure mode
covers the batch selection too (subsampling amplification assumes it is secret).
Once charged on a ledger that promises secure noise, the mechanism refuses to
sample or noise a step from a seeded source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from pcevolve.privacy.events import SubsampledGaussianSteps
from pcevolve.privacy.ledger import BudgetLedger
from pcevolve.privacy.ledger_entry import LedgerEntry
from pcevolve.privacy.noise import NoiseSource


class NoStepsLeft(RuntimeError):
    """A noisy step was requested that the ledger has not paid for."""


@dataclass
class DPSGDMechanism:
    """The DP-SGD step mechanism with a ledger-paid allowance of steps.

    Args:
        sampling_probability: Poisson rate q (each sample joins a batch independently with probability q).
        noise_multiplier: σ; the noise std on the gradient sum is σ·C.
        clip_norm: C, the bound on one sample's whole gradient.
        num_samples: n, the number of private samples (public, see docs/privacy.md §2).
    """

    sampling_probability: float
    noise_multiplier: float
    clip_norm: float
    num_samples: int
    steps_paid: int = field(default=0, init=False)
    steps_taken: int = field(default=0, init=False)
    secure_required: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        # Validate through the event type so the mechanism and its accounting agree.
        SubsampledGaussianSteps(self.sampling_probability, self.noise_multiplier, 1)
        if not self.clip_norm > 0:
            raise ValueError(f"clip_norm must be positive, got {self.clip_norm}")
        if self.num_samples < 1:
            raise ValueError(f"num_samples must be at least 1, got {self.num_samples}")

    @property
    def steps_left(self) -> int:
        return self.steps_paid - self.steps_taken

    def event(self, steps: int) -> SubsampledGaussianSteps:
        """The ledger event for ``steps`` steps of this mechanism."""
        return SubsampledGaussianSteps(self.sampling_probability, self.noise_multiplier, steps)

    def charge(self, ledger: BudgetLedger, stage: str, steps: int, *, description: str = "",
               noise: NoiseSource | None = None) -> LedgerEntry:
        """Pay for ``steps`` more steps; raises ``BudgetExceeded`` (granting nothing) if the ledger refuses.

        ``noise`` (the source the steps will draw from) lets a secure ledger refuse a seeded one up front;
        either way, after a charge on such a ledger every step refuses a seeded source.
        """
        entry = ledger.charge(stage, self.event(steps), description=description or f"DP-SGD, {steps} steps",
                              noise=noise)
        self.steps_paid += steps
        self.secure_required = self.secure_required or not ledger.reproducible_noise
        return entry

    def _check_source(self, noise: NoiseSource) -> None:
        if self.steps_left < 1:
            raise NoStepsLeft("no paid DP-SGD step is left; charge the ledger first")
        if self.secure_required and not noise.secure:
            raise ValueError(f"these DP-SGD steps were paid on a ledger that promises secure noise, but the step "
                             f"draws from {type(noise).__name__}, which is reproducible from its seed")

    def sample_batch(self, noise: NoiseSource) -> np.ndarray:
        """Indices of one Poisson-sampled batch (possibly empty), drawn from ``noise``."""
        self._check_source(noise)
        return np.flatnonzero(noise.uniform(self.num_samples) < self.sampling_probability)

    def clip_factors(self, per_sample_norms: torch.Tensor) -> torch.Tensor:
        """c_i = min(1, C / ‖G_i‖): scaling sample i's gradient by c_i makes its norm at most C."""
        # The 1e-6 keeps c_i·‖G_i‖ strictly below C despite rounding (as Opacus does).
        return (self.clip_norm / (per_sample_norms + 1e-6)).clamp(max=1.0)

    def noisy_gradient_from_norms(
        self,
        per_sample_norms: torch.Tensor,
        clipped_sum: Callable[[torch.Tensor], Sequence[torch.Tensor]],
        noise: NoiseSource,
    ) -> tuple[list[torch.Tensor], dict[str, float]]:
        """One DP-SGD step when per-sample gradients are not materialised (ghost clipping).

        Args:
            per_sample_norms: (B,) L2 norms of each sample's whole gradient.
            clipped_sum: Given the clip factors c (B,), returns Σ_i c_i·G_i per parameter. The caller
                guarantees that contract (tests compare it with one-sample-at-a-time autograd).
            noise: Source of the Gaussian noise.

        Returns:
            The noisy mean gradient per parameter and non-released diagnostics (see :meth:`noisy_gradient`).
        """
        self._check_source(noise)
        factors = self.clip_factors(per_sample_norms.detach())
        parts = [t.detach() for t in clipped_sum(factors)]
        if not parts:
            raise ValueError("need at least one parameter gradient")
        batch = len(per_sample_norms)
        stats = {"batch": float(batch),
                 "clipped_fraction": float((factors < 1.0).float().mean()) if batch else 0.0,
                 "median_norm": float(per_sample_norms.median()) if batch else 0.0}
        std = self.noise_multiplier * self.clip_norm
        scale = self.sampling_probability * self.num_samples  # expected batch size: public, unlike B
        noisy = []
        for part in parts:
            drawn = torch.from_numpy(noise.normal(std, part.numel())).to(part.dtype).reshape(part.shape)
            noisy.append((part + drawn) / scale)
        self.steps_taken += 1
        return noisy, stats

    def noisy_gradient(
        self, per_sample_grads: Sequence[torch.Tensor], noise: NoiseSource
    ) -> tuple[list[torch.Tensor], dict[str, float]]:
        """One DP-SGD step from materialised per-sample gradients: clip each to C, sum, add N(0, (σC)²), ÷ q·n.

        Args:
            per_sample_grads: One tensor per parameter, each of shape (B, *param.shape), where
                row b of every tensor belongs to the same sample. B may be 0.
            noise: Source of the Gaussian noise.

        Returns:
            The noisy mean gradient per parameter (the sum divided by the *expected* batch size
            q·n, a public constant) and diagnostics (batch size, fraction clipped, median norm).
            The diagnostics are computed from private per-sample norms and are **not** released:
            they stay in the secure zone, like any other operator-facing log.
        """
        if not per_sample_grads:
            raise ValueError("need at least one parameter gradient")
        batch = per_sample_grads[0].shape[0]
        if any(g.shape[0] != batch for g in per_sample_grads):
            raise ValueError("every per-sample gradient must have the same number of rows")
        for g in per_sample_grads:
            if not bool(torch.isfinite(g).all()):
                raise ValueError("cannot clip non-finite gradients (NaN or inf)")
        squared = sum(g.flatten(1).pow(2).sum(dim=1) if g.ndim > 1 else g.pow(2) for g in per_sample_grads)
        norms = torch.as_tensor(squared, dtype=per_sample_grads[0].dtype).sqrt().reshape(batch)

        def clipped_sum(factors: torch.Tensor) -> list[torch.Tensor]:
            return [(g * factors.reshape(-1, *([1] * (g.ndim - 1)))).sum(dim=0) for g in per_sample_grads]

        return self.noisy_gradient_from_norms(norms, clipped_sum, noise)
