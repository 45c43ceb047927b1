"""The release of a table without a public pool: what the private rows give, each part through the ledger.

One stage (``release``) pays for everything the delivered rows are drawn from (:class:`MadeTable`):

1. **Bin placement** (``binning: quantiles`` only): per numeric column whose bins the schema does not fix, the
   histogram of every private row (classes pooled) over a fine grid of its declared bounds. One
   :class:`~pcevolve.privacy.histograms.HistogramRelease` of m = those columns: every row adds 1 to one cell of each,
   so the L2 sensitivity is √m (add/remove-one; √(2m) replace-one). Post-processing: cells under one noise std set to
   0, then the bins' edges at the released quantiles (:func:`~pcevolve.synthesis.bins.quantile_bins`).
2. **Marginals**: the class sizes (K cells, a row's class) and, per column j, the histogram over class × bin (K·B_j
   cells, a row's class and its value's bin). One release of m = d + 1 histograms: every row adds 1 to one cell of
   each, L2 sensitivity √(d + 1) (add/remove-one; √(2(d + 1)) replace-one).
3. **Labeller** (``labels: logistic``, two classes): ``labeller_steps`` noisy gradients of a logistic regression on
   the private rows, each of L2 sensitivity X (:mod:`~pcevolve.synthesis.labeller`; 2X replace-one).

The stage's noise is one Gaussian z fitted to its cap by the ledger's accountant
(:func:`~pcevolve.privacy.calibration.stage_gaussian_noise_multiplier`), split by the parts' shares: a part of
share s released r times gets z·√(r / s) each time, so that all of them compose to exactly that Gaussian
(Σ z_i⁻² = z⁻²). :func:`planned_events` is what the release will charge, read by ``pcevolve budget plan`` and by the
run's stage caps alike.

Every private value reaches a statistic only through its bin (:meth:`~pcevolve.synthesis.bins.ColumnBins.index`, a
function of the schema and of released values) or the labeller's features of it (a function of the released
marginals), and the label only as its declared class.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.data.table_schema import TableSchema
from pcevolve.privacy.calibration import stage_gaussian_noise_multiplier
from pcevolve.privacy.events import GaussianRelease
from pcevolve.privacy.histograms import HistogramRelease
from pcevolve.synthesis.bins import ColumnBins, fixed_by_schema, grid, quantile_bins, width_bins
from pcevolve.synthesis.labeller import LabellerSettings, labelled_rows, release_labeller
from pcevolve.synthesis.marginals import MarginalModel

if TYPE_CHECKING:
    from pcevolve.config.synthesis import SynthesisConfig
    from pcevolve.data import LabeledDataset
    from pcevolve.privacy.ledger import BudgetLedger
    from pcevolve.privacy.noise import NoiseSource

#: The ledger stage the release charges.
STAGE = "release"
#: Noisy fine-grid cells under this many noise stds count as empty when the bins are placed (post-processing).
PLACEMENT_FLOOR = 1.0
#: The parts of the release, in the order it charges them.
PART_ORDER = ("bin_placement", "marginals", "gradient")


@dataclass(frozen=True)
class ReleaseParts:
    """The release's parts, their shares of the stage (they sum to 1) and how many times each is released.

    Attributes:
        placed: The columns whose bins a release places (their schema indices); empty with equal widths.
        shares: Part name → share of the stage (:data:`PART_ORDER` names).
        repeats: Part name → releases of it (the labeller's steps; 1 for the others).
    """

    placed: tuple[int, ...]
    shares: dict[str, float]
    repeats: dict[str, int]


def release_parts(schema: TableSchema, settings: SynthesisConfig, epsilon: float, classes: int) -> ReleaseParts:
    """What the release is made of under ``settings`` at a total ``epsilon`` for ``classes`` declared classes
    (public facts only)."""
    placed: tuple[int, ...] = ()
    if settings.binning_for(epsilon) == "quantiles":
        placed = tuple(j for j, column in enumerate(schema.columns) if not fixed_by_schema(column, settings.bins))
    shares = {"bin_placement": settings.quantile_share, "marginals": 1.0 - settings.quantile_share} if placed else \
        {"marginals": 1.0}
    repeats = dict.fromkeys(shares, 1)
    if settings.labels_for(epsilon, classes) == "logistic":
        shares = {name: share * (1.0 - settings.labeller_share) for name, share in shares.items()}
        shares["gradient"], repeats["gradient"] = settings.labeller_share, settings.labeller_steps
    return ReleaseParts(placed, shares, repeats)


def part_noise_multipliers(ledger: BudgetLedger, parts: ReleaseParts) -> dict[str, float]:
    """Each part's noise multiplier per release: the stage's one Gaussian z (fitted to its cap) split by the shares
    and the repeats (module docstring)."""
    z = stage_gaussian_noise_multiplier(ledger, STAGE)
    return {name: z * math.sqrt(parts.repeats[name] / share) for name, share in parts.shares.items()}


def planned_events(parts: ReleaseParts, noise_multipliers: dict[str, float]) -> list[tuple[str, GaussianRelease]]:
    """What the release will charge, in order, for the parts' noise multipliers (nothing is charged here)."""
    return [(name, GaussianRelease(noise_multipliers[name], parts.repeats[name])) for name in PART_ORDER
            if name in noise_multipliers]


@dataclass(frozen=True)
class MadeTable:
    """What the delivered rows are drawn from: the released marginals, and (labeller) the logistic θ.

    Attributes:
        marginals: The released class marginals.
        theta: The labeller's θ (None: each class's rows come from its own marginals).
    """

    marginals: MarginalModel
    theta: np.ndarray | None = None

    def sample(self, counts: Sequence[int], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``counts[k]`` rows labelled k (fewer where the labeller drew too few of a label): post-processing."""
        if self.theta is None:
            return self.marginals.sample(counts, rng)
        return labelled_rows(self.marginals, self.theta, counts, rng)

    def save(self, path: Path, **released: np.ndarray) -> None:
        """As :meth:`MarginalModel.save`, with θ beside the marginals."""
        self.marginals.save(path, **released, **({} if self.theta is None else {"theta": self.theta}))

    @classmethod
    def load(cls, path: Path, schema: TableSchema) -> MadeTable:
        with np.load(path, allow_pickle=False) as arrays:
            theta = arrays["theta"] if "theta" in arrays else None
        return cls(MarginalModel.load(path, schema), theta)


def release_table(private: LabeledDataset, schema: TableSchema, settings: SynthesisConfig, *, epsilon: float,
                  ledger: BudgetLedger, noise: NoiseSource,
                  rng: np.random.Generator) -> tuple[MadeTable, dict[str, Any]]:
    """Release what the rows are made from (module docstring): every part charged before its noise is drawn.

    Args:
        epsilon: The run's total ε (public): it resolves the "auto" settings.
        rng: Public randomness (the labeller's rows drawn from the released marginals).

    Returns:
        The released table model, and a summary of what was released (noise multipliers and stds, the binning, the
        noisy class counts): DP-safe.
    """
    classes = len(private.class_names)
    parts = release_parts(schema, settings, epsilon, classes)
    noise_multipliers = part_noise_multipliers(ledger, parts)
    rows = private.samples
    bins = [width_bins(column, settings.bins) for column in schema.columns]
    summary: dict[str, Any] = {"binning": settings.binning_for(epsilon),
                               "labels": settings.labels_for(epsilon, classes),
                               "noise_multipliers": noise_multipliers}
    if parts.placed:
        fine = [grid(schema.columns[j], settings.quantile_cells) for j in parts.placed]
        placement = HistogramRelease(tuple(len(edges) - 1 for edges in fine), noise_multipliers["bin_placement"],
                                     ledger.neighbouring)
        cells = np.stack([ColumnBins(schema.columns[j], edges).index(rows[:, j]) for j, edges in
                          zip(parts.placed, fine, strict=True)], axis=1)
        noisy = placement.release(cells, ledger=ledger, stage=STAGE, noise=noise,
                                  description="fine histograms of the numeric columns, classes pooled (bin placement)")
        for j, edges, counts in zip(parts.placed, fine, noisy, strict=True):
            weights = np.where(counts >= PLACEMENT_FLOOR * placement.noise_std, counts, 0.0)
            bins[j] = quantile_bins(schema.columns[j], edges, weights, settings.bins)
        summary["placement_noise_std"] = placement.noise_std
    marginals = HistogramRelease((classes, *(classes * b.size for b in bins)), noise_multipliers["marginals"],
                                 ledger.neighbouring)
    labels = private.labels.astype(np.int64)
    cells = np.stack([labels, *(labels * b.size + b.index(rows[:, j]) for j, b in enumerate(bins))], axis=1) \
        if len(labels) else np.zeros((0, len(bins) + 1), np.int64)
    counts, *histograms = marginals.release(cells, ledger=ledger, stage=STAGE, noise=noise,
                                            description="class sizes and each class's histogram of every column")
    model = MarginalModel.from_release(bins, counts, [h.reshape(classes, b.size) for h, b in
                                                      zip(histograms, bins, strict=True)],
                                       noise_std=marginals.noise_std, shrinkage=settings.shrinkage_for(epsilon))
    summary.update(bins=[b.size for b in bins], noise_std=marginals.noise_std, noisy_counts=[float(c) for c in counts],
                   class_sizes=[float(n) for n in model.class_sizes])
    theta = None
    if "gradient" in parts.shares:
        labeller = LabellerSettings(steps=settings.labeller_steps, step=settings.labeller_step,
                                    ridge=settings.labeller_ridge, anchor=settings.labeller_anchor)
        theta = release_labeller(model, rows, labels, schema, labeller, noise_multiplier=noise_multipliers["gradient"],
                                 ledger=ledger, stage=STAGE, noise=noise, rng=rng)
    return MadeTable(model, theta), summary
