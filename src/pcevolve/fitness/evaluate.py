"""The fitness F of a candidate synthetic set and its per-term breakdown.

F = acc·accuracy − mmd·mmd − attack·attack − privacy·privacy + diversity·diversity
    + consistency·consistency − shift·shift,

with the weights of :class:`~pcevolve.config.FitnessWeights`. ``shift`` is not a property of the
candidate set but of the search's individual that drew it: how far it moved from the released
Gaussians (:meth:`pcevolve.search.space.SearchSpace.shift`). The search passes it; a candidate judged
on its own has shift 0. ``wasserstein`` is computed
and logged with every evaluation but has no weight: MMD already prices distribution
mismatch in the total, and the sliced W2 is measured against a sample of the DP Gaussians
(a second-moment summary), so weighting it would pull candidates towards Gaussian shape.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from pcevolve.config.search import FitnessWeights
from pcevolve.fitness.accuracy import DEFAULT_RIDGE, accuracy
from pcevolve.fitness.candidate import Candidate
from pcevolve.fitness.consistency import consistency
from pcevolve.fitness.coverage import (
    DEFAULT_DENSE_RATIO,
    DEFAULT_DUPLICATE_FRACTION,
    DEFAULT_KNN,
    attack,
    diversity,
    privacy_violation,
)
from pcevolve.fitness.distribution import mmd, wasserstein
from pcevolve.fitness.targets import FitnessTargets


@dataclass(frozen=True)
class TermInfo:
    """How a term enters the total: its direction and the ``FitnessWeights`` field that weighs it."""

    direction: Literal["higher", "lower"]
    weight: str | None


TERMS: Mapping[str, TermInfo] = MappingProxyType({
    "accuracy": TermInfo("higher", "acc"),
    "mmd": TermInfo("lower", "mmd"),
    "wasserstein": TermInfo("lower", None),
    "attack": TermInfo("lower", "attack"),
    "privacy": TermInfo("lower", "privacy"),
    "diversity": TermInfo("higher", "diversity"),
    "consistency": TermInfo("higher", "consistency"),
    "shift": TermInfo("lower", "shift"),
})


@dataclass(frozen=True)
class FitnessOptions:
    """Knobs of the terms (defaults are what the search uses).

    Attributes:
        ridge: Relative ridge penalty of the accuracy proxy's classifier.
        knn: Neighbour rank of the attack term's local-density radius.
        dense_ratio: A point is "far denser" than the reference when its radius is below this fraction
            of the reference's median radius (attack).
        duplicate_fraction: Near-duplicate distance as a fraction of √(2 tr Σ_k) (privacy).
    """

    ridge: float = DEFAULT_RIDGE
    knn: int = DEFAULT_KNN
    dense_ratio: float = DEFAULT_DENSE_RATIO
    duplicate_fraction: float = DEFAULT_DUPLICATE_FRACTION

    def __post_init__(self) -> None:
        if not (self.ridge > 0 and self.knn >= 1 and 0 < self.dense_ratio < 1 and self.duplicate_fraction > 0):
            raise ValueError(f"invalid fitness options {self}")


@dataclass(frozen=True)
class FitnessBreakdown:
    """One evaluation: every term's value (see :data:`TERMS`) and the weighted total F."""

    terms: Mapping[str, float]
    total: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "terms", MappingProxyType({str(k): float(v) for k, v in self.terms.items()}))
        object.__setattr__(self, "total", float(self.total))

    def to_json(self) -> dict[str, Any]:
        return {"total": self.total, "terms": dict(self.terms)}


def weighted_total(terms: Mapping[str, float], weights: FitnessWeights) -> float:
    """F from term values: + weight for "higher" terms, − weight for "lower" ones; unweighted terms skipped."""
    parts = []
    for name, info in TERMS.items():
        if info.weight is not None:
            sign = 1.0 if info.direction == "higher" else -1.0
            parts.append(sign * float(getattr(weights, info.weight)) * terms[name])
    return math.fsum(parts)


def evaluate(features: np.ndarray, labels: np.ndarray, targets: FitnessTargets, weights: FitnessWeights, *,
             roundtrip: np.ndarray | None = None, shift: float = 0.0,
             options: FitnessOptions = FitnessOptions()) -> FitnessBreakdown:
    """Every fitness term of a candidate and the weighted total. Pure and deterministic.

    Args:
        features: (n, P) candidate features in the search space, at least 2 per class.
        labels: (n,) intended classes in 0 … K−1.
        targets: The DP targets (the only view of the private data).
        weights: Term weights.
        roundtrip: Optional (n, P) decode → re-encode features, judged by ``consistency``.
        shift: How far the individual that drew the candidate moved from the released Gaussians (≥ 0; the
            search problem computes it from the individual).
        options: Term knobs.

    Raises:
        ValueError: a malformed candidate (see :meth:`Candidate.of`) or a negative or non-finite shift.
    """
    if not (math.isfinite(shift) and shift >= 0.0):
        raise ValueError(f"shift must be a finite number >= 0, got {shift!r}")
    candidate = Candidate.of(features, labels, targets, roundtrip=roundtrip)
    terms = {
        "accuracy": accuracy(candidate, targets, ridge=options.ridge),
        "mmd": mmd(candidate, targets),
        "wasserstein": wasserstein(candidate, targets),
        "attack": attack(candidate, targets, knn=options.knn, ratio=options.dense_ratio),
        "privacy": privacy_violation(candidate, targets, duplicate_fraction=options.duplicate_fraction),
        "diversity": diversity(candidate, targets),
        "consistency": consistency(candidate, targets),
        "shift": float(shift),
    }
    return FitnessBreakdown(terms=terms, total=weighted_total(terms, weights))
