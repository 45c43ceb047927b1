"""Pool-free lab: a DP synthetic table from a private table ALONE (schema and classes declared), by measurement.

    .venv/bin/python bench/poolfree_data.py                        # the three tables (lending, credit, rare)
    .venv/bin/python bench/poolfree_lab.py run --preset tuned --tag final --real --tables lending credit rare \
        --epsilons 1 8 --seeds 0 1 2 --designs marginals copula pe fitness pe-fitness lr-label
    .venv/bin/python bench/poolfree_lab.py table --tags final      # mean ± sd per table, ε and design (Markdown)
    .venv/bin/python bench/poolfree_lab.py compare --tags final    # best evolved vs best one-shot design
    .venv/bin/python bench/poolfree_lab.py --smoke --out DIR       # the code path on a made-up table, in seconds

Write-up and results: docs/poolfree-lab.md. pcevolve is imported from a pinned commit (bench/poolfree_pin.py).
``run`` reads the tables ``bench/poolfree_data.py`` writes to ``bench/results/poolfree_lab_data/`` (run it first);
``run`` writes ``bench/results/poolfree_lab-TAG.json`` and the synthetic tables under ``poolfree_lab_runs/TAG/``.

**Smoke** (``--smoke``, ``--out DIR``, default a new temporary folder): ε 8, seed 0, the ``real`` line and all six
designs with the tuned settings scaled down (200 delivered rows; the loops 2 generations, the fitness loops 3
candidates of 100 rows; lr-label 2 steps), about 15 s on one core, on bench/smoke.py's made-up table (60 private
rows, classes fraud/ok; drafted into ``DIR/data/poolfree_table`` by the pinned pcevolve). It writes
``DIR/poolfree_lab.json`` and the synthetic tables under ``DIR/poolfree_lab_runs/``, never ``bench/results/``, and
imports pcevolve as a reader's run does, from the pinned commit (extracted from git history on first use: a full
clone has it; otherwise ``POOLFREE_PCEVOLVE_COMMIT=worktree``). Its numbers mean nothing.

No public table is read: the synthesizers see the declared ``schema.yaml`` (types, bounds, category lists), the
declared classes, (ε, δ) and the private rows — the rows only inside the DP mechanisms of :class:`Budget`.

Designs (functions ``design_*``; each returns the synthetic rows, their labels, the budget with its ledger and info):

* ``marginals`` (design 1) — one Gaussian release of the class counts and every class's 1-way marginal of every
  column (bins: schema bounds, or quantiles of a DP fine histogram); each column sampled independently per class.
* ``copula`` (design 2) — design 1 plus a second Gaussian release: the within-class correlation of the rows' normal
  scores (computed through the released marginals), each row's score vector clipped to a public L2 norm; sampled
  as a Gaussian copula per class.
* ``pe`` (design 3) — Private Evolution: the one-shot start, then T generations of nearest-candidate votes
  (Gaussian noise on the vote histogram), resampling by noisy votes, column-resampling mutations and crossover.
* ``fitness`` (design 4) — a population of generator parameters (the start's marginals and correlation, mutated);
  each generation a logistic regression fitted on each candidate's rows is scored on the private rows by the
  clipped log-likelihood of the true label, the winner chosen by the (monotone) exponential mechanism.
* ``pe-fitness`` (design 5) — design 3's row population, selected as design 4 selects (candidate row sets).
* ``lr-label`` (design 6) — design 1's model draws the rows; their labels come from a logistic regression that
  takes a few noisy-gradient steps (Gaussian) from the classifier design 1's rows imply, anchored to it.

Privacy, for every design: the neighbouring relation is add/remove one private row; each statistic is bounded
before it is summed (stated at each release below, and in docs/poolfree-lab.md); the noise of every release is
calibrated so that the composition of all planned events, computed by pcevolve's accountant
(``pcevolve.privacy.accounting.account`` over ``dp_accounting``'s PLD and RDP), meets the target ε at δ; the events
are charged to a :class:`~pcevolve.privacy.ledger.BudgetLedger`, which refuses any charge beyond the total. Noise
comes from an explicit seeded numpy Generator (research only; the product uses secure noise). ``--epsilons inf``
runs without noise: a diagnosis of the ceilings, NOT private.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

sys.path.insert(0, str(Path(__file__).resolve().parent))
from poolfree_pin import PINNED  # noqa: E402  (before any pcevolve import)

from pcevolve.data.table_schema import Column, TableSchema
from pcevolve.data.tabular import read_labeled_table
from pcevolve.data.writers import write_table_csv
from pcevolve.privacy.accounting import account
from pcevolve.privacy.calibration import calibrate_noise_multiplier
from pcevolve.privacy.events import ExponentialSelection, GaussianRelease, PrivacyEvent
from pcevolve.privacy.ledger import BudgetLedger
from pcevolve.privacy.mechanisms import ExponentialMechanism, GaussianMechanism
from pcevolve.privacy.noise import GeneratorNoise

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "results" / "poolfree_lab_data"
RESULTS = ROOT / "bench" / "results"
RUNS = RESULTS / "poolfree_lab_runs"
from poolfree_data import TABLES  # noqa: E402

DELTA = 1e-5
STAGE = "synthesis"


# ============================================================================================== the private table
@dataclass(frozen=True)
class Table:
    """A private table with its declared schema and classes. ``x``/``y`` are read only inside :class:`Budget`'s
    mechanisms (and by the judge, which is an audit, not a release)."""

    name: str
    folder: Path
    schema: TableSchema
    classes: tuple[str, ...]
    x: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)

    @property
    def d(self) -> int:
        return len(self.schema.columns)


def load_table(name: str, root: Path = DATA, classes: Sequence[str] | None = None) -> Table:
    """The table ``root/name``; its declared classes are ``TABLES[name]``'s unless given."""
    folder = root / name
    schema = TableSchema.load(folder / "schema.yaml")
    classes = tuple(TABLES[name]["classes"] if classes is None else classes)
    private = read_labeled_table(folder / "private.csv", schema, class_names=classes, min_per_class=0)
    # Clip to the schema's public bounds (data-independent): every statistic below sees clipped values only.
    x = private.samples.copy()
    for j, column in enumerate(schema.columns):
        if column.kind == "numeric":
            x[:, j] = np.clip(x[:, j], column.low, column.high)
    return Table(name, folder, schema, classes, x, private.labels.astype(np.int64))


# ============================================================================================== the budget
@dataclass(frozen=True)
class Part:
    """One planned mechanism: ``kind`` 'gaussian' (noise multiplier) or 'exponential' (pure ε), its share of the
    budget (zCDP weight: a Gaussian with share s gets ρ = s·t²/2, an exponential selection the same ρ = ε²/8), and
    how many times it runs (each run gets the share)."""

    kind: str
    share: float
    count: int = 1


