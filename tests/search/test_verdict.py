"""The private verdict: its guarantee checked exactly between neighbouring datasets, its charges, what it finds."""

import itertools
import math

import numpy as np
import pytest

from pcevolve.privacy import BudgetExceeded, BudgetLedger, ExponentialSelection, GeneratorNoise
from pcevolve.privacy.mechanisms import ExponentialMechanism
from pcevolve.search.pool_labels import PoolLabels, softmax
from pcevolve.search.territory import cut_territories
from pcevolve.search.verdict import (
    STAGE,
    VerdictSettings,
    VerdictState,
    candidate_offsets,
    correct_counts,
    run_verdict,
    shifted_labels,
)

DELTA = 1e-5


def _pool(seed=0, per_class=60, bias=1.5):
    """Two classes of 2-d points; the pool labels lean towards class 0 by ``bias`` in the log posterior."""
    rng = np.random.default_rng(seed)
    centres = np.array([[-1.0, 0.0], [1.0, 0.0]])
    truth = np.repeat([0, 1], per_class)
    pool = centres[truth] + rng.normal(0, 0.9, (len(truth), 2))
    scores = -0.5 * ((pool[:, None, :] - centres[None]) ** 2).sum(-1) / 0.81
    scores[:, 0] += bias
    posterior = softmax(scores)
    labels = PoolLabels(posterior, posterior.max(axis=1), "class-model")
    return pool, truth, labels, centres


def _candidates(pool, labels, sizes, parent=np.zeros(2), step=0.5):
    return [cut_territories(pool, shifted_labels(labels, row), sizes) for row in candidate_offsets(parent, step)]


def test_candidates_are_the_parent_and_one_move_per_class_and_sign():
    rows = candidate_offsets(np.array([0.2, -0.2, 0.0]), 0.3)
    assert rows.shape == (7, 3)
    np.testing.assert_allclose(rows[0], [0.2, -0.2, 0.0])
    np.testing.assert_allclose(rows.sum(axis=1), 0.0, atol=1e-12)
    assert len({tuple(np.round(r, 9)) for r in rows}) == 7


def test_offsets_move_the_labels_and_keep_the_inside_factor():
    posterior = np.array([[0.6, 0.4], [0.45, 0.55]])
    labels = PoolLabels(posterior, posterior.max(axis=1) * np.array([0.5, 1.0]), "pixel-cnn")
    assert shifted_labels(labels, np.zeros(2)) is labels
    moved = shifted_labels(labels, np.array([-0.5, 0.5]))
    np.testing.assert_array_equal(moved.predicted, [1, 1])
    np.testing.assert_allclose(moved.confidence, moved.posterior.max(axis=1) * np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="offsets"):
        shifted_labels(labels, np.zeros(3))


def test_counts_move_together_by_at_most_one_when_a_record_is_added_or_removed():
    pool, _, labels, _ = _pool()
    territories = _candidates(pool, labels, np.array([40, 40]))
    rng = np.random.default_rng(1)
    private = rng.normal(0, 1.2, (12, 2))
    private_labels = rng.integers(0, 2, 12)
    base = correct_counts(pool, territories, private, private_labels)
    for i in range(len(private)):
        removed = correct_counts(pool, territories, np.delete(private, i, 0), np.delete(private_labels, i))
        change = base - removed
        assert set(np.unique(change)) <= {0.0, 1.0}  # every count falls by 0 or 1: monotone, sensitivity 1


def _probabilities(epsilon, pool, territories, private, labels):
    mechanism = ExponentialMechanism(epsilon, monotone=True)
    return mechanism.probabilities(correct_counts(pool, territories, private, labels))


@pytest.mark.parametrize("epsilon", [0.3, 2.0])
def test_every_selection_changes_probability_by_at_most_e_to_the_epsilon_between_neighbours(epsilon):
    """Exact check: for a small private set, every neighbour (each record removed; each record of a grid added, both
    labels), every candidate's probability moves by a factor within e^±ε."""
    pool, _, labels, _ = _pool(per_class=30)
    territories = _candidates(pool, labels, np.array([20, 20]))
    rng = np.random.default_rng(2)
    private = rng.normal(0, 1.0, (6, 2))
    private_labels = np.array([0, 1, 0, 1, 1, 0])
    p = _probabilities(epsilon, pool, territories, private, private_labels)
    neighbours = [(np.delete(private, i, 0), np.delete(private_labels, i)) for i in range(len(private))]
    for x, y, label in itertools.product(np.linspace(-3, 3, 7), np.linspace(-2, 2, 3), (0, 1)):
        neighbours.append((np.vstack([private, [x, y]]), np.append(private_labels, label)))
    worst = 0.0
    for data, data_labels in neighbours:
        q = _probabilities(epsilon, pool, territories, data, data_labels)
        worst = max(worst, float(np.max(np.abs(np.log(p) - np.log(q)))))
    assert worst <= epsilon + 1e-9
    assert worst > 0.3 * epsilon  # the check has something to bite on: the neighbours do move the choice


