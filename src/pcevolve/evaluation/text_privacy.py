"""The privacy judge of synthetic texts: a closest-text membership attack, and the copies of private texts.

Members are private texts and non-members test texts, in counts that are public (the test set's class sizes; the members
drawn with replacement, :func:`pcevolve.evaluation.members.membership_split`); each is scored by its highest TF-IDF
cosine similarity to a synthetic text (:class:`~pcevolve.evaluation.text_spaces.CosineSpace`, IDF from the synthetic
texts: what the attacker holds), so members sitting closer score higher; the result is the ROC AUC with a bootstrap
interval (:func:`pcevolve.evaluation.attacks.evaluate_attack`). 0.5 means the attacker cannot tell members from
non-members.
With the exact and near copies of private texts (:mod:`~pcevolve.evaluation.text_duplicates`) it makes
:class:`TextPrivacyJudgement`, whose :meth:`~TextPrivacyJudgement.to_json` holds what may leave the secure zone (the
AUC and success rounded, only *whether* a private text was copied) and :meth:`~TextPrivacyJudgement.to_secure_json`
the exact figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pcevolve.evaluation.attacks import AttackResult, evaluate_attack
from pcevolve.evaluation.table_privacy import ATTACK_RESAMPLES, shared_attack
from pcevolve.evaluation.text_duplicates import NEAR_DUPLICATE_COSINE
from pcevolve.evaluation.text_spaces import CosineSpace, best_cosine


def membership_attack(members: np.ndarray, non_members: np.ndarray, synthetic: np.ndarray, *,
                      rng: np.random.Generator, resamples: int = ATTACK_RESAMPLES, epsilon: float | None = None,
                      delta: float | None = None, groups: np.ndarray | None = None) -> AttackResult:
    """The distance-to-closest-record attack: score = the highest TF-IDF cosine similarity to a synthetic text, in
    a :class:`CosineSpace` with the synthetic texts' IDF; evaluated with bootstrap intervals drawn from ``rng``."""
    space = CosineSpace(synthetic)
    reference = space.transform(synthetic)
    _, member_cosine = best_cosine(space.transform(members), reference)
    _, non_member_cosine = best_cosine(space.transform(non_members), reference)
    return evaluate_attack(member_cosine, non_member_cosine, attack="dcr", rng=rng, resamples=resamples,
                           epsilon=epsilon, delta=delta, groups=groups)


@dataclass(frozen=True)
class TextPrivacyJudgement:
    """The membership attack and the copy check.

    Attributes:
        attack: The distance-to-closest-record attack's result.
        members: Members (= non-members) in the attack.
        private_exact, private_near: Synthetic texts that are exact / near duplicates of a private text.
        test_exact, test_near: The same against the test texts (the chance baseline).
        private_texts: Texts of the private set.
        threshold: The near-duplicate cosine threshold.
    """

    attack: AttackResult
    members: int
    private_exact: int
    private_near: int
    test_exact: int
    test_near: int
    private_texts: int
    threshold: float = NEAR_DUPLICATE_COSINE

    def to_json(self) -> dict[str, Any]:
        """Shareable: the AUC and success rounded (:func:`~pcevolve.evaluation.shipped.shared_rate`), whether any
        private text was copied, the test copy counts."""
        return {**shared_attack(self.attack, "closest synthetic text (TF-IDF cosine similarity)"),
                "near_duplicate_cosine": self.threshold,
                "private_texts_copied": self.private_exact > 0, "private_texts_near_copied": self.private_near > 0,
                "test_texts_copied": self.test_exact, "test_texts_near_copied": self.test_near}

    def to_secure_json(self) -> dict[str, Any]:
        return {"attack": self.attack.to_json(curve=True), "members": self.members, "non_members": self.members,
                "private_exact_copies": self.private_exact, "private_near_copies": self.private_near,
                "test_exact_copies": self.test_exact, "test_near_copies": self.test_near,
                "near_duplicate_cosine": self.threshold, "private_texts": self.private_texts}