class Budget:
    """The whole (ε, δ) of a synthesis: planned parts, one scale ``t`` calibrated on the accountant so that all
    planned events compose to exactly the target ε, and a ledger every release is charged to before it draws noise.

    Calibration: every part's noise is a function of one scalar t (Gaussian z = 1/(t·√share), exponential
    ε_sel = 2t·√share); ``calibrate_noise_multiplier`` finds the smallest 1/t whose accountant ε (``account`` over
    all events: PLD and RDP, the smaller) is ≤ the target. The ledger (same accountant) then admits exactly these
    events and refuses anything more.
    """

    def __init__(self, epsilon: float, parts: dict[str, Part], *, delta: float = DELTA, rng: np.random.Generator):
        self.epsilon, self.delta, self.parts = float(epsilon), float(delta), dict(parts)
        self.noise = GeneratorNoise(rng)
        self.rng = rng
        self.oracle = math.isinf(self.epsilon)  # diagnosis only: no noise, NOT private, never reported as DP
        if self.oracle:
            self.t, self.planned, self.planned_epsilon, self.ledger = 1e9, [], math.inf, None
            return

        def events(u: float) -> list[PrivacyEvent]:
            t = 1.0 / u
            out: list[PrivacyEvent] = []
            for part in self.parts.values():
                if part.kind == "gaussian":
                    out.append(GaussianRelease(1.0 / (t * math.sqrt(part.share)), part.count))
                else:
                    out.append(ExponentialSelection(2.0 * t * math.sqrt(part.share), part.count))
            return out

        u = calibrate_noise_multiplier(lambda v: account(events(v), delta=self.delta).epsilon, self.epsilon,
                                       lower=1e-3, upper=1e4, start=1.0, rel_tol=1e-3)
        self.t = 1.0 / u
        self.planned = events(u)
        self.planned_epsilon = account(self.planned, delta=self.delta).epsilon
        self.ledger = BudgetLedger(self.epsilon, self.delta, {STAGE: self.epsilon}, reproducible_noise=True)

    def z(self, name: str) -> float:
        """Noise multiplier (std / L2 sensitivity) of the Gaussian part ``name``."""
        return 1e-9 if self.oracle else 1.0 / (self.t * math.sqrt(self.parts[name].share))

    def selection_epsilon(self, name: str) -> float:
        return 2.0 * self.t * math.sqrt(self.parts[name].share)

    def gaussian(self, name: str, value: np.ndarray, sensitivity: float, description: str) -> np.ndarray:
        """Gaussian mechanism: ``value`` + N(0, (z·Δ₂)²) per coordinate, Δ₂ = ``sensitivity`` (add/remove)."""
        if self.oracle:
            return np.asarray(value, dtype=np.float64).copy()
        mechanism = GaussianMechanism(sensitivity, self.z(name), neighbouring="add_remove")
        return np.asarray(mechanism.release(np.asarray(value, dtype=np.float64), ledger=self.ledger, stage=STAGE,
                                            noise=self.noise, description=description))

    def select(self, name: str, utilities: np.ndarray, sensitivity: float, *, monotone: bool,
               description: str) -> int:
        """Exponential mechanism over a data-independent candidate list (Δu = ``sensitivity``)."""
        if self.oracle:
            return int(np.argmax(utilities))
        mechanism = ExponentialMechanism(self.selection_epsilon(name), utility_sensitivity=sensitivity,
                                         neighbouring="add_remove", monotone=monotone)
        return mechanism.release(np.asarray(utilities, dtype=np.float64), ledger=self.ledger, stage=STAGE,
                                 noise=self.noise, description=description)

    def spent(self) -> float:
        return math.inf if self.oracle else self.ledger.spent()

    def summary(self) -> dict[str, Any]:
        return {"target_epsilon": self.epsilon, "delta": self.delta, "spent_epsilon": self.spent(),
                "planned_epsilon": self.planned_epsilon,
                "parts": {name: ({"kind": p.kind, "share": p.share, "count": p.count, "noise_multiplier": self.z(name)}
                                 if p.kind == "gaussian" else
                                 {"kind": p.kind, "share": p.share, "count": p.count,
                                  "selection_epsilon": self.selection_epsilon(name)})
                          for name, p in self.parts.items()},
                "events": [] if self.oracle else [e.describe() for e in self.ledger.events()]}


# ============================================================================================== bins
@dataclass
class Bins:
    """How a column is discretised. Categorical: one bin per schema category. Numeric: ``edges`` (B+1, over the
    schema bounds; integer columns on the integer grid: bin b holds the integers in [edges[b], edges[b+1]) and the
    last bin includes ``high``); ``fine`` optionally a finer grid with weights, the shape used inside each bin."""

    column: Column
    edges: np.ndarray | None = None
    fine_edges: np.ndarray | None = None
    fine_weights: np.ndarray | None = None

    @property
    def n(self) -> int:
        if self.column.kind == "categorical":
            return len(self.column.categories)
        return len(self.edges) - 1

    def index(self, values: np.ndarray) -> np.ndarray:
        if self.column.kind == "categorical":
            return np.clip(np.rint(values), 0, self.n - 1).astype(np.int64)
        return np.clip(np.searchsorted(self.edges, values, side="right") - 1, 0, self.n - 1)

    def position(self, values: np.ndarray) -> np.ndarray:
        """Where a value lies inside its bin, in [0, 1) (0 for a categorical column)."""
        if self.column.kind == "categorical":
            return np.zeros(len(values))
        b = self.index(values)
        lo, hi = self.edges[b], self.edges[b + 1]
        width = np.where(hi > lo, hi - lo, 1.0)
        return np.clip((values - lo) / width, 0.0, 1.0 - 1e-9)

    def value(self, b: np.ndarray, position: np.ndarray) -> np.ndarray:
        """A value in bin ``b`` at relative ``position`` in [0, 1) (inverse of :meth:`position`, through the fine
        shape inside the bin when there is one)."""
        if self.column.kind == "categorical":
            return b.astype(np.float64)
        lo, hi = self.edges[b], self.edges[b + 1]
        if self.fine_edges is not None:
            out = np.empty(len(b))
            for bb in np.unique(b):
                rows = b == bb
                inside = ((self.fine_edges[:-1] >= self.edges[bb] - 1e-9)
                          & (self.fine_edges[1:] <= self.edges[bb + 1] + 1e-9))
                cells = np.flatnonzero(inside)
                weights = self.fine_weights[cells]
                if len(cells) <= 1 or weights.sum() <= 0:
                    out[rows] = self.edges[bb] + position[rows] * (self.edges[bb + 1] - self.edges[bb])
                    continue
                cdf = np.concatenate([[0.0], np.cumsum(weights) / weights.sum()])
                k = np.clip(np.searchsorted(cdf, position[rows], side="right") - 1, 0, len(cells) - 1)
                frac = (position[rows] - cdf[k]) / np.maximum(cdf[k + 1] - cdf[k], 1e-12)
                low = self.fine_edges[cells[k]]
                out[rows] = low + frac * (self.fine_edges[cells[k] + 1] - low)
            values = out
        else:
            values = lo + position * (hi - lo)
        if self.column.integer:
            values = np.floor(values)
        return np.clip(values, self.column.low, self.column.high)


def integer_grid(column: Column) -> np.ndarray:
    """Edges of one cell per integer in the bounds: [v, v+1) for v = low..high."""
    return np.arange(math.ceil(column.low), math.floor(column.high) + 2, dtype=np.float64)


def width_bins(column: Column, bins: int) -> Bins:
    """Equal-width bins over the schema bounds (integer columns: on the integer grid, one bin per value when they
    fit). Depends on the schema only."""
    if column.kind == "categorical":
        return Bins(column)
    if column.integer:
        grid = integer_grid(column)
        if len(grid) - 1 <= bins:
            return Bins(column, grid)
        cuts = np.unique(np.round(np.linspace(grid[0], grid[-1], bins + 1)))
        return Bins(column, cuts)
    if column.high <= column.low:
        return Bins(column, np.array([column.low, column.low + 1.0]))
    return Bins(column, np.linspace(column.low, column.high, bins + 1))


def fine_grid(column: Column, cells: int) -> np.ndarray:
    """The public fine grid of a numeric column for the DP bin-placement release: equal-width over the bounds
    (integer columns: one cell per value when they fit, else integer-aligned cells)."""
    if column.integer:
        grid = integer_grid(column)
        if len(grid) - 1 <= cells:
            return grid
        return np.unique(np.round(np.linspace(grid[0], grid[-1], cells + 1)))
    return np.linspace(column.low, column.high, cells + 1) if column.high > column.low else \
        np.array([column.low, column.low + 1.0])


def quantile_bins(column: Column, grid: np.ndarray, weights: np.ndarray, bins: int) -> Bins:
    """Bins whose edges lie on ``grid`` at the quantiles of ``weights`` (a DP-released, post-processed fine
    histogram): post-processing only. Cells keep their weights as the shape inside each bin."""
    total = weights.sum()
    if total <= 0:
        return Bins(column, grid[np.unique(np.round(np.linspace(0, len(grid) - 1, bins + 1)).astype(int))])
    cdf = np.cumsum(weights) / total
    cut_cells = [int(np.searchsorted(cdf, q, side="left")) + 1 for q in np.arange(1, bins) / bins]
    idx = np.unique(np.clip([0, *cut_cells, len(grid) - 1], 0, len(grid) - 1))
    return Bins(column, grid[idx], fine_edges=grid, fine_weights=weights)


