"""PCEvolve's selector, hosted over pcevolve's public pool and feature space (a peer to compare with).

PCEvolve evolves a few reference images per class: each round a generator proposes candidates from the current
references, the exponential mechanism (:class:`~peers.prototype_selection.PrototypeSelection`) picks
the ones nearest their class's private prototype, and the picks become references. With a retrieval pool as the
generator:

1. round 1 offers ``candidates`` random pool images per class; later rounds offer the ``neighbours`` nearest pool
   images of every reference picked so far (topped up at random);
2. each round draws ``draws`` references per class;
3. delivery (post-processing): per class, the ``per_class`` pool images nearest to any of its references, no
   image under two classes.

Privacy: ``rounds`` calls of the selection, each ``ExponentialSelection(ε, count=K·draws)``, with the per-draw ε
calibrated by the accountant so that all ``rounds·K·draws`` draws cost the stage's remaining ε.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pcevolve.privacy.calibration import exponential_selection_epsilon
from pcevolve.privacy.ledger import BudgetLedger
from pcevolve.privacy.noise import NoiseSource
from peers.pe_selector import pool_neighbours
from peers.prototype_selection import PrototypeSelection


@dataclass(frozen=True)
class PCEvolveSettings:
    rounds: int = 5
    draws: int = 1  # PCEvolve draws one reference per class per round
    candidates: int = 200
    neighbours: int = 16
    tau: float = 10.0

    def __post_init__(self) -> None:
        if min(self.rounds, self.draws, self.candidates, self.neighbours) < 1 or self.tau <= 0:
            raise ValueError(f"invalid PCEvolve settings {self}")


@dataclass(frozen=True)
class PCEvolveSelection:
    indices: np.ndarray
    labels: np.ndarray
    references: tuple[np.ndarray, ...]
    epsilon_per_draw: float


def _offer(references: list[int], neighbours: np.ndarray, size: int, pool: int,
           rng: np.random.Generator) -> np.ndarray:
    near = np.unique(neighbours[references].ravel()) if references else np.zeros(0, dtype=np.int64)
    if len(near) >= size:
        return rng.choice(near, size, replace=False)
    rest = np.setdiff1d(np.arange(pool), near)
    return np.concatenate([near, rng.choice(rest, size - len(near), replace=False)])


def pcevolve_select(private: np.ndarray, labels: np.ndarray, pool: np.ndarray, *, classes: int, per_class: int,
                    settings: PCEvolveSettings, ledger: BudgetLedger, stage: str, noise: NoiseSource,
                    rng: np.random.Generator) -> PCEvolveSelection:
    """Run the hosted PCEvolve selector (module docstring); ``rng`` is public (offers), ``noise`` the draws'."""
    epsilon = exponential_selection_epsilon(ledger.remaining(stage), ledger.delta,
                                            count=settings.rounds * classes * settings.draws,
                                            neighbouring=ledger.neighbouring,
                                            pld_discretization=ledger.pld_discretization)
    mechanism = PrototypeSelection(epsilon, tau=settings.tau, neighbouring=ledger.neighbouring)
    neighbours = pool_neighbours(pool, settings.neighbours)
    size = min(settings.candidates, len(pool))
    references: list[list[int]] = [[] for _ in range(classes)]
    for round_index in range(settings.rounds):
        offers = [_offer(references[k], neighbours, size, len(pool), rng) for k in range(classes)]
        candidates = np.concatenate(offers)
        candidate_labels = np.repeat(np.arange(classes), size)
        picked = mechanism.release(private, labels, pool[candidates], candidate_labels, classes=classes,
                                   draws=settings.draws, ledger=ledger, stage=stage, noise=noise,
                                   description=f"PCEvolve prototype selection, round {round_index + 1}")
        for k in range(classes):
            references[k].extend(int(i) for i in candidates[picked[k]])
    # Delivery: nearest pool images to each class's references, each image to one class only.
    pool64 = np.asarray(pool, dtype=np.float64)
    distance = np.stack([np.min(np.linalg.norm(pool64[:, None, :] - pool64[np.unique(refs)][None], axis=2), axis=1)
                         for refs in references])  # (K, n_pool)
    taken = np.zeros(len(pool), dtype=bool)
    indices, out_labels = [], []
    for k in np.argsort([len(set(r)) for r in references]):  # fewest references first: they have least to lose
        order = [i for i in np.argsort(distance[k], kind="stable") if not taken[i]][:per_class]
        taken[order] = True
        indices.append(np.array(order, dtype=np.int64))
        out_labels.append(np.full(len(order), k, dtype=np.int64))
    return PCEvolveSelection(indices=np.concatenate(indices), labels=np.concatenate(out_labels),
                             references=tuple(np.array(r) for r in references), epsilon_per_draw=epsilon)
