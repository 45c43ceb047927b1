"""Private Evolution's selector, hosted over pcevolve's public pool and feature space (a peer to compare with).

Lin et al.'s Private Evolution (PE) with a retrieval "API", class by class:

1. start from ``per_class`` public pool images per class, drawn uniformly (the random API);
2. each iteration, the voting histogram (:class:`~peers.voting_histogram.VotingHistogram`): every private
   record votes for its nearest candidate of its own class, Gaussian noise on the votes, votes below
   ``threshold`` noise standard deviations set to 0;
3. resample ``per_class`` candidates per class in proportion to the thresholded votes (all zero: uniform);
4. replace each by one of its ``neighbours`` nearest pool images, at random (the variation API), except after
   the last iteration, whose resampled candidates are the delivered set (repeats included, as in PE).

Privacy: ``iterations`` Gaussian releases of Δ₂ = 1 (add/remove) charged to the ledger's ``stage``, σ calibrated
by the accountant so that their composition costs the stage's remaining ε. Everything else (thresholding,
resampling, variations) reads only released votes and public data: post-processing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pcevolve.privacy.calibration import gaussian_noise_multiplier
from pcevolve.privacy.ledger import BudgetLedger
from pcevolve.privacy.noise import NoiseSource
from peers.voting_histogram import VotingHistogram

_ROWS = 2048


@dataclass(frozen=True)
class PESettings:
    """PE's knobs; the defaults follow the paper's image settings scaled to a retrieval pool."""

    iterations: int = 10
    neighbours: int = 16
    threshold: float = 2.0  # in noise standard deviations

    def __post_init__(self) -> None:
        if self.iterations < 1 or self.neighbours < 1 or self.threshold < 0:
            raise ValueError(f"invalid PE settings {self}")


@dataclass(frozen=True)
class PESelection:
    """Pool indices delivered per class (repeats possible), and the votes of every iteration (released values)."""

    indices: np.ndarray
    labels: np.ndarray
    noise_multiplier: float
    votes: tuple[np.ndarray, ...]


def pool_neighbours(pool: np.ndarray, k: int) -> np.ndarray:
    """(n, k) indices of each pool point's k nearest other pool points (Euclidean). Public."""
    pool = np.asarray(pool, dtype=np.float32)
    norms = np.sum(pool**2, axis=1)
    k = min(k, len(pool) - 1)
    result = np.empty((len(pool), k), dtype=np.int64)
    for start in range(0, len(pool), _ROWS):
        block = pool[start:start + _ROWS]
        distances = norms[None, :] - 2.0 * block @ pool.T
        distances[np.arange(len(block)), np.arange(start, start + len(block))] = np.inf  # not itself
        result[start:start + len(block)] = np.argpartition(distances, k - 1, axis=1)[:, :k]
    return result


def pe_select(private: np.ndarray, labels: np.ndarray, pool: np.ndarray, *, classes: int, per_class: int,
              settings: PESettings, ledger: BudgetLedger, stage: str, noise: NoiseSource,
              rng: np.random.Generator) -> PESelection:
    """Run PE (module docstring) and return the delivered pool indices with their classes.

    Args:
        private: (n, P) private features in the same space as ``pool``; read only by the voting histogram.
        labels: (n,) their classes in ``0..classes-1``.
        pool: (m, P) public features (the retrieval pool).
        rng: Public randomness for the initial draw, the resampling and the variations.

    Raises:
        BudgetExceeded: the ledger refused an iteration (with the calibrated σ it does not, unless the stage was
            already partly spent by someone else).
    """
    sigma = gaussian_noise_multiplier(ledger.remaining(stage), ledger.delta, count=settings.iterations,
                                      neighbouring=ledger.neighbouring, pld_discretization=ledger.pld_discretization)
    mechanism = VotingHistogram(sigma, neighbouring=ledger.neighbouring)
    neighbours = pool_neighbours(pool, settings.neighbours)
    candidate_labels = np.repeat(np.arange(classes), per_class)
    candidates = np.concatenate([rng.choice(len(pool), per_class, replace=per_class > len(pool))
                                 for _ in range(classes)])
    history = []
    for iteration in range(settings.iterations):
        votes = mechanism.release(private, labels, pool[candidates], candidate_labels, ledger=ledger, stage=stage,
                                  noise=noise, description=f"PE voting histogram, iteration {iteration + 1}")
        history.append(votes)
        kept = np.where(votes >= settings.threshold * mechanism.noise_std, votes, 0.0)
        resampled = np.empty_like(candidates)
        for k in range(classes):
            rows = np.flatnonzero(candidate_labels == k)
            weights = kept[rows]
            p = weights / weights.sum() if weights.sum() > 0 else None
            resampled[rows] = candidates[rng.choice(rows, per_class, p=p)]
        if iteration < settings.iterations - 1:
            resampled = neighbours[resampled, rng.integers(0, neighbours.shape[1], len(resampled))]
        candidates = resampled
    return PESelection(indices=candidates, labels=candidate_labels, noise_multiplier=sigma, votes=tuple(history))