# ============================================================================================== one-shot release
@dataclass
class Model:
    """A generator's parameters, all DP (released) or post-processed: per class k and column j the probability of
    each bin, the released class sizes, and per class the copula correlation (identity = independent columns)."""

    bins: list[Bins]
    probs: list[np.ndarray]  # per column j: (K, B_j)
    n_hat: np.ndarray  # (K,)
    corr: list[np.ndarray] | None = None  # per class (d, d), None = independent
    order: list[np.ndarray] | None = None  # per column: bin order used by the copula (a permutation)

    def copy(self) -> "Model":
        return Model(self.bins, [p.copy() for p in self.probs], self.n_hat.copy(),
                     None if self.corr is None else [c.copy() for c in self.corr], self.order)


@dataclass(frozen=True)
class Settings:
    """Every hyper-parameter of the designs (public constants: none is read off the private rows)."""

    bins: int = 8                     # numeric bins (max); integer columns with fewer values get one bin per value
    binning: str = "width"            # 'width' (schema bounds) or 'dpq' (DP fine histogram → quantile bins)
    fine_cells: int = 64              # the DP bin-placement release's fine grid per numeric column
    q_share: float = 0.15             # share of the budget for the bin-placement release (binning 'dpq')
    q_threshold: float = 1.0          # fine cells under q_threshold·σ set to 0 (post-processing)
    hist_threshold: float = 0.0       # class-marginal bins under hist_threshold·σ set to 0 (post-processing)
    shrink: float = 0.0               # pseudo-rows of the pooled marginal added to each class's (post-processing)
    js: float = 0.0                   # James-Stein shrinkage of each class's deviation from the pooled marginal:
                                      # kept fraction max(0, 1 − js · expected noise energy / observed energy)
    copula: str = "none"              # 'none', 'class' (one correlation per class) or 'pooled' (within-class, shared)
    copula_share: float = 0.3         # share of the budget for the correlation release
    clip: float = 1.0                 # score vectors clipped to L2 norm √(clip·d)
    order: str = "risk"               # copula's category order: 'index' or 'risk' (by the released class ratio)
    balance: str = "balanced"         # delivered rows: 'balanced' (per_class each) or 'dp' (released class sizes)
    rows: int = 2000                  # rows delivered in all
    # evolution (designs 3-5)
    start_share: float = 0.5          # the start's share of the budget (the rest is the loop's)
    generations: int = 5
    population: float = 0.5           # PE: candidates per class = population · released class size
    vote_threshold: float = 0.0       # PE: noisy votes under this · σ count as 0
    mutate_columns: float = 0.3       # PE: fraction of columns resampled at generation 0 (decays linearly to 1 column)
    crossover: float = 0.5            # PE: probability an offspring is a crossover of two parents
    candidates: int = 8               # fitness: candidates per generation
    fitness_rows: int = 600           # fitness: rows each candidate generates for its classifier
    loglik_clip: float = 3.0          # fitness: per-row score max(log p(y|x), -c) ∈ [-c, 0]
    mutation: float = 1.0             # fitness: mutation scale in units of the release's relative noise
    final: str = "winner"             # fitness: deliver the last 'winner'
    # DP logistic labeller (design 6)
    lr_share: float = 0.4             # share of the budget for the noisy gradients
    newton_steps: int = 8             # noisy-gradient steps from the start model's implied classifier
    step: float = 0.5                 # damping of each preconditioned step
    anchor: float = 0.0               # extra ridge toward θ0 (the start's own classifier): anchor · σ_gradient
    ridge: float = 0.002              # ridge λ (per row) of the logistic regression
    relabel_pool: int = 4              # x drawn for relabelling: relabel_pool × rows, then up to rows/K per class


def make_bins(table: Table, settings: Settings, budget: Budget) -> list[Bins]:
    """Bins for every column: schema-only ('width'), or quantiles of one DP release ('dpq').

    'dpq' release — statistic: per numeric column j, the histogram over its public fine grid of all private rows
    (classes pooled). Add/remove one row changes one cell of each of the d_num histograms by 1: L2 sensitivity
    √d_num. Gaussian noise z_Q·√d_num per cell. Post-processing: cells under q_threshold·σ → 0; quantile edges.
    """
    columns = table.schema.columns
    if settings.binning == "width":
        return [width_bins(c, settings.bins) for c in columns]
    numeric = [j for j, c in enumerate(columns) if c.kind == "numeric"
               and not (c.integer and len(integer_grid(c)) - 1 <= settings.bins)]
    bins = [width_bins(c, settings.bins) for c in columns]
    if not numeric:
        return bins
    grids = [fine_grid(columns[j], settings.fine_cells) for j in numeric]
    exact = []
    for j, grid in zip(numeric, grids):
        cells = np.clip(np.searchsorted(grid, table.x[:, j], side="right") - 1, 0, len(grid) - 2)
        exact.append(np.bincount(cells, minlength=len(grid) - 1).astype(np.float64))
    sensitivity = math.sqrt(len(numeric))
    noisy = budget.gaussian("bin_placement", np.concatenate(exact), sensitivity,
                            "fine histograms of the numeric columns, classes pooled (bin placement)")
    sigma = budget.z("bin_placement") * sensitivity
    at = 0
    for j, grid in zip(numeric, grids):
        cells = noisy[at: at + len(grid) - 1]
        at += len(grid) - 1
        weights = np.where(cells >= settings.q_threshold * sigma, cells, 0.0)
        bins[j] = quantile_bins(columns[j], grid, weights, settings.bins)
    return bins


def release_marginals(table: Table, bins: list[Bins], settings: Settings, budget: Budget) -> Model:
    """Design 1's release. Statistic: the class counts (K) and, per class k and column j, the histogram of class
    k's rows over column j's bins. Add/remove one row of class k changes its class count by 1 and one bin of each of
    class k's d histograms by 1: L2 sensitivity √(d+1). Gaussian noise z_M·√(d+1) per coordinate.

    Post-processing (free): class sizes by inverse-variance weighting of the count and the d histogram sums;
    class marginals: bins under hist_threshold·σ → 0, negatives → 0, optional shrinkage toward the pooled
    marginal, normalised (uniform if nothing is left).
    """
    K, d = len(table.classes), table.d
    exact = [np.bincount(table.y, minlength=K).astype(np.float64)]
    for j, b in enumerate(bins):
        idx = b.index(table.x[:, j])
        h = np.zeros((K, b.n))
        np.add.at(h, (table.y, idx), 1.0)
        exact.append(h.ravel())
    sensitivity = math.sqrt(d + 1)
    noisy = budget.gaussian("marginals", np.concatenate(exact), sensitivity,
                            "class counts and class-conditional 1-way marginals")
    sigma = budget.z("marginals") * sensitivity
    counts = noisy[:K]
    at = K
    hists = []
    for b in bins:
        hists.append(noisy[at: at + K * b.n].reshape(K, b.n))
        at += K * b.n
    # class sizes: inverse-variance weighted (count variance σ², a histogram sum B_j·σ²)
    weights = np.array([1.0] + [1.0 / b.n for b in bins])
    estimates = np.stack([counts] + [h.sum(1) for h in hists])  # (1+d, K)
    n_hat = np.maximum((weights[:, None] * estimates).sum(0) / weights.sum(), 1.0)
    probs = []
    for h in hists:
        if settings.js > 0:
            probs.append(js_marginal(h, n_hat, sigma, settings.js))
            continue
        h = np.where(h >= settings.hist_threshold * sigma, h, 0.0) if settings.hist_threshold > 0 else h
        h = np.maximum(h, 0.0)
        if settings.shrink > 0:
            pooled = h.sum(0)
            pooled = pooled / pooled.sum() if pooled.sum() > 0 else np.full(h.shape[1], 1.0 / h.shape[1])
            h = h + settings.shrink * pooled[None, :]
        total = h.sum(1, keepdims=True)
        probs.append(np.where(total > 0, h / np.where(total > 0, total, 1.0), 1.0 / h.shape[1]))
    return Model(bins, probs, n_hat)


