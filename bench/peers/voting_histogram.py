"""Private Evolution's voting histogram: each private record votes for its nearest candidate, Gaussian noise on the
bins.

The query: given public candidates c_1..c_N, each with a class, every private record (z_i, y_i) adds 1 to the bin
of the candidate of class y_i nearest to z_i (Euclidean; ties: the lowest index). The release is the vector of
votes plus N(0, (σ·Δ₂)²) on every bin.

* **Neighbouring relation and sensitivity.** Add/remove one record: exactly one bin changes by 1, so Δ₂ = 1.
  Replace one record: one bin loses 1 and one gains 1, Δ₂ = √2. The candidates must not depend on the private
  data except through earlier releases (they are public or post-processing), so one record's influence is its
  single vote whatever the others do.
* **Event.** One ``GaussianRelease(σ)`` per call, charged before any vote is counted or any noise drawn.

This is the mechanism of Lin et al., "Differentially Private Synthetic Data via Foundation Model APIs 1: Images"
(ICLR 2024), implemented here from the paper's description, in pcevolve's feature space.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from pcevolve.privacy.events import GaussianRelease, Neighbouring
from pcevolve.privacy.ledger import BudgetLedger
from pcevolve.privacy.mechanisms import GaussianMechanism, check_ledger_relation
from pcevolve.privacy.noise import NoiseSource

_ROWS = 1024  # private rows per distance block


def nearest_candidate_votes(private: np.ndarray, labels: np.ndarray, candidates: np.ndarray,
                            candidate_labels: np.ndarray) -> np.ndarray:
    """Exact votes: per candidate, how many private records of its class have it as their nearest. Private."""
    votes = np.zeros(len(candidates), dtype=np.float64)
    private = np.asarray(private, dtype=np.float64)
    candidates = np.asarray(candidates, dtype=np.float64)
    for k in np.unique(labels):
        mine = np.flatnonzero(candidate_labels == k)
        if len(mine) == 0:
            continue  # no candidate of this class: its records cast no vote (the release is the same either way)
        keys = candidates[mine]
        key_norms = np.sum(keys**2, axis=1)
        rows = private[labels == k]
        for start in range(0, len(rows), _ROWS):
            block = rows[start:start + _ROWS]
            distances = key_norms[None, :] - 2.0 * block @ keys.T  # ‖z‖² is the same for every key
            np.add.at(votes, mine[np.argmin(distances, axis=1)], 1.0)
    return votes


@dataclass(frozen=True)
class VotingHistogram:
    """The voting-histogram mechanism (module docstring).

    Attributes:
        noise_multiplier: σ, noise std over the L2 sensitivity.
        neighbouring: The ledger's relation; Δ₂ is 1 (add/remove) or √2 (replace-one).
    """

    noise_multiplier: float
    neighbouring: Neighbouring = field(default="add_remove", kw_only=True)

    def __post_init__(self) -> None:
        # The Gaussian mechanism's own checks: σ positive and finite, a known relation.
        GaussianMechanism(self.sensitivity, self.noise_multiplier, neighbouring=self.neighbouring)

    @property
    def sensitivity(self) -> float:
        return 1.0 if self.neighbouring == "add_remove" else math.sqrt(2.0)

    @property
    def gaussian(self) -> GaussianMechanism:
        """The Gaussian mechanism on the vote vector: Δ₂ = :attr:`sensitivity`, std σ·Δ₂."""
        return GaussianMechanism(self.sensitivity, self.noise_multiplier, neighbouring=self.neighbouring)

    @property
    def noise_std(self) -> float:
        return self.gaussian.noise_std

    @property
    def event(self) -> GaussianRelease:
        return self.gaussian.event

    def release(self, private: np.ndarray, labels: np.ndarray, candidates: np.ndarray, candidate_labels: np.ndarray,
                *, ledger: BudgetLedger, stage: str, noise: NoiseSource, description: str = "") -> np.ndarray:
        """Charge the ledger, then count the votes and add noise. Returns the noisy votes, one per candidate.

        Raises:
            BudgetExceeded: the ledger refused; no vote was counted and no noise drawn.
        """
        candidate_labels = np.asarray(candidate_labels)
        if candidates.ndim != 2 or len(candidate_labels) != len(candidates):
            raise ValueError(f"candidates must be (N, P) with N labels, got {candidates.shape} and "
                             f"{candidate_labels.shape}")
        check_ledger_relation(self.neighbouring, ledger)
        ledger.charge(stage, self.event, description=description or "voting histogram over candidates",
                      noise=noise)
        votes = nearest_candidate_votes(private, np.asarray(labels), candidates, candidate_labels)
        return votes + noise.normal(self.noise_std, votes.shape)
