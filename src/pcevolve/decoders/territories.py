"""Class territories: the part of a retrieval decoder's pool each class may draw from.

A row of class k is retrieved within ``members[k]`` only, so a delivered sample carries label k only where the
run's pool labels put k. The search cuts them from the DP release and public data
(:func:`pcevolve.search.territory.cut_territories`); a decoder only reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class ClassTerritories:
    """``members[k]``: the (sorted) pool indices class k may draw from; ``spreads[k]``: the covariance of their
    coordinates (P, P)."""

    members: tuple[np.ndarray, ...]
    spreads: np.ndarray

    @property
    def num_classes(self) -> int:
        return len(self.members)

    def sizes(self) -> list[int]:
        return [len(m) for m in self.members]

    def within(self, labels: np.ndarray, choose: Callable[[int, np.ndarray], np.ndarray]) -> np.ndarray:
        """Pool index for each row: ``members[k][choose(k, rows)]`` for the ``rows`` labelled k.

        ``choose`` picks, for the rows of one class, positions within that class's territory.
        """
        labels = np.asarray(labels)
        chosen = np.empty(len(labels), dtype=np.int64)
        for k, members in enumerate(self.members):
            rows = np.flatnonzero(labels == k)
            if len(rows):
                chosen[rows] = members[choose(k, rows)]
        return chosen
