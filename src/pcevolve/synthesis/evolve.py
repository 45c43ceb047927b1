"""The evolution of a table's released marginals, judged by the private rows each generation (``synthesis.evolve``).

The original method's loop on a model without a public pool: a population of candidate models, each generation a
private verdict on them, the winner the parent of the next. Each generation:

1. **Candidates** (public): the current winner and ``candidates − 1`` variants of it, each class's probabilities
   over each column's bins jittered on the log scale by N(0, s²) and renormalised; s starts at the release's relative
   noise on a typical bin (a public noise scale over the released class sizes) and decays to 0 over the generations
   (coarse to fine). Functions of released values and public randomness only.
2. **Fitness**: rows drawn from each candidate (public randomness), a logistic regression fitted on them, and its
   clipped log-likelihood of the private rows' labels, u(r) = Σᵢ max(log p_r(yᵢ | xᵢ), −c) — the seed's accuracy term
   made bounded: every term lies in [−c, 0].
3. **Verdict**: one draw of the exponential mechanism over u, charged to the ``verdict`` stage before it is drawn.
   Adding a row lowers every candidate's utility by 0 to c and removing one raises each by 0 to c, so under
   add/remove-one the utilities are monotone with Δu = c, and the selection is ε-DP at probabilities ∝ exp(ε·u/c)
   (:class:`~pcevolve.privacy.mechanisms.ExponentialMechanism`, ``monotone``); under replace-one Δu = c, not monotone.

Every generation's ε is the same, fitted so that all of them compose to the stage's cap
(:func:`~pcevolve.privacy.calibration.stage_selection_epsilon`). The winner after the last generation is
delivered. Measured against the one-shot release at the same total ε (docs/tabular.md), it never won by more than the
run-to-run spread, so it is off by default.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.data.table_schema import TableSchema
from pcevolve.privacy.mechanisms import ExponentialMechanism
from pcevolve.privacy.selection_rounds import EVOLUTION_ROUNDS
from pcevolve.synthesis.marginals import MarginalModel

if TYPE_CHECKING:
    from pcevolve.privacy.ledger import BudgetLedger
    from pcevolve.privacy.noise import NoiseSource

#: The ledger stage of the verdicts (the pool runs' per-generation verdict has the same name and role).
STAGE = EVOLUTION_ROUNDS.stage


@dataclass(frozen=True)
class EvolutionSettings:
    """The evolution's public settings (``synthesis.*``).

    Attributes:
        generations: Verdicts, one per generation.
        candidates: Models judged per generation (the winner and its variants).
        rows: Rows drawn from a candidate for its logistic regression.
        clip: c, the bound of a private row's log-likelihood term (Δu).
        mutation: The first generation's jitter in units of the release's relative noise.
    """

    generations: int = 3
    candidates: int = 8
    rows: int = 600
    clip: float = 3.0
    mutation: float = 1.0


def mutated(model: MarginalModel, scale: float, rng: np.random.Generator) -> MarginalModel:
    """A variant: every class's bin probabilities jittered by N(0, scale²) on the log scale and renormalised."""
    probabilities = []
    for p in model.probabilities:
        q = np.exp(np.log(np.maximum(p, 1e-4)) + rng.normal(0.0, scale, p.shape))
        probabilities.append(q / q.sum(axis=1, keepdims=True))
    return replace(model, probabilities=tuple(probabilities))


def first_scale(model: MarginalModel, noise_std: float, mutation: float) -> float:
    """The first generation's jitter: ``mutation`` × the release's noise std over a typical bin's released count
    (the smallest released class spread over the mean number of bins), at most ``mutation``: public and released."""
    typical = float(np.min(model.class_sizes)) / float(np.mean([b.size for b in model.bins]))
    return mutation * min(1.0, noise_std / max(typical, 1.0))


