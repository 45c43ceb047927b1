"""Histograms released under the Gaussian mechanism: each private record adds 1 to one cell of each histogram.

Rules that must never change:

* The cells a record falls into are computed by the caller from the record and public facts only (the declared
  schema's bins, a public grid): :class:`HistogramRelease` receives, per record, one cell index per histogram, and
  counts them here. Nothing else of the record reaches the release.
* Sensitivity: under add/remove-one a record changes exactly one cell of each of the m histograms by 1, so the
  concatenated counts move by at most √m in L2 norm; under replace-one the record that leaves and the one that
  arrives change two cells of each by 1, √(2m). The noise is ``noise_multiplier`` times that, on every cell.
* The release charges the ledger (one :class:`~pcevolve.privacy.events.GaussianRelease`) before any noise is drawn,
  through :class:`~pcevolve.privacy.mechanisms.GaussianMechanism`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pcevolve.privacy.events import Neighbouring, check_neighbouring
from pcevolve.privacy.mechanisms import GaussianMechanism
from pcevolve.privacy.noise import NoiseSource, check_positive

if TYPE_CHECKING:
    from pcevolve.privacy.ledger import BudgetLedger


def histogram_sensitivity(histograms: int, neighbouring: Neighbouring) -> float:
    """L2 sensitivity of ``histograms`` histograms of which every record adds 1 to one cell each (module
    docstring): √m under add/remove-one, √(2m) under replace-one."""
    if histograms < 1:
        raise ValueError(f"need at least one histogram, got {histograms}")
    return math.sqrt(histograms * (2 if check_neighbouring(neighbouring) == "replace_one" else 1))


@dataclass(frozen=True)
class HistogramRelease:
    """m histograms of the private records, released together with Gaussian noise.

    Attributes:
        sizes: Cells of each histogram (m = its length); every record falls into exactly one cell of each.
        noise_multiplier: Noise std over the L2 sensitivity (:func:`histogram_sensitivity`).
        neighbouring: The relation the sensitivity refers to (the ledger's).
    """

    sizes: tuple[int, ...]
    noise_multiplier: float
    neighbouring: Neighbouring = "add_remove"

    def __post_init__(self) -> None:
        if not self.sizes or any(int(size) < 1 for size in self.sizes):
            raise ValueError(f"every histogram needs at least one cell, got {self.sizes}")
        check_positive("noise_multiplier", self.noise_multiplier)

    @property
    def mechanism(self) -> GaussianMechanism:
        return GaussianMechanism(histogram_sensitivity(len(self.sizes), self.neighbouring), self.noise_multiplier,
                                 neighbouring=self.neighbouring)

    @property
    def noise_std(self) -> float:
        """The noise's standard deviation on every cell."""
        return self.mechanism.noise_std

    def exact(self, cells: np.ndarray) -> np.ndarray:
        """The concatenated counts of ``cells`` (records × m cell indices): what :meth:`release` adds noise to."""
        cells = np.asarray(cells)
        if cells.ndim != 2 or cells.shape[1] != len(self.sizes):
            raise ValueError(f"need one cell index per record and histogram ({len(self.sizes)}), got "
                             f"shape {cells.shape}")
        if cells.size and not np.issubdtype(cells.dtype, np.integer):
            raise ValueError(f"cell indices must be integers, got {cells.dtype}")
        counts = []
        for j, size in enumerate(self.sizes):
            column = cells[:, j].astype(np.int64)
            if column.size and (column.min() < 0 or column.max() >= size):
                raise ValueError(f"histogram {j}: a cell index outside 0..{size - 1}")
            counts.append(np.bincount(column, minlength=size).astype(np.float64))
        return np.concatenate(counts)

    def release(self, cells: np.ndarray, *, ledger: BudgetLedger, stage: str, noise: NoiseSource,
                description: str) -> list[np.ndarray]:
        """Charge the ledger, then return each histogram's noisy counts (one array per histogram, in order).

        Raises:
            BudgetExceeded: The ledger refused; no noise was drawn.
        """
        noisy = np.asarray(self.mechanism.release(self.exact(cells), ledger=ledger, stage=stage, noise=noise,
                                                  description=description))
        return split_counts(noisy, self.sizes)


def split_counts(values: np.ndarray, sizes: Sequence[int]) -> list[np.ndarray]:
    """Concatenated histograms back into one array per histogram."""
    return np.split(np.asarray(values, dtype=np.float64), np.cumsum(sizes)[:-1])