def js_marginal(h: np.ndarray, n_hat: np.ndarray, sigma: float, factor: float) -> np.ndarray:
    """Post-processing of one column's noisy class histograms h (K, B): the pooled marginal p (all classes), and per
    class its deviation D_k = h_k / n̂_k − p kept in proportion max(0, 1 − factor · B·σ²/n̂_k² / ‖D_k‖²) — the
    expected energy of the noise in D_k over the observed energy (James-Stein). A column whose class difference is
    within the noise gets (nearly) the pooled marginal in every class, so noise invents no label signal."""
    pooled = np.maximum(h.sum(0), 0.0)
    pooled = pooled / pooled.sum() if pooled.sum() > 0 else np.full(h.shape[1], 1.0 / h.shape[1])
    out = np.empty_like(h)
    for k in range(h.shape[0]):
        dev = h[k] / n_hat[k] - pooled
        energy = float((dev ** 2).sum())
        noise = h.shape[1] * (sigma / n_hat[k]) ** 2
        keep = max(0.0, 1.0 - factor * noise / energy) if energy > 0 else 0.0
        q = np.maximum(pooled + keep * dev, 0.0)
        out[k] = q / q.sum() if q.sum() > 0 else pooled
    return out


def copula_order(model: Model, settings: Settings) -> list[np.ndarray]:
    """Bin order per column for the copula: numeric bins in value order; categories in schema order ('index') or by
    the released ratio of class 0 to the rest ('risk'), so a category's normal score follows its class signal.
    Post-processing of the released marginals only."""
    orders = []
    for b, p in zip(model.bins, model.probs):
        if b.column.kind == "numeric" or settings.order == "index" or p.shape[0] < 2:
            orders.append(np.arange(b.n))
        else:
            ratio = np.log(p[0] + 1e-3) - np.log(p[1:].mean(0) + 1e-3)
            orders.append(np.argsort(ratio, kind="stable"))
    return orders