def one_hot(rows: np.ndarray, schema: TableSchema) -> np.ndarray:
    """Rows as a logistic regression's inputs: categories one-hot, numbers scaled to [0, 1] by the declared bounds."""
    parts = []
    for j, column in enumerate(schema.columns):
        if column.kind == "categorical":
            size = len(column.categories)
            parts.append(np.eye(size)[np.clip(np.rint(rows[:, j]), 0, size - 1).astype(int)])
        else:
            span = column.high - column.low if column.high > column.low else 1.0
            parts.append(((np.clip(rows[:, j], column.low, column.high) - column.low) / span)[:, None])
    return np.hstack(parts)


def fitted_classifier(rows: np.ndarray, labels: np.ndarray, schema: TableSchema,
                      classes: int) -> Callable[[np.ndarray], np.ndarray]:
    """A logistic regression fitted on a candidate's drawn rows (no private row): rows → (N, K) class probabilities."""
    from sklearn.linear_model import LogisticRegression

    inputs = one_hot(rows, schema)
    mean, spread = inputs.mean(axis=0), inputs.std(axis=0)
    spread = np.where(spread > 0, spread, 1.0)
    present = np.unique(labels)
    model = LogisticRegression(C=1.0, max_iter=500).fit((inputs - mean) / spread, labels) if len(present) > 1 \
        else None

    def probabilities(queries: np.ndarray) -> np.ndarray:
        out = np.full((len(queries), classes), 1e-12)
        if model is None:
            out[:, present[0]] = 1.0
        else:
            out[:, model.classes_] = model.predict_proba((one_hot(queries, schema) - mean) / spread)
        return out

    return probabilities


def clipped_log_likelihood(probabilities: np.ndarray, labels: np.ndarray, clip: float) -> float:
    """Σᵢ max(log p(yᵢ | xᵢ), −clip): every term in [−clip, 0] (the verdict's utility, Δu = clip)."""
    if len(labels) == 0:
        return 0.0
    chosen = probabilities[np.arange(len(labels)), labels]
    return float(np.maximum(np.log(np.maximum(chosen, 1e-300)), -clip).sum())


def evolve(model: MarginalModel, private_rows: np.ndarray, private_labels: np.ndarray, schema: TableSchema,
           settings: EvolutionSettings, *, noise_std: float, ledger: BudgetLedger, noise: NoiseSource,
           seed: int, start: int = 0,
           on_generation: Callable[[int, MarginalModel, dict[str, Any]], None] = lambda *_: None) -> MarginalModel:
    """Generations ``start`` … ``generations − 1`` of the evolution from ``model`` (module docstring); each verdict is
    charged to :data:`STAGE` before it is drawn, and ``on_generation(g, winner, record)`` is called after each (to
    save it). Generation g's candidates and rows come from the public stream seeded ``[seed, g]``, so a resumed run
    judges exactly the candidates it would have."""
    classes = model.classes
    epsilon = EVOLUTION_ROUNDS.epsilon(ledger, settings.generations)
    mechanism = ExponentialMechanism(epsilon, utility_sensitivity=settings.clip, neighbouring=ledger.neighbouring,
                                     monotone=ledger.neighbouring == "add_remove")
    scale0 = first_scale(model, noise_std, settings.mutation)
    per_class = [max(1, settings.rows // classes)] * classes
    labels = np.asarray(private_labels, dtype=np.int64)
    for generation in range(start, settings.generations):
        rng = np.random.default_rng([seed, generation])
        scale = scale0 * (1.0 - generation / settings.generations)
        candidates = [model, *(mutated(model, scale, rng) for _ in range(settings.candidates - 1))]
        utilities = []
        for candidate in candidates:
            rows, drawn = candidate.sample(per_class, rng)
            classify = fitted_classifier(rows, drawn, schema, classes)
            utilities.append(clipped_log_likelihood(classify(private_rows) if len(labels) else np.zeros((0, classes)),
                                                    labels, settings.clip))
        chosen = mechanism.release(np.asarray(utilities), ledger=ledger, stage=STAGE, noise=noise,
                                   description=f"the private verdict among {len(candidates)} candidates, generation "
                                               f"{generation + 1}")
        model = candidates[chosen]
        on_generation(generation, model, {"generation": generation + 1, "chosen": int(chosen), "kept_parent":
                                          chosen == 0, "scale": scale, "selection_epsilon": epsilon})
    return model
