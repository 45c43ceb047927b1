"""Who plays the membership game: members and non-members in counts that are public.

An attack's figures — its AUC, success and TPRs, their bootstrap intervals, its ROC — are ratios over the member
count. Shipped, even rounded to two decimals, several of them together pin that count down: with members per class
min(private rows, test rows), the smallest member count consistent with a class's rounded figures was exactly its
private size, in the few-shot case this tool is for. So here every count is public, a function of the test set
alone (:func:`membership_split`):

* per class k, **m_k = min(test rows of class k, MAX_MEMBERS_PER_CLASS)** members and as many non-members;
* the **non-members** of class k are m_k of its test rows (a seeded choice, without replacement);
* the **members** of class k are m_k draws *with replacement* from its private rows (each private row equally likely
  at each draw): a class with fewer private rows than m_k has rows drawn several times. A class with no private row
  draws from every private row, so that no count, nor any figure's denominator, says that the class is empty.

A row drawn several times is one private row: :attr:`MemberSplit.members` names each draw's private row, so that the
bootstrap resamples private rows, not draws (:func:`pcevolve.evaluation.attacks.evaluate_attack`'s ``groups``), and
the DP-bound check counts each row once. The exact figures, with the private rows' count, stay in ``secure/``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: The most members (and non-members) of one class in an attack: the test set's class size beyond that costs time
#: and adds little (the members are at most the private rows, drawn again and again).
MAX_MEMBERS_PER_CLASS = 1000


@dataclass(frozen=True)
class MemberSplit:
    """The attack's members and non-members, pair by pair.

    Attributes:
        members: For each member draw, its private row (an index into the private set; rows repeat).
        non_members: For each non-member, its test row (an index into the test set; distinct).
        classes: For each pair, the class it stands for (the non-member's class, and the member's — or, for a class
            with no private row, the class its draw stands in for).
    """

    members: np.ndarray
    non_members: np.ndarray
    classes: np.ndarray

    def __len__(self) -> int:
        return len(self.members)


def public_member_counts(test_labels: np.ndarray, classes: int) -> np.ndarray:
    """m_k for every class: its test rows, at most :data:`MAX_MEMBERS_PER_CLASS` (public: the test set's)."""
    counts = np.bincount(np.asarray(test_labels, dtype=np.int64), minlength=classes)[:classes]
    return np.minimum(counts, MAX_MEMBERS_PER_CLASS).astype(np.int64)


def membership_split(private_labels: np.ndarray, test_labels: np.ndarray, *, classes: int,
                     rng: np.random.Generator) -> MemberSplit:
    """Members and non-members, m_k of each per class (module docstring), drawn from ``rng`` class by class.

    With no private row at all there is no member to draw: the split is empty.
    """
    p, t = np.asarray(private_labels, dtype=np.int64), np.asarray(test_labels, dtype=np.int64)
    wanted = public_member_counts(t, classes)
    members, non_members, slots = [], [], []
    for k in range(classes):
        m = int(wanted[k])
        own = np.flatnonzero(p == k)
        pool = own if len(own) else np.arange(len(p))
        if m == 0 or len(pool) == 0:
            continue
        non_members.append(np.sort(rng.permutation(np.flatnonzero(t == k))[:m]))
        members.append(np.sort(pool[rng.integers(0, len(pool), m)]))
        slots.append(np.full(m, k, dtype=np.int64))
    if not members:
        empty = np.zeros(0, np.int64)
        return MemberSplit(empty, empty, empty)
    return MemberSplit(np.concatenate(members).astype(np.int64), np.concatenate(non_members).astype(np.int64),
                       np.concatenate(slots))
