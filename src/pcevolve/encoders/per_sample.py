"""One private DP-SGD step of the contrastive loss, with the sample (not the view) as the unit of privacy.

Each private sample contributes two rows (two augmented views). Its per-sample gradient
G_i is the gradient of the sum of its two rows' losses, so clipping bounds the sample
(docs/privacy.md §3.4). Each row's loss uses its partner view's key (momentum encoder,
a constant) and public negatives only, so G_i depends on sample i alone.

Norms ‖G_i‖ come from :class:`~pcevolve.encoders.ghost_norms.GhostNorms`; the clipped
sum Σ c_i·G_i from a second backward pass of Σ c_i·L_i. Neither materialises G_i.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from pcevolve.encoders.contrastive import info_nce
from pcevolve.encoders.ghost_norms import GhostNorms
from pcevolve.privacy import DPSGDMechanism, NoiseSource


class Projector(nn.Module):
    """Trunk activations → projected embedding: the trainable top blocks followed by the projection head."""

    def __init__(self, top: nn.Module, head: nn.Module) -> None:
        super().__init__()
        self.top = top
        self.head = head

    def forward(self, activations: torch.Tensor) -> torch.Tensor:
        return self.head(self.top(activations))


def contrastive_loss_rows(
    embed: Callable[[torch.Tensor], torch.Tensor],
    embed_keys: Callable[[torch.Tensor], torch.Tensor],
    views_a: torch.Tensor,
    views_b: torch.Tensor,
    negatives: torch.Tensor,
    *,
    temperature: float,
) -> torch.Tensor:
    """Symmetric InfoNCE per row for B samples with two views each: returns (2B,) losses.

    Rows are view-major: row b (b < B) is view a of sample b with view b's key as its
    positive; row B + b is the reverse.
    """
    queries = F.normalize(embed(torch.cat([views_a, views_b])), dim=1)
    with torch.no_grad():
        keys = F.normalize(embed_keys(torch.cat([views_b, views_a])), dim=1)
    return info_nce(queries, keys, negatives, temperature=temperature)


def per_sample_norms_and_clipped_sum(
    projector: Projector,
    ghost: GhostNorms,
    embed_keys: Callable[[torch.Tensor], torch.Tensor],
    views_a: torch.Tensor,
    views_b: torch.Tensor,
    negatives: torch.Tensor,
    *,
    temperature: float,
) -> tuple[torch.Tensor, Callable[[torch.Tensor], list[torch.Tensor]], float]:
    """Per-sample gradient norms ‖G_i‖ (B,), a function c ↦ Σ_i c_i·G_i, and the summed loss.

    ``ghost`` must have been built on ``projector``.
    """
    params = [p for p in projector.parameters() if p.requires_grad]
    batch = len(views_a)
    if batch == 0:
        return torch.zeros(0), (lambda _: [torch.zeros_like(p) for p in params]), 0.0
    with ghost.recording():
        losses = contrastive_loss_rows(projector, embed_keys, views_a, views_b, negatives, temperature=temperature)
    norms = ghost.squared_norms(losses.sum(), views=2).clamp_min(0.0).sqrt()

    def clipped_sum(factors: torch.Tensor) -> list[torch.Tensor]:
        weights = factors.detach().repeat(2)  # both rows of sample i carry c_i
        return list(torch.autograd.grad((losses * weights).sum(), params))

    return norms, clipped_sum, float(losses.detach().sum())


def private_step(
    projector: Projector,
    ghost: GhostNorms,
    embed_keys: Callable[[torch.Tensor], torch.Tensor],
    views_a: torch.Tensor,
    views_b: torch.Tensor,
    negatives: torch.Tensor,
    *,
    temperature: float,
    mechanism: DPSGDMechanism,
    noise: NoiseSource,
) -> tuple[list[torch.Tensor], dict[str, float]]:
    """The noisy gradient of one DP-SGD step (one paid step of ``mechanism``) and non-released diagnostics."""
    norms, clipped_sum, loss = per_sample_norms_and_clipped_sum(
        projector, ghost, embed_keys, views_a, views_b, negatives, temperature=temperature)
    noisy, stats = mechanism.noisy_gradient_from_norms(norms, clipped_sum, noise)
    stats["loss"] = loss / max(1, 2 * len(views_a))
    return noisy, stats
