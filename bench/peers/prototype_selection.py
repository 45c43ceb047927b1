"""PCEvolve's selection: public candidates scored against private class prototypes, chosen by the exponential mechanism.

For class k, candidate j (a public feature z_j offered for class k) has utility

    u_j = exp(τ · s̃_j)  if μ_k is the prototype nearest to z_j, else 0,

where μ_c is the exact mean of the private features of class c, s_j = −‖z_j − μ_k‖, and s̃ rescales the class's
finite scores to [−1, 0] (best 0). Each draw picks a candidate of class k with probability ∝ exp(ε u_j / 2).

* **Neighbouring relation and sensitivity.** Every utility lies in [0, 1], so whatever one added, removed or
  replaced record does to the prototypes (it moves its class's mean, and so may change every candidate's
  utility, in every class), |u_j(D) − u_j(D')| ≤ 1: Δu = 1 under either relation. The candidates must not
  depend on the private data except through earlier selections (public pool images and their neighbours).
* **Event.** A call making ``draws`` draws for each of K classes is ``ExponentialSelection(ε, count=K·draws)``,
  charged before any prototype is computed; each draw is ε-DP and ε-bounded-range (ε²/8-zCDP), which the
  accountant uses when composing.

After Yang et al., "PCEvolve: Private Contrastive Evolution for Synthetic Dataset Generation via Few-Shot
Private Data and Generative APIs" (ICML 2025), whose public code (``algo/client/selector/PCEvolve.py``)
scores candidates this way; written here from that description.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pcevolve.privacy.events import ExponentialSelection, Neighbouring
from pcevolve.privacy.ledger import BudgetLedger
from pcevolve.privacy.mechanisms import ExponentialMechanism, check_ledger_relation
from pcevolve.privacy.noise import NoiseSource


def prototype_utilities(private: np.ndarray, labels: np.ndarray, candidates: np.ndarray,
                        candidate_labels: np.ndarray, *, classes: int, tau: float) -> np.ndarray:
    """Exact utilities in [0, 1] of every candidate for its own class (module docstring). Private."""
    private = np.asarray(private, dtype=np.float64)
    labels = np.asarray(labels)
    prototypes = np.stack([private[labels == c].mean(axis=0) if np.any(labels == c)
                           else np.full(private.shape[1], np.inf) for c in range(classes)])
    distances = np.linalg.norm(np.asarray(candidates, dtype=np.float64)[:, None, :] - prototypes[None], axis=2)
    distances = np.where(np.isfinite(distances), distances, np.inf)
    own = distances[np.arange(len(candidates)), candidate_labels]
    nearest_is_own = distances.argmin(axis=1) == candidate_labels
    utilities = np.zeros(len(candidates))
    for k in range(classes):
        rows = np.flatnonzero((candidate_labels == k) & nearest_is_own & np.isfinite(own))
        if len(rows) == 0:
            continue
        scores = -own[rows]
        spread = scores.max() - scores.min()
        rescaled = (scores - scores.max()) / spread if spread > 0 else np.zeros(len(rows))
        utilities[rows] = np.exp(tau * rescaled)
    return utilities


@dataclass(frozen=True)
class PrototypeSelection:
    """The selection mechanism of the module docstring.

    Attributes:
        epsilon: ε of one draw.
        tau: Sharpness of the utility (PCEvolve's default 10).
    """

    epsilon: float
    tau: float = 10.0
    neighbouring: Neighbouring = field(default="add_remove", kw_only=True)

    def __post_init__(self) -> None:
        # The exponential mechanism's own checks: ε positive and finite, a known relation.
        ExponentialMechanism(self.epsilon, utility_sensitivity=1.0, neighbouring=self.neighbouring)

    @property
    def draw(self) -> ExponentialMechanism:
        """One draw: the exponential mechanism with Δu = 1 (utilities in [0, 1])."""
        return ExponentialMechanism(self.epsilon, utility_sensitivity=1.0, neighbouring=self.neighbouring)

    def release(self, private: np.ndarray, labels: np.ndarray, candidates: np.ndarray,
                candidate_labels: np.ndarray, *, classes: int, draws: int, ledger: BudgetLedger, stage: str,
                noise: NoiseSource, description: str = "") -> list[np.ndarray]:
        """Charge the ledger, then draw ``draws`` candidates (with repeats) per class. Returns candidate rows per class.

        Raises:
            BudgetExceeded: the ledger refused; no utility was computed and nothing drawn.
        """
        candidate_labels = np.asarray(candidate_labels)
        if len(candidate_labels) != len(candidates) or draws < 1:
            raise ValueError("one label per candidate and at least one draw are needed")
        check_ledger_relation(self.neighbouring, ledger)
        ledger.charge(stage, ExponentialSelection(self.epsilon, count=classes * draws),
                      description=description or "prototype selection (exponential mechanism)", noise=noise)
        utilities = prototype_utilities(private, labels, candidates, candidate_labels, classes=classes, tau=self.tau)
        mechanism = self.draw
        chosen = []
        for k in range(classes):
            rows = np.flatnonzero(candidate_labels == k)
            if len(rows) == 0:
                chosen.append(np.zeros(0, dtype=np.int64))
                continue
            cumulative = np.cumsum(mechanism.probabilities(utilities[rows]))
            picks = np.searchsorted(cumulative, noise.uniform(draws) * cumulative[-1], side="right")
            chosen.append(rows[np.minimum(picks, len(rows) - 1)])
        return chosen
