"""The settings of a table run without a public pool (``data.public: null``): the rows are made, not retrieved.

The release stage's budget goes to one Gaussian release of the class sizes and of every class's histogram over
every column's bins (docs/privacy.md §3.11); with ``binning: quantiles`` a share of it first places the numeric
columns' bins at the quantiles of a released fine histogram (classes pooled). Every setting is public: none may be
chosen by looking at the private rows.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pcevolve.config.base import Frozen

#: From this total ε on, ``binning: auto`` places the bins by a release (``quantiles``); below, equal widths.
QUANTILE_BINNING_FROM = 4.0


class SynthesisConfig(Frozen):
    """How a table without a public pool is synthesised from its declared schema and the private rows' releases."""

    # Bins of every numeric column that the schema does not fix (an integer column with at most this many values
    # gets one bin per value; a category one bin per declared category).
    bins: int = Field(8, ge=2, le=256)
    # Where the numeric columns' bin edges lie: "width", equal widths over the declared bounds (free); "quantiles",
    # at the quantiles of a released fine histogram of each such column (a share of the release stage); "auto",
    # quantiles from a total ε of 4 on, widths below (at ε = 1 the fine histogram is mostly noise).
    binning: Literal["width", "quantiles", "auto"] = "auto"
    # The quantile placement's share of the release stage, and the fine grid's cells per column over its bounds.
    quantile_share: float = Field(0.15, gt=0.0, lt=1.0)
    quantile_cells: int = Field(64, ge=4, le=4096)
    # James–Stein shrinkage of each class's histogram toward the column's pooled one (0: none; "auto": 1 where
    # bins are placed by quantiles, 0 with equal widths).
    shrinkage: float | Literal["auto"] = "auto"
    # Rows delivered per class (the declared classes in equal numbers), or, with balance "released", in all,
    # split by the released class sizes.
    per_class: int = Field(1000, ge=1, le=1_000_000)
    balance: Literal["balanced", "released"] = "balanced"
    # How the delivered rows are labelled: "marginals", each class's rows drawn from its own marginals; "logistic"
    # (two classes only), rows drawn from the classes' marginals in equal parts and labelled by a logistic regression
    # trained on the private rows with a few noisy gradient steps (synthesis/labeller.py), which learns how the
    # columns combine; "auto", logistic for two classes from a total ε of 4 on (below, its gradient is mostly noise).
    labels: Literal["marginals", "logistic", "auto"] = "auto"
    # The logistic labeller's share of the release stage, its noisy gradient steps, the damping of each step, its
    # ridge per released row, and its pull back toward the released marginals' own classifier, in units of the
    # gradient's noise std.
    labeller_share: float = Field(0.25, gt=0.0, lt=1.0)
    labeller_steps: int = Field(3, ge=1, le=50)
    labeller_step: float = Field(0.5, gt=0.0, le=1.0)
    labeller_ridge: float = Field(0.002, ge=0.0)
    labeller_anchor: float = Field(2.0, ge=0.0)
    # The original method's evolution of the released marginals (synthesis/evolve.py): each generation a private
    # verdict, one exponential-mechanism draw among `candidates` models judged by the clipped log-likelihood of the
    # private labels under a logistic regression fitted on each candidate's rows. It pays from privacy.split.verdict.
    # Off: against the one-shot release at the same total ε it never won by more than the run-to-run spread
    # (measured in docs/tabular.md), so the one-shot release is delivered.
    evolve: bool = False
    generations: int = Field(3, ge=1, le=100)
    candidates: int = Field(8, ge=2, le=64)
    candidate_rows: int = Field(600, ge=20, le=100_000)
    loglik_clip: float = Field(3.0, gt=0.0)
    mutation: float = Field(1.0, ge=0.0)

    def binning_for(self, epsilon: float) -> Literal["width", "quantiles"]:
        """The binning at a total ``epsilon`` ("auto" resolved; ε is public)."""
        if self.binning != "auto":
            return self.binning
        return "quantiles" if epsilon >= QUANTILE_BINNING_FROM else "width"

    def shrinkage_for(self, epsilon: float) -> float:
        """The shrinkage factor at a total ``epsilon`` ("auto" resolved)."""
        if self.shrinkage != "auto":
            return float(self.shrinkage)
        return 1.0 if self.binning_for(epsilon) == "quantiles" else 0.0

    def labels_for(self, epsilon: float, classes: int) -> Literal["marginals", "logistic"]:
        """The labelling at a total ``epsilon`` for ``classes`` declared classes ("auto" resolved; both public)."""
        if self.labels != "auto":
            return self.labels
        return "logistic" if classes == 2 and epsilon >= QUANTILE_BINNING_FROM and not self.evolve else "marginals"
