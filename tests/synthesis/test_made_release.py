"""A table's release without a public pool (pcevolve.synthesis): sensitivities checked on neighbouring tables,
charges before noise, the plan equal to what a run charges, and rows drawn only from released values.

The sensitivity claims are checked by brute force: every statistic is computed on a table and on each neighbour
(one row added, one removed, one replaced) and the L2 distance never passes the stated bound — and attains it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pcevolve.config.synthesis import SynthesisConfig
from pcevolve.data import LabeledDataset
from pcevolve.data.table_schema import Column, TableSchema
from pcevolve.privacy import BudgetExceeded, BudgetLedger
from pcevolve.privacy.accounting import account
from pcevolve.privacy.histograms import HistogramRelease, histogram_sensitivity
from pcevolve.privacy.noise import GeneratorNoise
from pcevolve.synthesis.bins import ColumnBins, quantile_bins, width_bins
from pcevolve.synthesis.labeller import feature_bound, features
from pcevolve.synthesis.marginals import MarginalModel
from pcevolve.synthesis.release import STAGE, part_noise_multipliers, planned_events, release_parts, release_table


SCHEMA = TableSchema((Column("amount", "numeric", 0.0, 1000.0, decimals=2),
                      Column("kind", "categorical", categories=("card", "cash", "wire")),
                      Column("count", "numeric", 0.0, 5.0, integer=True),
                      Column("rate", "numeric", -10.0, 30.0, decimals=1)), label_column="label")


def _table(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    rows = np.stack([rng.lognormal(5, 1, n).clip(0, 2000), rng.integers(0, 3, n), rng.integers(0, 7, n),
                     rng.normal(10, 8, n)], axis=1)  # out-of-bounds values on purpose: they are clipped by binning
    return rows, (rng.random(n) < 0.3).astype(np.int64)


def _cells(rows: np.ndarray, labels: np.ndarray, bins: list[ColumnBins]) -> np.ndarray:
    return np.stack([labels, *(labels * b.size + b.index(rows[:, j]) for j, b in enumerate(bins))], axis=1)


def test_a_histogram_release_moves_by_exactly_its_sensitivity_on_neighbouring_tables():
    rng = np.random.default_rng(0)
    rows, labels = _table(rng, 40)
    bins = [width_bins(column, 8) for column in SCHEMA.columns]
    release = HistogramRelease((2, *(2 * b.size for b in bins)), 1.0)
    base = release.exact(_cells(rows, labels, bins))
    bound = histogram_sensitivity(len(SCHEMA.columns) + 1, "add_remove")
    assert bound == pytest.approx(math.sqrt(5))
    for i in range(len(rows)):
        removed = release.exact(_cells(np.delete(rows, i, 0), np.delete(labels, i), bins))
        assert np.linalg.norm(base - removed) == pytest.approx(bound)  # every row attains the bound
    extra_rows, extra_labels = _table(rng, 20)
    for row, label in zip(extra_rows, extra_labels):
        added = release.exact(_cells(np.vstack([rows, row]), np.r_[labels, label], bins))
        assert np.linalg.norm(added - base) == pytest.approx(bound)
        replaced = release.exact(_cells(np.vstack([rows[1:], row]), np.r_[labels[1:], label], bins))
        assert np.linalg.norm(replaced - base) <= histogram_sensitivity(5, "replace_one") + 1e-12


def test_the_labellers_gradient_moves_by_at_most_its_feature_bound():
    rng = np.random.default_rng(1)
    rows, labels = _table(rng, 60)
    bins = [width_bins(column, 8) for column in SCHEMA.columns]
    model = MarginalModel(tuple(bins), tuple(np.full((2, b.size), 1 / b.size) for b in bins), np.array([30.0, 30.0]))
    theta = rng.normal(size=features(model, rows[:1]).shape[1])

    def gradient(x, y):
        phi = features(model, x)
        return phi.T @ (1 / (1 + np.exp(-phi @ theta)) - y)

    base, bound = gradient(rows, labels), feature_bound(SCHEMA)
    assert np.linalg.norm(features(model, rows), axis=1).max() <= bound + 1e-12
    extra_rows, extra_labels = _table(rng, 50)
    for row, label in zip(extra_rows, extra_labels):
        assert np.linalg.norm(gradient(np.vstack([rows, row]), np.r_[labels, label]) - base) <= bound + 1e-12


def test_every_part_is_charged_before_its_noise_and_a_refusal_draws_nothing(monkeypatch):
    class Counting(GeneratorNoise):
        draws = 0

        def normal(self, scale, size):
            Counting.draws += 1
            return super().normal(scale, size)

    rng = np.random.default_rng(2)
    rows, labels = _table(rng, 50)
    private = LabeledDataset(rows, labels, ("ok", "fraud"), "tabular", tuple(f"r{i}" for i in range(50)),
                             feature_names=SCHEMA.names)
    settings = SynthesisConfig(binning="quantiles", labels="logistic")
    ledger = BudgetLedger(8.0, 1e-5, {STAGE: 8.0}, reproducible_noise=True)
    noise = Counting(np.random.default_rng(3))
    table, summary = release_table(private, SCHEMA, settings, epsilon=8.0, ledger=ledger, noise=noise,
                                   rng=np.random.default_rng(4))
    # Each part's events as planned, in order: placement, marginals, 3 gradient steps; the stage is spent to its cap.
    parts = release_parts(SCHEMA, settings, 8.0, 2)
    planned = [event for _, event in planned_events(parts, part_noise_multipliers(
        BudgetLedger(8.0, 1e-5, {STAGE: 8.0}, reproducible_noise=True), parts))]
    charged = ledger.events(STAGE)
    assert [e.kind for e in charged] == ["gaussian_release"] * 5 and Counting.draws == 5
    assert account(charged, delta=1e-5).epsilon == pytest.approx(account(planned, delta=1e-5).epsilon, rel=1e-9)
    assert 0.99 * 8.0 <= ledger.spent() <= 8.0 and table.theta is not None and summary["labels"] == "logistic"
    # A part that the ledger cannot afford (here: noise calibrated for ε 8 charged to a ledger of ε 1) is refused
    # before anything is drawn.
    Counting.draws = 0
    poor = BudgetLedger(1.0, 1e-5, {STAGE: 1.0}, reproducible_noise=True)
    monkeypatch.setattr("pcevolve.synthesis.release.part_noise_multipliers",
                        lambda ledger, parts: part_noise_multipliers(BudgetLedger(8.0, 1e-5, {STAGE: 8.0}), parts))
    with pytest.raises(BudgetExceeded):
        release_table(private, SCHEMA, settings, epsilon=8.0, ledger=poor, noise=noise, rng=np.random.default_rng(4))
    assert Counting.draws == 0 and poor.spent() == 0


def test_released_rows_keep_the_schema_and_the_model_round_trips(tmp_path):
    rng = np.random.default_rng(5)
    rows, labels = _table(rng, 80)
    private = LabeledDataset(rows, labels, ("ok", "fraud"), "tabular", tuple(f"r{i}" for i in range(80)),
                             feature_names=SCHEMA.names)
    for labels_mode, binning in (("marginals", "width"), ("logistic", "quantiles")):
        ledger = BudgetLedger(4.0, 1e-5, {STAGE: 4.0}, reproducible_noise=True)
        table, _ = release_table(private, SCHEMA, SynthesisConfig(labels=labels_mode, binning=binning), epsilon=4.0,
                                 ledger=ledger, noise=GeneratorNoise(np.random.default_rng(6)),
                                 rng=np.random.default_rng(7))
        drawn, drawn_labels = table.sample([300, 300], np.random.default_rng(8))
        assert drawn.shape[1] == 4 and set(drawn_labels.tolist()) <= {0, 1}
        for j, column in enumerate(SCHEMA.columns):
            if column.kind == "numeric":
                assert column.low <= drawn[:, j].min() and drawn[:, j].max() <= column.high
            if column.kind == "categorical" or column.integer:
                assert np.array_equal(drawn[:, j], np.round(drawn[:, j]))
        table.save(tmp_path / f"{labels_mode}.npz", counts=np.array([1.0, 2.0]))
        again = type(table).load(tmp_path / f"{labels_mode}.npz", SCHEMA)
        assert np.array_equal(again.sample([50, 50], np.random.default_rng(9))[0],
                              table.sample([50, 50], np.random.default_rng(9))[0])


def test_bins_follow_the_schema_and_released_quantiles_only():
    count = SCHEMA.columns[2]
    assert width_bins(count, 8).size == 6 and list(width_bins(count, 8).edges) == [0, 1, 2, 3, 4, 5, 6]
    assert width_bins(SCHEMA.columns[1], 8).size == 3 and width_bins(SCHEMA.columns[1], 8).edges is None
    fine = np.linspace(0.0, 1000.0, 65)
    weights = np.zeros(64)
    weights[:8] = 10.0  # all the released mass in the lowest eighth
    placed = quantile_bins(SCHEMA.columns[0], fine, weights, 4)
    assert placed.edges[0] == 0.0 and placed.edges[-1] == 1000.0 and placed.edges[-2] <= 125.0
    values = placed.value(np.zeros(1000, np.int64), np.random.default_rng(0).random(1000))
    assert values.max() <= placed.edges[1] and np.all(values >= 0.0)


def test_the_verdicts_utilities_move_together_by_at_most_the_clip():
    """The evolution's utility Σ max(log p(y|x), −c): adding a row lowers every candidate's by 0 to c (monotone,
    Δu = c), so the exponential mechanism may use probabilities ∝ exp(ε·u/c)."""
    from pcevolve.synthesis.evolve import clipped_log_likelihood, fitted_classifier, mutated

    rng = np.random.default_rng(11)
    rows, labels = _table(rng, 50)
    bins = [width_bins(column, 8) for column in SCHEMA.columns]
    model = MarginalModel(tuple(bins), tuple(rng.dirichlet(np.ones(b.size), size=2) for b in bins),
                          np.array([25.0, 25.0]))
    candidates = [model, *(mutated(model, 0.5, rng) for _ in range(4))]
    classifiers = [fitted_classifier(*c.sample([100, 100], rng), SCHEMA, 2) for c in candidates]

    def utilities(x, y):
        return np.array([clipped_log_likelihood(classify(x), y, 3.0) for classify in classifiers])

    base = utilities(rows, labels)
    extra_rows, extra_labels = _table(rng, 30)
    for row, label in zip(extra_rows, extra_labels):
        change = utilities(np.vstack([rows, row]), np.r_[labels, label]) - base
        assert np.all(change <= 1e-12) and np.all(change >= -3.0 - 1e-12)
