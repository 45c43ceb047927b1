"""The privacy judges of a synthetic table: a distance-to-closest-record membership attack, and exact copies.

Members are private rows and non-members test rows, in counts that are public (the test set's class sizes; the members
drawn with replacement, :func:`pcevolve.evaluation.members.membership_split`); each is scored by minus its Euclidean
distance to the nearest synthetic row in the attack space (:func:`~pcevolve.evaluation.table_encoding.attack_space`), so
members sitting closer score higher; the result is the attack's ROC AUC with a bootstrap interval
(:func:`pcevolve.evaluation.attacks.evaluate_attack`). 0.5 means the attacker cannot tell members from non-members.
Exact copies (:func:`exact_copies`): synthetic rows equal,
in every feature column, to a private row — and, as the chance baseline, to a test row (with few coarse columns,
equal rows happen by chance). All of it reads the private rows: :meth:`PrivacyJudgement.to_json` holds what may leave
the secure zone — the attack's AUC and success to :data:`AUC_DECIMALS` decimals (an exact AUC is a ratio with
denominator members × non-members, so it can pin down the private set's size) and only *whether* a private row was
copied; :meth:`PrivacyJudgement.to_secure_json` the exact figures. The text judge shows its attack with
:func:`shared_attack` too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pcevolve.data.table_schema import TableSchema
from pcevolve.evaluation.attacks import AttackResult, evaluate_attack
from pcevolve.evaluation.copies import nearest_neighbours
from pcevolve.evaluation.shipped import RATE_DECIMALS, shared_rate
from pcevolve.evaluation.table_encoding import attack_space

#: Decimals of the attack AUC (and of every other private-derived rate) in the shareable figures.
AUC_DECIMALS = RATE_DECIMALS
#: Bootstrap resamples of the attack's statistics.
ATTACK_RESAMPLES = 200


def membership_attack(members: np.ndarray, non_members: np.ndarray, synthetic: np.ndarray, schema: TableSchema, *,
                      rng: np.random.Generator, resamples: int = ATTACK_RESAMPLES, epsilon: float | None = None,
                      delta: float | None = None, groups: np.ndarray | None = None) -> AttackResult:
    """The distance-to-closest-record attack: score = −(distance to the nearest synthetic row), in
    :func:`attack_space`; evaluated with bootstrap intervals drawn from ``rng`` (over private rows: ``groups`` names
    each member's, :func:`~pcevolve.evaluation.attacks.evaluate_attack`)."""
    space = [attack_space(rows, schema, synthetic) for rows in (members, non_members, synthetic)]
    _, member_distance = nearest_neighbours(space[0], space[2])
    _, non_member_distance = nearest_neighbours(space[1], space[2])
    return evaluate_attack(-member_distance, -non_member_distance, attack="dcr", rng=rng, resamples=resamples,
                           epsilon=epsilon, delta=delta, groups=groups)


def shared_attack(attack: AttackResult, name: str) -> dict[str, Any]:
    """The attack called ``name`` as it may leave the secure zone: its AUC, the AUC's interval and its success rounded
    by :func:`~pcevolve.evaluation.shipped.shared_rate` (:data:`AUC_DECIMALS` decimals), whether it beats what the
    guarantee allows, and the confidence."""
    auc, success = attack.auc, attack.success
    return {"attack": name, "auc": shared_rate(auc.value),
            "auc_interval": [shared_rate(auc.low), shared_rate(auc.high)], "success": shared_rate(success.value),
            "exceeds_dp_bound": attack.exceeds_dp_bound, "confidence": attack.confidence, "auc_decimals": AUC_DECIMALS}


def _row_keys(rows: np.ndarray) -> list[bytes]:
    # + 0.0 turns -0.0 into 0.0: equal values must have equal bytes.
    return [row.tobytes() for row in np.ascontiguousarray(np.asarray(rows, dtype=np.float64) + 0.0)]


def exact_copies(candidates: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Indices (ascending) of the candidate rows equal in every column to some reference row."""
    known = set(_row_keys(reference))
    return np.array([i for i, key in enumerate(_row_keys(candidates)) if key in known], dtype=np.int64)


@dataclass(frozen=True)
class PrivacyJudgement:
    """The membership attack and the copy check.

    Attributes:
        attack: The distance-to-closest-record attack's result.
        members: Members (= non-members) in the attack (public: the test set's class sizes, capped).
        private_copies: Synthetic rows equal in every feature column to a private row.
        test_copies: Synthetic rows equal in every feature column to a test row (the chance baseline).
        private_rows: Rows of the private table.
    """

    attack: AttackResult
    members: int
    private_copies: int
    test_copies: int
    private_rows: int

    def to_json(self) -> dict[str, Any]:
        """Shareable: the AUC and success rounded (:func:`~pcevolve.evaluation.shipped.shared_rate`), whether any
        private row was copied, the test copy count."""
        return {**shared_attack(self.attack, "distance to closest record"),
                "private_rows_copied": self.private_copies > 0, "test_rows_copied": self.test_copies}

    def to_secure_json(self) -> dict[str, Any]:
        return {"attack": self.attack.to_json(curve=True), "members": self.members, "non_members": self.members,
                "private_copies": self.private_copies, "test_copies": self.test_copies,
                "private_rows": self.private_rows}
