"""The private verdict: each generation, the private samples choose among candidate labellings of the pool.

With a retrieval decoder the delivered set *is* a labelled part of the public pool: class k delivers images from
its territory, the pool images the run's pool labels (:mod:`pcevolve.search.pool_labels`) give to k most surely.
Those labels come from the DP release and public data alone, and their errors are systematic: a class model that
calls pullovers coats puts them in the coats' territory on every run. Nothing in the release can see that; the
private samples can.

**Candidates.** A labelling is one offset per class added to the log of the pool posterior, b ∈ R^K (Σ b = 0): a
larger b_k moves the boundary between k and its neighbours towards them, so k's territory takes the images the
labels hesitated over. The offsets 0 are the release's own labelling. Each generation judges the parent and the
parent with one class's offset moved by ± the current step (2K + 1 candidates, a public function of the last
selection); the step halves when the parent wins.

**Verdict.** A candidate's territories (cut as the run cuts them) are decoded and re-encoded — with a retrieval
decoder that is exact: the images' stored encodings — and a ridge probe (one-hot least squares in the search
coordinates) is fitted on them with the candidate's labels. Its utility is the number of private samples the probe
classifies right. Adding or removing one private sample moves every candidate's count by 0 or 1, all in the same
direction: sensitivity 1, monotone, so the exponential mechanism selects with probability ∝ exp(ε·u) and is
ε-DP (:class:`~pcevolve.privacy.mechanisms.ExponentialMechanism` with ``monotone=True``; under replace-one, where
one record can raise one count and lower another, it selects ∝ exp(ε·u/2)). Each generation is one
``ExponentialSelection`` charged to the ledger stage ``verdict`` before its draw; the generations compose in the
accountant (docs/privacy.md). The candidates, the step and the probe read only public data and earlier selections,
so adaptive composition applies.

What leaves the stage: the selected offsets of every generation (DP outputs). The counts stay in this process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from pcevolve.privacy.events import Neighbouring
from pcevolve.privacy.mechanisms import ExponentialMechanism
from pcevolve.privacy.selection_rounds import VERDICT_ROUNDS
from pcevolve.search.pool_labels import PoolLabels
from pcevolve.decoders.territories import ClassTerritories
from pcevolve.search.territory import cut_territories

#: The ledger stage (and run stage, noise and public stream) of the verdict.
STAGE = VERDICT_ROUNDS.stage
#: Ridge of the probe, relative to the mean squared norm of its inputs (scale-free).
PROBE_RIDGE = 1e-3


@dataclass(frozen=True)
class VerdictSettings:
    """Offsets move by ``step`` at first, halving whenever the parent wins, never below ``min_step``."""

    step: float = 0.5
    min_step: float = 0.05

    def __post_init__(self) -> None:
        if not 0 < self.min_step <= self.step:
            raise ValueError(f"need 0 < min_step <= step, got {self}")


def shifted_labels(labels: PoolLabels, offsets: np.ndarray) -> PoolLabels:
    """``labels`` with the log posterior moved by ``offsets`` (K,) and renormalised; an image's confidence keeps
    its factor for lying inside the task (confidence / max posterior) and takes the new top posterior."""
    offsets = np.asarray(offsets, dtype=np.float64)
    if offsets.shape != (labels.num_classes,):
        raise ValueError(f"need {labels.num_classes} offsets, got shape {offsets.shape}")
    if not np.any(offsets):
        return labels
    top = labels.posterior.max(axis=1)
    inside = labels.confidence / np.maximum(top, 1e-300)
    logits = np.log(np.maximum(labels.posterior, 1e-300)) + offsets
    logits -= logits.max(axis=1, keepdims=True)
    posterior = np.exp(logits)
    posterior /= posterior.sum(axis=1, keepdims=True)
    return PoolLabels(posterior=posterior, confidence=posterior.max(axis=1) * inside, labeller=labels.labeller)


def candidate_offsets(parent: np.ndarray, step: float) -> np.ndarray:
    """(2K + 1, K): the parent first, then the parent with class k's offset moved by +step and by −step (each
    re-centred to sum 0, so that a candidate is a direction and not a constant that changes nothing)."""
    parent = np.asarray(parent, dtype=np.float64)
    rows = [parent]
    for k in range(len(parent)):
        for sign in (1.0, -1.0):
            moved = parent.copy()
            moved[k] += sign * step
            rows.append(moved - moved.mean())
    return np.stack(rows)


def probe_scores(pool_view: np.ndarray, territories: ClassTerritories, queries: np.ndarray) -> np.ndarray:
    """(M, K) scores of a ridge probe fitted on the territories' members (their ``pool_view`` rows, labelled by
    their territory) and applied to ``queries`` (M, D). A pure function of its inputs."""
    rows = np.concatenate(territories.members)
    targets = np.concatenate([np.full(len(m), k) for k, m in enumerate(territories.members)])
    x = np.asarray(pool_view[rows], dtype=np.float64)
    y = np.eye(territories.num_classes)[targets]
    centre, prior = x.mean(axis=0), y.mean(axis=0)
    xc = x - centre
    gram = xc.T @ xc
    ridge = PROBE_RIDGE * np.trace(gram) / max(x.shape[1], 1)
    weights = np.linalg.solve(gram + ridge * np.eye(x.shape[1]), xc.T @ (y - prior))
    return (np.asarray(queries, dtype=np.float64) - centre) @ weights + prior


def correct_counts(pool_view: np.ndarray, candidates: list[ClassTerritories], private_view: np.ndarray,
                   private_labels: np.ndarray) -> np.ndarray:
    """How many private samples each candidate's probe classifies right (the verdict's utilities: private)."""
    labels = np.asarray(private_labels)
    return np.array([int(np.sum(np.argmax(probe_scores(pool_view, t, private_view), axis=1) == labels))
                     for t in candidates], dtype=np.float64)


@dataclass
class VerdictState:
    """Where the verdict stands after ``generation`` selections: the parent offsets and the step (public: a
    function of the selections), and one entry per selection."""

    offsets: np.ndarray
    step: float
    generation: int = 0
    history: list[dict] = field(default_factory=list)

    @classmethod
    def start(cls, num_classes: int, settings: VerdictSettings) -> VerdictState:
        """The release's own labelling (offsets 0) and the first step."""
        return cls(np.zeros(num_classes), settings.step)

    def to_json(self) -> dict:
        return {"offsets": [float(v) for v in self.offsets], "step": self.step, "generation": self.generation,
                "history": self.history}

    @classmethod
    def from_json(cls, data: dict) -> VerdictState:
        return cls(np.asarray(data["offsets"], dtype=np.float64), float(data["step"]), int(data["generation"]),
                   list(data["history"]))


