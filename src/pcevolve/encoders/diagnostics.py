"""Collapse diagnostics for contrastive embeddings, with the usual remedies.

A collapsed representation maps everything to (nearly) one point or one low-dimensional
subspace. We measure it on embeddings of **public** (or released) data so the diagnostics
cost no privacy: effective rank (exp of the entropy of the normalised singular values,
Roy & Vetterli 2007), uniformity (Wang & Isola 2020, log E exp(−2‖u − v‖²) of normalised
embeddings; 0 when collapsed, about −4 when spread on a high-dimensional sphere) and the
spread of feature norms.

Both are taken on the centred embeddings: every use of the features (the basis, the class statistics, the
distances) is centred, and a direction all embeddings share — a high mean cosine, common after contrastive
training on a small pool — moves none of them. Collapse is what is left when that offset is removed: few
directions, or points bunched on the sphere.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

#: What to try on a collapsed representation, each by the setting that does it.
REMEDIES = (
    "a larger public pool (its images are the negatives)",
    "representation.temperature 0.1 (from 0.07)",
    "representation.feature_dim 128 or 64",
)


@dataclass(frozen=True)
class CollapseReport:
    """Diagnostics of one set of embeddings; ``collapsed`` is the verdict."""

    effective_rank: float
    dimension: int
    uniformity: float
    norm_cv: float
    mean_cosine: float
    collapsed: bool

    def message(self) -> str:
        """One line for the operator; names the remedies when collapsed."""
        text = (f"effective rank {self.effective_rank:.1f} of {self.dimension}, uniformity {self.uniformity:.2f}, "
                f"mean pairwise cosine {self.mean_cosine:.2f}")
        if self.collapsed:
            text += "; the representation has COLLAPSED — try " + ", ".join(REMEDIES)
        return text

    def to_json(self) -> dict:
        return asdict(self)


def effective_rank(features: np.ndarray) -> float:
    """exp(entropy) of the singular-value distribution of the centred features (1 … dim)."""
    centred = np.asarray(features, dtype=np.float64)
    centred = centred - centred.mean(axis=0)
    singular = np.linalg.svd(centred, compute_uv=False)
    total = singular.sum()
    if total <= 1e-12:
        return 1.0
    p = singular / total
    p = p[p > 0]
    return float(np.exp(-(p * np.log(p)).sum()))


def uniformity(features: np.ndarray, *, t: float = 2.0, max_samples: int = 2000, seed: int = 0) -> float:
    """log E exp(−t‖u − v‖²) over pairs of L2-normalised embeddings (lower = more uniform)."""
    x = np.asarray(features, dtype=np.float64)
    if len(x) > max_samples:
        x = x[np.random.default_rng(seed).choice(len(x), max_samples, replace=False)]
    u = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    sq = np.maximum(2.0 - 2.0 * (u @ u.T), 0.0)
    iu = np.triu_indices(len(u), k=1)
    return float(np.log(np.mean(np.exp(-t * sq[iu]))))


def diagnose_collapse(
    features: np.ndarray, *, min_rank_fraction: float = 0.05, max_uniformity: float = -0.5,
    min_relative_spread: float = 0.05,
) -> CollapseReport:
    """Diagnose collapse; collapsed when the effective rank is below ``min_rank_fraction``·dim (at least 2),
    the centred embeddings bunch in one region of the sphere (uniformity above ``max_uniformity``), or their spread
    around the mean is under ``min_relative_spread`` of their norm (all near one point)."""
    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2 or len(x) < 3:
        raise ValueError(f"need at least 3 embeddings as an (N, D) array, got shape {x.shape}")
    rank = effective_rank(x)
    unif = uniformity(x - x.mean(axis=0))
    norms = np.linalg.norm(x, axis=1)
    u = x / np.maximum(norms[:, None], 1e-12)
    gram = u @ u.T
    mean_cos = float((gram.sum() - np.trace(gram)) / (len(x) * (len(x) - 1)))
    # All embeddings near one point: what the centred measures cannot see (they are blind to scale).
    spread = float(np.sqrt(((x - x.mean(axis=0)) ** 2).sum(axis=1).mean()) / max(float(np.sqrt((norms ** 2).mean())),
                                                                                1e-12))
    collapsed = (rank < max(2.0, min_rank_fraction * x.shape[1]) or unif > max_uniformity
                 or spread < min_relative_spread)
    return CollapseReport(rank, x.shape[1], unif, float(norms.std() / max(norms.mean(), 1e-12)), mean_cos, collapsed)