def test_a_monotone_selection_is_twice_as_sharp_and_refused_under_replace_one():
    utilities = np.array([3.0, 5.0, 4.0])
    sharp = ExponentialMechanism(0.5, monotone=True).probabilities(utilities)
    np.testing.assert_allclose(sharp, softmax((0.5 * utilities)[None])[0])
    plain = ExponentialMechanism(0.5).probabilities(utilities)
    np.testing.assert_allclose(plain, softmax((0.25 * utilities)[None])[0])
    with pytest.raises(ValueError, match="add/remove"):
        ExponentialMechanism(0.5, monotone=True, neighbouring="replace_one")


def _ledger(cap):
    return BudgetLedger(8.0, DELTA, {"release": 8.0 - cap, STAGE: cap}, reproducible_noise=True)


def test_the_verdict_corrects_a_biased_labelling_and_charges_one_selection_per_generation():
    pool, truth, labels, centres = _pool(per_class=150, bias=1.5)
    rng = np.random.default_rng(3)
    private_labels = np.repeat([0, 1], 100)
    private = centres[private_labels] + rng.normal(0, 0.9, (200, 2))
    ledger = _ledger(4.0)
    noise = GeneratorNoise(np.random.default_rng(4))

    def select(mechanism, counts):
        return mechanism.release(counts, ledger=ledger, stage=STAGE, noise=noise)

    saved = []
    state = run_verdict(labels, pool, np.array([300, 300]), private_view=private, private_labels=private_labels,
                        rounds=6, epsilon=0.6, select=select, state=VerdictState.start(2, VerdictSettings()),
                        on_generation=lambda s: saved.append(s.generation))
    before = np.mean(labels.predicted == truth)
    after = np.mean(shifted_labels(labels, state.offsets).predicted == truth)
    assert state.offsets[1] > state.offsets[0] and after > before + 0.05
    assert saved == [1, 2, 3, 4, 5, 6] and len(state.history) == 6
    assert ledger.events(STAGE) == tuple(ExponentialSelection(0.6) for _ in range(6))


def test_a_refused_selection_draws_nothing_and_leaves_the_state():
    pool, _, labels, _ = _pool()
    ledger = _ledger(0.5)

    class Counting(GeneratorNoise):
        draws = 0

        def uniform(self, size):
            Counting.draws += 1
            return super().uniform(size)

    noise = Counting(np.random.default_rng(0))

    def select(mechanism, counts):
        return mechanism.release(counts, ledger=ledger, stage=STAGE, noise=noise)

    state = VerdictState.start(2, VerdictSettings())
    with pytest.raises(BudgetExceeded):
        run_verdict(labels, pool, np.array([40, 40]), private_view=pool[:5], private_labels=np.zeros(5, int),
                    rounds=3, epsilon=0.4, select=select, state=state)
    assert Counting.draws == 1 and state.generation == 1  # the first paid and drew; the second was refused


def test_state_round_trips_through_json():
    state = VerdictState(np.array([0.25, -0.25]), 0.125, 3, [{"generation": 3, "chosen": 1}])
    again = VerdictState.from_json(state.to_json())
    np.testing.assert_array_equal(again.offsets, state.offsets)
    assert (again.step, again.generation, again.history) == (0.125, 3, state.history)
    assert math.isclose(sum(state.to_json()["offsets"]), 0.0)


def test_under_replace_one_the_verdict_selects_with_half_the_sharpness():
    pool, _, labels, _ = _pool()
    ledger = BudgetLedger(8.0, DELTA, {"release": 6.0, STAGE: 2.0}, neighbouring="replace_one",
                          reproducible_noise=True)
    seen = []

    def select(mechanism, counts):
        seen.append((mechanism.monotone, mechanism.neighbouring))
        return mechanism.release(counts, ledger=ledger, stage=STAGE, noise=np.random.default_rng(0))

    run_verdict(labels, pool, np.array([40, 40]), private_view=pool[:9], private_labels=np.zeros(9, int), rounds=1,
                epsilon=0.5, select=select, state=VerdictState.start(2, VerdictSettings()), neighbouring="replace_one")
    assert seen == [(False, "replace_one")] and len(ledger.events(STAGE)) == 1