def run_verdict(labels: PoolLabels, pool_view: np.ndarray, sizes: np.ndarray, *, private_view: np.ndarray,
                private_labels: np.ndarray, rounds: int, epsilon: float, select: Callable[..., int],
                state: VerdictState, settings: VerdictSettings = VerdictSettings(),
                neighbouring: Neighbouring = "add_remove", eligible: np.ndarray | None = None,
                on_generation: Callable[[VerdictState], None] = lambda _: None) -> VerdictState:
    """Run ``rounds`` more generations from ``state``; return the final state (its offsets are the selection).

    Args:
        labels: The run's pool labels (the offsets 0).
        pool_view: (N, D) the pool images' decoded-and-re-encoded features the probe is fitted on.
        sizes: (K,) territory sizes, as the run cuts them.
        eligible: (N,) bool, the pool images territories may take (the in-task part), as the run cuts them.
        private_view, private_labels: the private samples in the same view, and their classes.
        epsilon: Each selection's ε.
        select: ``select(mechanism, utilities) -> index``: charges the ledger, then draws (the stage's wiring).
        neighbouring: The ledger's relation: the counts are monotone under add/remove (exp(ε·u)), not under
            replace-one (exp(ε·u / 2)).
        on_generation: Called after every selection with the new state (to save it before the next charge).
    """
    mechanism = ExponentialMechanism(epsilon, utility_sensitivity=1.0, neighbouring=neighbouring,
                                     monotone=neighbouring == "add_remove")
    coordinates = np.asarray(pool_view)
    for _ in range(rounds):
        offsets = candidate_offsets(state.offsets, state.step)
        territories = [cut_territories(coordinates, shifted_labels(labels, row), sizes, eligible)
                       for row in offsets]
        counts = correct_counts(coordinates, territories, private_view, private_labels)
        chosen = select(mechanism, counts)
        state.history.append({"generation": state.generation + 1, "chosen": int(chosen), "step": state.step,
                              "offsets": [round(float(v), 4) for v in offsets[chosen]]})
        if chosen == 0:
            state.step = max(settings.min_step, state.step / 2)
        state.offsets = offsets[chosen]
        state.generation += 1
        on_generation(state)
    return state