def _cdf_tables(model: Model, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per column, for class k: (lower CDF of each bin, probability of each bin), bins in copula order."""
    out = []
    for p, order in zip(model.probs, model.order):
        q = p[k][order]
        lower_sorted = np.concatenate([[0.0], np.cumsum(q)[:-1]])
        lower = np.empty_like(lower_sorted)
        lower[order] = lower_sorted
        out.append((lower, p[k]))
    return out


def normal_scores(model: Model, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Rows → normal scores Φ⁻¹(u), u the row's position in its class's released marginal CDF (mid of a category's
    interval, the within-bin position for a numeric value). A function of released values and the row itself."""
    z = np.zeros(x.shape)
    for k in np.unique(y):
        rows = y == k
        for j, (lower, p) in enumerate(_cdf_tables(model, int(k))):
            b = model.bins[j].index(x[rows, j])
            pos = model.bins[j].position(x[rows, j]) if model.bins[j].column.kind == "numeric" else 0.5
            u = lower[b] + p[b] * pos
            z[rows, j] = ndtri(np.clip(u, 1e-4, 1 - 1e-4))
    return z


def nearest_correlation(r: np.ndarray, floor: float = 1e-3) -> np.ndarray:
    r = (r + r.T) / 2
    np.fill_diagonal(r, 1.0)
    w, v = np.linalg.eigh(r)
    r = (v * np.maximum(w, floor)) @ v.T
    s = np.sqrt(np.diag(r))
    return r / s[:, None] / s[None, :]


def release_copula(table: Table, model: Model, settings: Settings, budget: Budget) -> Model:
    """Design 2's second release. Statistic: per class k (or pooled over classes), Σ over class-k rows of z_i·z_j for
    i < j, z the row's normal-score vector scaled to L2 norm ≤ C = √(clip·d). One row changes one class's vector by
    (z_i z_j)_{i<j}, whose L2 norm is √(Σ_{i<j} z_i² z_j²) ≤ ‖z‖²/√2 ≤ C²/√2: the L2 sensitivity (add/remove).
    Gaussian noise z_C·C²/√2 per coordinate.

    Post-processing: divide by the released class sizes; shrink toward the identity by the ratio of the expected
    noise energy to the observed off-diagonal energy (public noise scale, released values); nearest correlation
    matrix (eigenvalues ≥ 1e-3, unit diagonal).
    """
    K, d = len(table.classes), table.d
    model.order = copula_order(model, settings)
    z = normal_scores(model, table.x, table.y)
    c2 = settings.clip * d
    norms2 = (z ** 2).sum(1)
    z = z * np.sqrt(np.minimum(1.0, c2 / np.maximum(norms2, 1e-12)))[:, None]
    iu = np.triu_indices(d, 1)
    groups = [np.zeros(len(table.y), bool) | True] if settings.copula == "pooled" else \
        [table.y == k for k in range(K)]
    exact = np.concatenate([(z[g][:, iu[0]] * z[g][:, iu[1]]).sum(0) for g in groups])
    sensitivity = c2 / math.sqrt(2.0)
    noisy = budget.gaussian("copula", exact, sensitivity,
                            "within-class products of clipped normal scores (copula)")
    sigma = budget.z("copula") * sensitivity
    m = len(iu[0])
    corr = []
    for g_index in range(len(groups)):
        n = model.n_hat.sum() if settings.copula == "pooled" else model.n_hat[g_index]
        r_off = noisy[g_index * m: (g_index + 1) * m] / max(n, 1.0)
        noise_energy = m * (sigma / max(n, 1.0)) ** 2
        signal = float((r_off ** 2).sum())
        keep = max(0.0, 1.0 - noise_energy / signal) if signal > 0 else 0.0
        r = np.eye(d)
        r[iu] = np.clip(keep * r_off, -0.99, 0.99)
        r[(iu[1], iu[0])] = r[iu]
        corr.append(nearest_correlation(r))
    model.corr = corr * K if settings.copula == "pooled" else corr
    return model


def sample_model(model: Model, counts: Sequence[int], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Rows from the model: per class, a Gaussian copula (or independent columns), each column through its class's
    released marginal (numeric values placed inside the bin by the copula's uniform). Post-processing only."""
    d = len(model.bins)
    xs, ys = [], []
    if model.order is None:
        model.order = [np.arange(b.n) for b in model.bins]
    for k, n in enumerate(counts):
        if n <= 0:
            continue
        if model.corr is None:
            u = rng.random((n, d))
        else:
            chol = np.linalg.cholesky(model.corr[k])
            u = ndtr(rng.standard_normal((n, d)) @ chol.T)
        x = np.zeros((n, d))
        for j, (p, order) in enumerate(zip(model.probs, model.order)):
            q = p[k][order]
            cdf = np.cumsum(q)
            cdf[-1] = 1.0
            pos_sorted = np.clip(np.searchsorted(cdf, u[:, j], side="right"), 0, len(q) - 1)
            lower = np.concatenate([[0.0], cdf[:-1]])[pos_sorted]
            within = np.clip((u[:, j] - lower) / np.maximum(q[pos_sorted], 1e-12), 0.0, 1.0 - 1e-9)
            b = order[pos_sorted]
            if model.corr is None:
                within = rng.random(n)
            x[:, j] = model.bins[j].value(b, within)
        xs.append(x)
        ys.append(np.full(n, k))
    return np.concatenate(xs), np.concatenate(ys)


def delivered_counts(model: Model, settings: Settings) -> list[int]:
    K = len(model.n_hat)
    if settings.balance == "balanced":
        return [settings.rows // K] * K
    share = model.n_hat / model.n_hat.sum()
    counts = np.floor(share * settings.rows).astype(int)
    counts[np.argmax(share)] += settings.rows - counts.sum()
    return [max(int(c), 20) for c in counts]


# ============================================================================================== designs
def start_parts(settings: Settings, scale: float = 1.0) -> dict[str, Part]:
    """The one-shot start's releases with their shares (scaled by ``scale`` when a loop takes the rest)."""
    parts: dict[str, Part] = {}
    rest = 1.0
    if settings.binning == "dpq":
        parts["bin_placement"] = Part("gaussian", settings.q_share * scale)
        rest -= settings.q_share
    if settings.copula != "none":
        parts["copula"] = Part("gaussian", settings.copula_share * scale)
        rest -= settings.copula_share
    parts["marginals"] = Part("gaussian", rest * scale)
    return parts


def one_shot_model(table: Table, settings: Settings, budget: Budget) -> Model:
    bins = make_bins(table, settings, budget)
    model = release_marginals(table, bins, settings, budget)
    if settings.copula != "none":
        model = release_copula(table, model, settings, budget)
    return model


def design_one_shot(table: Table, epsilon: float, settings: Settings, rng: np.random.Generator):
    budget = Budget(epsilon, start_parts(settings), rng=rng)
    model = one_shot_model(table, settings, budget)
    x, y = sample_model(model, delivered_counts(model, settings), rng)
    return x, y, budget, {"n_hat": model.n_hat.tolist()}


# ---------------------------------------------------------------------------------------------- design 3: PE
def encode_for_distance(model: Model, x: np.ndarray) -> np.ndarray:
    """Rows → a vector: a numeric value as its position in the classes-pooled released CDF ([0, 1]), a category
    one-hot scaled by 1/√2 (a changed category = squared distance 1, as a numeric move across the whole range)."""
    parts = []
    for j, (b, p) in enumerate(zip(model.bins, model.probs)):
        pooled = (p * model.n_hat[:, None]).sum(0)
        pooled = pooled / pooled.sum()
        idx = b.index(x[:, j])
        if b.column.kind == "categorical":
            parts.append(np.eye(b.n)[idx] / math.sqrt(2.0))
        else:
            lower = np.concatenate([[0.0], np.cumsum(pooled)[:-1]])
            parts.append((lower[idx] + pooled[idx] * b.position(x[:, j]))[:, None])
    return np.hstack(parts)


def nearest(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Index in ``b`` of each row of ``a``'s nearest row (squared Euclidean)."""
    d2 = (a ** 2).sum(1)[:, None] - 2 * a @ b.T + (b ** 2).sum(1)[None, :]
    return d2.argmin(1)


def mutate_rows(model: Model, x: np.ndarray, k: int, columns: int, rng: np.random.Generator) -> np.ndarray:
    """Resample ``columns`` random columns of each row from class k's released marginal (post-processing)."""
    x = x.copy()
    d = x.shape[1]
    for i in range(len(x)):
        for j in rng.choice(d, size=min(columns, d), replace=False):
            b = rng.choice(model.bins[j].n, p=model.probs[j][k])
            x[i, j] = model.bins[j].value(np.array([b]), rng.random(1))[0]
    return x


def vary(model: Model, parents: np.ndarray, k: int, n: int, columns: int, settings: Settings,
         rng: np.random.Generator) -> np.ndarray:
    """Offspring of class k: a parent (or a column-wise crossover of two) with ``columns`` columns resampled."""
    pick = rng.integers(len(parents), size=n)
    kids = parents[pick].copy()
    cross = rng.random(n) < settings.crossover
    if cross.any():
        other = parents[rng.integers(len(parents), size=int(cross.sum()))]
        take = rng.random(other.shape) < 0.5
        kids[cross] = np.where(take, other, kids[cross])
    return mutate_rows(model, kids, k, columns, rng) if columns > 0 else kids


def design_pe(table: Table, epsilon: float, settings: Settings, rng: np.random.Generator):
    """Design 3. Each generation's release — statistic: the histogram of votes over all current candidates (every
    class's candidates side by side); each private row of class k votes 1 for its nearest class-k candidate. Add/
    remove one row changes one bin by 1: L2 sensitivity 1. Gaussian noise z_V per bin. Candidates and the encoding
    are post-processing of earlier releases, so the histogram's sensitivity holds whatever they are."""
    T = settings.generations
    parts = start_parts(settings, settings.start_share)
    parts["votes"] = Part("gaussian", (1.0 - settings.start_share) / T, count=T)
    budget = Budget(epsilon, parts, rng=rng)
    model = one_shot_model(table, settings, budget)
    K, d = len(table.classes), table.d
    sizes = [int(np.clip(round(settings.population * n), 10, 1000)) for n in model.n_hat]
    population = []
    for k in range(K):
        counts = [0] * K
        counts[k] = sizes[k]
        population.append(sample_model(model, counts, rng)[0])
    private_codes = encode_for_distance(model, table.x)
    sigma = budget.z("votes")
    history = []
    weights = [np.ones(len(p)) for p in population]
    for t in range(T):
        codes = [encode_for_distance(model, p) for p in population]
        offsets = np.cumsum([0] + [len(p) for p in population])
        votes = np.zeros(offsets[-1])
        for k in range(K):
            rows = table.y == k
            if rows.any():
                np.add.at(votes, offsets[k] + nearest(private_codes[rows], codes[k]), 1.0)
        noisy = budget.gaussian("votes", votes, 1.0, f"nearest-candidate votes, generation {t}")
        history.append({"generation": t, "noisy_votes_sum": float(noisy.sum())})
        columns = max(1, round(settings.mutate_columns * d * (1 - t / T))) if t < T - 1 else 0
        for k in range(K):
            w = noisy[offsets[k]: offsets[k + 1]]
            w = np.where(w > settings.vote_threshold * sigma, w, 0.0)
            w = np.maximum(w, 0.0)
            if w.sum() <= 0:
                w = np.ones_like(w)
            weights[k] = w
            if t < T - 1:
                keep = population[k][rng.choice(len(w), size=len(w), p=w / w.sum())]
                population[k] = vary(model, keep, k, sizes[k], columns, settings, rng)
    counts = delivered_counts(model, settings)
    xs, ys = [], []
    for k in range(K):
        w = weights[k] / weights[k].sum()
        parents = population[k][rng.choice(len(w), size=counts[k], p=w)]
        xs.append(mutate_rows(model, parents, k, 1, rng))  # one column resampled: no row delivered twice
        ys.append(np.full(counts[k], k))
    return np.concatenate(xs), np.concatenate(ys), budget, {"n_hat": model.n_hat.tolist(), "sizes": sizes,
                                                            "history": history}


# ---------------------------------------------------------------------------------------------- design 4: fitness
def one_hot_matrix(x: np.ndarray, schema: TableSchema) -> np.ndarray:
    parts = []
    for j, c in enumerate(schema.columns):
        if c.kind == "categorical":
            parts.append(np.eye(len(c.categories))[np.clip(np.rint(x[:, j]), 0, len(c.categories) - 1).astype(int)])
        else:
            span = c.high - c.low if c.high > c.low else 1.0
            parts.append(((x[:, j] - c.low) / span)[:, None])
    return np.hstack(parts)


def fit_scorer(x: np.ndarray, y: np.ndarray, schema: TableSchema) -> Callable[[np.ndarray], np.ndarray]:
    """A logistic regression fitted on synthetic rows (one-hot, numerics standardised by the synthetic rows):
    returns rows → class probabilities. Trained on released/post-processed rows only."""
    from sklearn.linear_model import LogisticRegression

    a = one_hot_matrix(x, schema)
    mean, sd = a.mean(0), a.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    model = LogisticRegression(C=1.0, max_iter=500).fit((a - mean) / sd, y)

    def probabilities(rows: np.ndarray) -> np.ndarray:
        out = np.full((len(rows), int(y.max()) + 1 if len(y) else 1), 1e-12)
        out[:, model.classes_] = model.predict_proba((one_hot_matrix(rows, schema) - mean) / sd)
        return out

    return probabilities


def loglik_utility(probabilities: np.ndarray, y: np.ndarray, c: float) -> float:
    """Σ over private rows of max(log p(y_i | x_i), −c): each term in [−c, 0], so adding a row lowers every
    candidate's utility by 0 to c and removing one raises it by 0 to c — monotone, Δu = c."""
    return float(np.maximum(np.log(np.maximum(probabilities[np.arange(len(y)), y], 1e-300)), -c).sum())


def mutate_model(model: Model, scale: float, rng: np.random.Generator) -> Model:
    """A candidate: the marginals' log-probabilities jittered (N(0, scale²) per bin, renormalised), the correlation
    entries jittered by scale/4. Post-processing of released parameters."""
    m = model.copy()
    for j, p in enumerate(m.probs):
        logp = np.log(np.maximum(p, 1e-4)) + rng.normal(0, scale, p.shape)
        q = np.exp(logp)
        m.probs[j] = q / q.sum(1, keepdims=True)
    if m.corr is not None:
        out = []
        for r in m.corr:
            noise = rng.normal(0, scale / 4, r.shape)
            out.append(nearest_correlation(r + (noise + noise.T) / 2))
        m.corr = out
    return m


def design_fitness(table: Table, epsilon: float, settings: Settings, rng: np.random.Generator):
    """Design 4. Each generation's release — an exponential-mechanism selection among ``candidates`` models built
    from earlier releases only (data-independent given them); utility: the clipped log-likelihood of the private
    labels under a logistic regression fitted on the candidate's rows (Δu = c, monotone, add/remove)."""
    T, M = settings.generations, settings.candidates
    parts = start_parts(settings, settings.start_share)
    parts["select"] = Part("exponential", (1.0 - settings.start_share) / T, count=T)
    budget = Budget(epsilon, parts, rng=rng)
    model = one_shot_model(table, settings, budget)
    K = len(table.classes)
    # mutation scale: the release's relative noise on a typical bin (public σ over released sizes)
    sigma = budget.z("marginals") * math.sqrt(table.d + 1)
    typical = float(np.mean([model.n_hat.min() / b.n for b in model.bins]))
    scale0 = settings.mutation * min(1.0, sigma / max(typical, 1.0))
    winner = model
    history = []
    per = [settings.fitness_rows // K] * K
    for t in range(T):
        scale = scale0 * (1 - t / T)
        candidates = [winner] + [mutate_model(winner, scale, rng) for _ in range(M - 1)]
        utilities = []
        for cand in candidates:
            x, y = sample_model(cand, per, rng)
            utilities.append(loglik_utility(fit_scorer(x, y, table.schema)(table.x), table.y, settings.loglik_clip))
        chosen = budget.select("select", np.array(utilities), settings.loglik_clip, monotone=True,
                               description=f"fitness selection, generation {t}")
        history.append({"generation": t, "chosen": chosen, "scale": scale})
        winner = candidates[chosen]
    x, y = sample_model(winner, delivered_counts(winner, settings), rng)
    return x, y, budget, {"n_hat": model.n_hat.tolist(), "history": history}


def design_pe_fitness(table: Table, epsilon: float, settings: Settings, rng: np.random.Generator):
    """Design 5: candidate ROW SETS (each class's rows varied as PE varies them) selected by design 4's exponential
    mechanism on the clipped log-likelihood (Δu = c, monotone)."""
    T, M = settings.generations, settings.candidates
    parts = start_parts(settings, settings.start_share)
    parts["select"] = Part("exponential", (1.0 - settings.start_share) / T, count=T)
    budget = Budget(epsilon, parts, rng=rng)
    model = one_shot_model(table, settings, budget)
    K, d = len(table.classes), table.d
    per = [settings.fitness_rows // K] * K
    x, y = sample_model(model, per, rng)
    history = []
    for t in range(T):
        columns = max(1, round(settings.mutate_columns * d * (1 - t / T)))
        candidates = [(x, y)]
        for _ in range(M - 1):
            xs = [vary(model, x[y == k], k, per[k], columns, settings, rng) for k in range(K)]
            candidates.append((np.concatenate(xs), np.concatenate([np.full(per[k], k) for k in range(K)])))
        utilities = [loglik_utility(fit_scorer(cx, cy, table.schema)(table.x), table.y, settings.loglik_clip)
                     for cx, cy in candidates]
        chosen = budget.select("select", np.array(utilities), settings.loglik_clip, monotone=True,
                               description=f"row-set selection, generation {t}")
        history.append({"generation": t, "chosen": chosen})
        x, y = candidates[chosen]
    counts = delivered_counts(model, settings)
    xs, ys = [], []
    for k in range(K):
        parents = x[y == k][rng.integers(int((y == k).sum()), size=counts[k])]
        xs.append(mutate_rows(model, parents, k, 1, rng))
        ys.append(np.full(counts[k], k))
    return np.concatenate(xs), np.concatenate(ys), budget, {"n_hat": model.n_hat.tolist(), "history": history}


# ---------------------------------------------------------------------------------------------- design 6: DP labels
def lr_features(model: Model, x: np.ndarray) -> np.ndarray:
    """φ(x): 1, each numeric value's position in the classes-pooled released CDF minus ½ (in [−½, ½]), each category
    but the first one-hot (reference coding). ‖φ‖² ≤ 1 + d_cat + d_num/4, from the schema alone. A function of
    released values only."""
    parts = [np.ones((len(x), 1))]
    for j, (b, p) in enumerate(zip(model.bins, model.probs)):
        idx = b.index(x[:, j])
        if b.column.kind == "categorical":
            parts.append(np.eye(b.n)[idx][:, 1:])
        else:
            pooled = np.maximum((p * model.n_hat[:, None]).sum(0), 0)
            pooled = pooled / pooled.sum()
            lower = np.concatenate([[0.0], np.cumsum(pooled)[:-1]])
            parts.append((lower[idx] + pooled[idx] * b.position(x[:, j]) - 0.5)[:, None])
    return np.hstack(parts)


def lr_feature_bound(schema: TableSchema) -> float:
    cat = sum(c.kind == "categorical" for c in schema.columns)
    return math.sqrt(1 + cat + (len(schema.columns) - cat) / 4)


def sigmoid(a: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(a, -30, 30)))


def design_lr_label(table: Table, epsilon: float, settings: Settings, rng: np.random.Generator):
    """Design 6 (one-shot generative model + DP discriminative labels). The start model (design 1 or 2) draws x; a
    logistic regression θ, started at the one fitted on the start model's own rows (post-processing), takes
    ``newton_steps`` Newton steps whose gradients come from the private rows and whose Hessian comes from the start
    model's rows (post-processing); every delivered row's label is drawn from p_θ(y | x).

    Each step's release — statistic: Σ_i (σ(θ·φ_i) − y_i)·φ_i over the private rows (binary: y_i = 1 for the second
    declared class). |σ − y| ≤ 1 and ‖φ‖ ≤ X (schema only), so adding or removing a row moves the sum by at most X:
    L2 sensitivity X (add/remove); no clipping needed. Gaussian noise z_G·X per coordinate, T steps composed.
    """
    if len(table.classes) != 2:
        raise ValueError("the lab's DP labeller is binary")
    T = settings.newton_steps
    parts = start_parts(settings, 1.0 - settings.lr_share)
    parts["gradient"] = Part("gaussian", settings.lr_share / T, count=T)
    budget = Budget(epsilon, parts, rng=rng)
    model = one_shot_model(table, settings, budget)
    n = float(model.n_hat.sum())
    share = model.n_hat / n
    # the start's own rows (prior-balanced): θ0 and the Hessian (post-processing)
    xs, ys = sample_model(model, [int(round(4000 * s)) for s in share], rng)
    phi_s = lr_features(model, xs)
    lam = settings.ridge * n
    theta = np.zeros(phi_s.shape[1])
    for _ in range(25):  # θ0: ridge logistic regression on the start's rows, weights scaled to n̂ rows
        p = sigmoid(phi_s @ theta)
        w = n / len(ys)
        grad = w * phi_s.T @ (p - ys) + lam * theta
        hess = w * (phi_s * (p * (1 - p))[:, None]).T @ phi_s + lam * np.eye(len(theta))
        theta -= np.linalg.solve(hess, grad)
    bound = lr_feature_bound(table.schema)
    phi_private = lr_features(model, table.x)
    history = []
    # penalty: ridge toward 0 (λ) plus, with ``anchor``, toward θ0 in proportion to the gradient noise (public σ)
    theta0 = theta.copy()
    pull = settings.anchor * budget.z("gradient") * bound
    # preconditioner: the logistic loss's curvature bound ¼·Σ φφᵀ, over the start's rows scaled to n̂ (post-processing)
    majorizer = (n / len(ys)) * 0.25 * phi_s.T @ phi_s + (lam + pull) * np.eye(len(theta))
    for t in range(T):
        exact = phi_private.T @ (sigmoid(phi_private @ theta) - table.y)
        noisy = budget.gaussian("gradient", exact, bound, f"logistic gradient at step {t}")
        penalty = lam * theta + pull * (theta - theta0)
        theta = theta - settings.step * np.linalg.solve(majorizer, noisy + penalty)
        history.append({"step": t, "theta_norm": float(np.linalg.norm(theta)),
                        "moved": float(np.linalg.norm(theta - theta0))})
    # delivered rows: x from the start model (balanced mixture), labels drawn from p_θ
    K = 2
    pool = settings.relabel_pool * settings.rows
    x, _ = sample_model(model, [pool // K] * K, rng)
    y = (rng.random(len(x)) < sigmoid(lr_features(model, x) @ theta)).astype(np.int64)
    if settings.balance == "balanced":
        keep = np.concatenate([rng.permutation(np.flatnonzero(y == k))[: settings.rows // K] for k in range(K)])
    else:
        keep = rng.permutation(len(y))[: settings.rows]
    return x[keep], y[keep], budget, {"n_hat": model.n_hat.tolist(), "history": history}


DESIGNS: dict[str, Callable] = {"lr-label": design_lr_label, "marginals": design_one_shot, "copula": design_one_shot,
                                "pe": design_pe,
                                "fitness": design_fitness, "pe-fitness": design_pe_fitness}


# ============================================================================================== running and judging
#: The settings chosen on lending and credit (tuning seeds 100-104, docs/poolfree-lab.md §3), by design and by ε
#: regime: 'low' for ε < 4, 'high' otherwise (ε is public; the regimes were tuned at ε = 1 and ε = 8 only).
START = {"low": {"bins": 8, "binning": "width", "js": 0.0},
         "high": {"bins": 8, "binning": "dpq", "js": 1.0, "q_share": 0.15, "fine_cells": 64}}
TUNED: dict[str, dict[str, dict[str, Any]]] = {
    "marginals": {"low": {}, "high": {}},
    "copula": {"low": {"copula": "pooled", "copula_share": 0.1}, "high": {"copula": "pooled", "copula_share": 0.2}},
    "pe": {"low": {"start_share": 0.8, "generations": 3}, "high": {"start_share": 0.8, "generations": 3}},
    "fitness": {"low": {"start_share": 0.95, "generations": 3}, "high": {"start_share": 0.95, "generations": 3}},
    "pe-fitness": {"low": {"start_share": 0.8, "generations": 3}, "high": {"start_share": 0.8, "generations": 3}},
    "lr-label": {"low": {"newton_steps": 3, "lr_share": 0.25, "anchor": 2.0},
                 "high": {"newton_steps": 3, "lr_share": 0.25, "anchor": 2.0}},
}


def regime(epsilon: float) -> str:
    return "low" if epsilon < 4 else "high"


def design_settings(design: str, overrides: dict[str, Any], *, epsilon: float | None = None,
                    preset: str = "") -> Settings:
    base = Settings(copula="pooled" if design in ("copula",) else "none")
    if preset == "tuned":
        base = replace(base, **START[regime(epsilon)], **TUNED[design][regime(epsilon)])
    return replace(base, **overrides)


def clear_accountant_caches() -> None:
    """The accountant caches composed PLDs; cleared before each synthesis so its time includes the calibration a
    fresh process would do."""
    from pcevolve.privacy import accounting

    for value in vars(accounting).values():
        if hasattr(value, "cache_clear"):
            value.cache_clear()


def run_one(table: Table, design: str, epsilon: float, seed: int, settings: Settings, out: Path,
            judge_seed: int = 0) -> dict[str, Any]:
    from pcevolve.evaluation.table_judgement import judge_table_files

    rng = np.random.default_rng([seed, 2026])
    clear_accountant_caches()
    started = time.process_time()
    wall = time.perf_counter()
    x, y, budget, info = DESIGNS[design](table, epsilon, settings, rng)
    seconds = time.perf_counter() - wall
    cpu = time.process_time() - started
    spent = budget.spent()
    assert spent <= epsilon * (1 + 1e-9) or math.isinf(epsilon), (spent, epsilon)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "synthetic.csv"
    write_table_csv(csv_path, x, y, table.classes, table.schema, overwrite=True)
    judged = judge_table_files(csv_path, table.folder / "test.csv", table.schema,
                               private_csv=table.folder / "private.csv", seed=judge_seed)
    utility = {(u["line"], u["model"]): u["auc"] for u in judged["utility"]}
    secure = judged["secure"]["privacy"]
    row = {"table": table.name, "design": design, "epsilon": epsilon, "seed": seed,
           "gb_auc": utility[("synthetic", "gbdt")], "lr_auc": utility[("synthetic", "logistic")],
           "tvd": judged["fidelity"]["mean_tvd"], "attack_auc": secure["attack"]["auc"]["value"],
           "private_copies": secure["private_copies"], "seconds": seconds, "cpu_seconds": cpu,
           "spent_epsilon": spent, "rows": int(len(y)),
           "per_class": np.bincount(y, minlength=len(table.classes)).tolist(),
           "settings": settings.__dict__, "pcevolve_commit": PINNED, "budget": budget.summary(), "info": info}
    (out / "result.json").write_text(json.dumps(row, indent=1, default=float) + "\n")
    return row


def real_line(table: Table) -> dict[str, Any]:
    from pcevolve.evaluation.table_judgement import judge_table_files

    judged = judge_table_files(table.folder / "private.csv", table.folder / "test.csv", table.schema,
                               private_csv=table.folder / "private.csv", seed=0)
    utility = {(u["line"], u["model"]): u["auc"] for u in judged["utility"]}
    secure = judged["secure"]["privacy"]
    return {"table": table.name, "design": "real", "epsilon": None, "seed": 0,
            "gb_auc": utility[("synthetic", "gbdt")], "lr_auc": utility[("synthetic", "logistic")],
            "tvd": judged["fidelity"]["mean_tvd"], "attack_auc": secure["attack"]["auc"]["value"],
            "private_copies": secure["private_copies"], "seconds": 0.0}


def parse_overrides(items: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    fields = Settings.__dataclass_fields__
    for item in items:
        key, value = item.split("=", 1)
        if key not in fields:
            raise SystemExit(f"unknown setting {key!r}")
        kind = type(getattr(Settings(), key))
        out[key] = kind(value)
    return out


def results_path(tag: str) -> Path:
    return RESULTS / f"poolfree_lab-{tag}.json"


def command_run(args: argparse.Namespace) -> None:
    overrides = parse_overrides(args.set or [])
    path = results_path(args.tag)
    rows = json.loads(path.read_text()) if path.exists() else []
    done = {(r["table"], r["design"], r["epsilon"], r["seed"], r.get("variant", "")) for r in rows}
    for name in args.tables:
        table = load_table(name)
        if args.real and (name, "real", None, 0, "") not in done:
            rows.append(real_line(table))
            print(json.dumps({k: rows[-1][k] for k in ("table", "design", "gb_auc", "lr_auc", "tvd", "attack_auc")}))
        for design in args.designs:
            for epsilon in args.epsilons:
                settings = design_settings(design, overrides, epsilon=epsilon, preset=args.preset)
                for seed in args.seeds:
                    key = (name, design, epsilon, seed, args.variant)
                    if key in done and not args.fresh:
                        continue
                    variant = f"-{args.variant}" if args.variant else ""
                    out = RUNS / args.tag / f"{name}-{design}{variant}-eps{epsilon:g}-seed{seed}"
                    row = run_one(table, design, epsilon, seed, settings, out)
                    row["variant"] = args.variant
                    rows = [r for r in rows if (r["table"], r["design"], r["epsilon"], r["seed"],
                                                r.get("variant", "")) != key] + [row]
                    path.write_text(json.dumps(rows, indent=1, default=float) + "\n")
                    print(f"{name:8s} {design:10s} {args.variant:14s} eps {epsilon:g} seed {seed}: "
                          f"GB {row['gb_auc']:.3f} LR {row['lr_auc']:.3f} TVD {row['tvd']:.3f} "
                          f"attack {row['attack_auc']:.3f} copies {row['private_copies']} {row['seconds']:.1f}s",
                          flush=True)


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["table"], r["design"], r.get("variant", ""), r["epsilon"]), []).append(r)
    out = []
    for (table, design, variant, epsilon), rs in groups.items():
        entry = {"table": table, "design": design, "variant": variant, "epsilon": epsilon, "runs": len(rs)}
        for key in ("gb_auc", "lr_auc", "tvd", "attack_auc", "seconds"):
            values = np.array([r[key] for r in rs], dtype=float)
            entry[key] = (float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else 0.0)
        entry["private_copies"] = int(max(r["private_copies"] for r in rs))
        out.append(entry)
    return out


def command_table(args: argparse.Namespace) -> None:
    rows = []
    for tag in args.tags:
        for r in json.loads(results_path(tag).read_text()):
            r = dict(r)
            if args.prefix_tag:
                r["variant"] = f"{tag}:{r.get('variant', '')}"
            rows.append(r)
    summary = summarise(rows)
    order = {"real": 0, "marginals": 1, "copula": 2, "pe": 3, "fitness": 4, "pe-fitness": 5}
    summary.sort(key=lambda e: (e["table"], -1 if e["epsilon"] is None else e["epsilon"], order.get(e["design"], 9),
                                e["variant"]))
    print("| table | ε | design | variant | runs | GB AUC | LR AUC | mean TVD | attack AUC | copies | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for e in summary:
        def f(key, p=3, e=e):
            return f"{e[key][0]:.{p}f} ± {e[key][1]:.{p}f}" if e["runs"] > 1 else f"{e[key][0]:.{p}f}"
        eps = "∞" if e["epsilon"] is None else f"{e['epsilon']:g}"
        print(f"| {e['table']} | {eps} | {e['design']} | {e['variant']} | {e['runs']} | {f('gb_auc')} | "
              f"{f('lr_auc')} | "
              f"{f('tvd')} | {f('attack_auc')} | {e['private_copies']} | {f('seconds', 1)} |")


ONE_SHOT = ("marginals", "copula")
EVOLVED = ("pe", "fitness", "pe-fitness")


def command_compare(args: argparse.Namespace) -> None:
    """Per table and ε: the best evolved design against the best one-shot design (best = highest mean of GB and LR
    AUC), each judge's difference beside the two designs' run-to-run sd; 'beats' = the difference exceeds the larger
    of the two sds."""
    rows = [r for tag in args.tags for r in json.loads(results_path(tag).read_text())]
    summary = [e for e in summarise(rows) if e["design"] != "real"]
    print("| table | ε | best one-shot | best evolved | GB: one-shot / evolved / Δ | LR: one-shot / evolved / Δ | "
          "evolution beats one-shot by more than the spread on |")
    print("|---|---|---|---|---|---|---|")
    for table in sorted({e["table"] for e in summary}):
        for epsilon in sorted({e["epsilon"] for e in summary if e["table"] == table}):
            group = [e for e in summary if e["table"] == table and e["epsilon"] == epsilon]
            def score(e):
                return (e["gb_auc"][0] + e["lr_auc"][0]) / 2
            one = max((e for e in group if e["design"] in ONE_SHOT), key=score)
            evo = max((e for e in group if e["design"] in EVOLVED), key=score)
            cells, wins = [], []
            for key, name in (("gb_auc", "GB"), ("lr_auc", "LR")):
                diff = evo[key][0] - one[key][0]
                spread = max(evo[key][1], one[key][1])
                cells.append(f"{one[key][0]:.3f} ± {one[key][1]:.3f} / {evo[key][0]:.3f} ± {evo[key][1]:.3f} / "
                             f"{diff:+.3f}")
                if diff > spread:
                    wins.append(name)
            print(f"| {table} | {epsilon:g} | {one['design']} | {evo['design']} | {cells[0]} | {cells[1]} | "
                  f"{', '.join(wins) or 'neither'} |")


#: The smoke's designs, ε, seed and settings (module docstring).
SMOKE_DESIGNS = ("marginals", "copula", "pe", "fitness", "pe-fitness", "lr-label")
SMOKE_EPSILON, SMOKE_SEED = 8.0, 0
SMOKE_SETTINGS = {"rows": 200, "generations": 2, "candidates": 3, "fitness_rows": 100, "newton_steps": 2}


def command_smoke(args: argparse.Namespace) -> None:
    """``--smoke``: each of :data:`SMOKE_DESIGNS` run and judged as ``run`` does, on bench/smoke.py's made-up table."""
    import smoke

    smoke.results_folder(args)
    out: Path = args.out
    data = smoke.table(out, "poolfree_table")
    table = load_table(data.name, data.parent, classes=("fraud", "ok"))
    rows = [real_line(table)]
    for design in SMOKE_DESIGNS:
        settings = design_settings(design, SMOKE_SETTINGS, epsilon=SMOKE_EPSILON, preset="tuned")
        row = run_one(table, design, SMOKE_EPSILON, SMOKE_SEED, settings,
                      out / "poolfree_lab_runs" / f"smoke-{design}-eps{SMOKE_EPSILON:g}-seed{SMOKE_SEED}")
        rows.append(row | {"variant": "smoke"})
        print(f"smoke {design:10s} eps {SMOKE_EPSILON:g} seed {SMOKE_SEED}: GB {row['gb_auc']:.3f} "
              f"LR {row['lr_auc']:.3f} TVD {row['tvd']:.3f} spent ε {row['spent_epsilon']:.3f} "
              f"{row['seconds']:.1f}s", flush=True)
    path = out / "poolfree_lab.json"
    path.write_text(json.dumps({"smoke": True, "table": str(data), "pcevolve_commit": PINNED, "rows": rows,
                                "summary": summarise(rows)}, indent=1, default=float) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def main() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true",
                        help="run every design end to end on a made-up table in seconds (numbers mean nothing); "
                             "results go under --out, never bench/results/")
    parser.add_argument("--out", type=Path, default=None,
                        help="with --smoke: the results folder, also of the made-up table and the synthetic tables "
                             "(default a new temporary folder)")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run")
    run.add_argument("--designs", nargs="+", default=["marginals"], choices=list(DESIGNS))
    run.add_argument("--tables", nargs="+", default=["lending", "credit"])
    run.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 8.0])
    run.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    run.add_argument("--set", nargs="*", help="Settings overrides, key=value")
    run.add_argument("--variant", default="", help="a name for this setting (rows are keyed by it)")
    run.add_argument("--tag", default="main")
    run.add_argument("--preset", default="", choices=["", "tuned"],
                     help="'tuned': each design's settings chosen on lending and credit, by ε regime")
    run.add_argument("--real", action="store_true", help="also judge the private rows themselves")
    run.add_argument("--fresh", action="store_true")
    table = sub.add_parser("table")
    table.add_argument("--tags", nargs="+", default=["main"])
    table.add_argument("--prefix-tag", action="store_true")
    compare = sub.add_parser("compare")
    compare.add_argument("--tags", nargs="+", default=["final"])
    args = parser.parse_args()
    if args.smoke:
        if args.command is not None:
            parser.error("--smoke takes no command")
        command_smoke(args)
        return
    if args.command is None:
        parser.error("give a command (run, table, compare) or --smoke")
    if args.out is not None:
        parser.error("--out goes with --smoke (run writes under bench/results/)")
    {"run": command_run, "table": command_table, "compare": command_compare}[args.command](args)


if __name__ == "__main__":
    main()
