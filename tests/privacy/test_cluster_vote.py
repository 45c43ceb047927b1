"""The vote for each class's public cluster: its weights, its charge, its guarantee checked exactly, its data access."""

import itertools
import math

import numpy as np
import pytest
from privacy_helpers import LockedPrivate, seeded, unlocking

from pcevolve.privacy import (
    BudgetExceeded,
    BudgetLedger,
    ExponentialSelection,
    GeneratorNoise,
)
from pcevolve.privacy import cluster_vote as vote_module
from pcevolve.privacy.cluster_vote import (
    ClusterVote,
    class_votes,
    cluster_spread,
    nearest_centre,
    public_clusters,
    variance_directions,
    vote_weights,
)

DELTA = 1e-5
CENTRES = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])


def _exact(mechanism: ClusterVote, votes: np.ndarray) -> dict[tuple[int, ...], float]:
    """P(σ) ∝ exp(ε U(σ) / a) over every assignment of the classes to distinct clusters, by enumeration."""
    classes, clusters = votes.shape
    logs = {σ: sum(mechanism.log_weights(votes)[k, m] for k, m in enumerate(σ))
            for σ in itertools.permutations(range(clusters), classes)}
    top = max(logs.values())
    total = sum(math.exp(v - top) for v in logs.values())
    return {σ: math.exp(v - top) / total for σ, v in logs.items()}


def _neighbours(votes: np.ndarray, relation: str):
    """Every vote table one record away (add/remove: one vote more or less; replace-one: one vote moved)."""
    classes, clusters = votes.shape
    cells = list(itertools.product(range(classes), range(clusters)))
    for cell in cells:
        more = votes.copy()
        more[cell] += 1
        if relation == "add_remove":
            yield more
        else:
            for other in cells:
                if other != cell and votes[other] > 0:
                    moved = more.copy()
                    moved[other] -= 1
                    yield moved


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_every_assignment_changes_probability_by_at_most_e_to_the_epsilon_between_neighbours(relation):
    epsilon = 0.7
    mechanism = ClusterVote(epsilon, relation)
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(6):
        votes = rng.integers(0, 4, size=(2, 4))
        here = _exact(mechanism, votes)
        for neighbour in _neighbours(votes, relation):
            there = _exact(mechanism, neighbour)
            worst = max(worst, max(abs(math.log(here[s] / there[s])) for s in here))
    assert worst <= epsilon + 1e-9
    assert worst >= 0.5 * epsilon  # the bound is nearly reached: the weights are not needlessly flat


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_partial_votes_keep_the_guarantee_between_neighbouring_datasets(relation):
    # Records (x, y) with their kernel weights; every dataset one record away: one removed or one new record added
    # (add/remove), or one record replaced by another of any class (replace-one).
    epsilon, width = 0.9, 20.0
    mechanism = ClusterVote(epsilon, relation, width=width)
    rng = np.random.default_rng(5)
    centres = rng.normal(0, 4, (4, 2))
    points, labels = rng.normal(0, 4, (5, 2)), rng.integers(0, 2, 5)
    newcomers = [(x, y) for x, y in zip(np.concatenate([rng.normal(0, 4, (5, 2)), centres]), itertools.cycle([0, 1]))]

    def votes(xs, ys):
        return class_votes(vote_weights(np.asarray(xs).reshape(-1, 2), centres, width), np.asarray(ys), classes=2)

    weights = vote_weights(points, centres, width)
    assert weights.min() > 0 and weights.max() == 1.0 and np.all(weights.max(axis=1) == 1.0)  # partial votes used
    here = _exact(mechanism, votes(points, labels))
    neighbours = []
    for i in range(len(points)):
        rest = (np.delete(points, i, axis=0), np.delete(labels, i))
        if relation == "add_remove":
            neighbours.append(rest)
        else:
            neighbours += [(np.vstack([rest[0], x]), np.append(rest[1], y)) for x, y in newcomers]
    if relation == "add_remove":
        neighbours += [(np.vstack([points, x]), np.append(labels, y)) for x, y in newcomers]
    worst = 0.0
    for xs, ys in neighbours:
        there = _exact(mechanism, votes(xs, ys))
        worst = max(worst, max(abs(math.log(here[σ] / there[σ])) for σ in here))
    assert worst <= epsilon + 1e-9
    assert worst >= 0.3 * epsilon


def test_partial_votes_are_one_for_the_nearest_centre_and_fall_with_the_excess_distance():
    x = np.array([[1.0, 0.0]])  # squared distances 1, 81, 101 to the three centres
    assert vote_weights(x, CENTRES, 0.0).tolist() == [[1.0, 0.0, 0.0]]
    np.testing.assert_allclose(vote_weights(x, CENTRES, 40.0), [[1.0, math.exp(-2.0), math.exp(-2.5)]])
    assert class_votes(vote_weights(np.vstack([x, x]), CENTRES, 0.0), np.array([1, 1]), classes=2).tolist() == \
        [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
    assert cluster_spread(np.array([[1.0, 0.0], [10.0, 2.0]]), CENTRES) == pytest.approx((1.0 + 4.0) / 2)
    with pytest.raises(ValueError, match="width"):
        ClusterVote(1.0, width=-1.0)


def test_the_sampler_draws_each_assignment_with_its_exact_probability():
    mechanism = ClusterVote(0.8)
    votes = np.array([[3, 1, 0, 2], [0, 2, 2, 1], [1, 0, 3, 0]])
    exact = _exact(mechanism, votes)
    table = vote_module.assignment_log_sums(mechanism.log_weights(votes))
    assert math.exp(table[-1, -1]) == pytest.approx(sum(
        math.exp(sum(mechanism.log_weights(votes)[k, m] for k, m in enumerate(σ))) for σ in exact))
    rng = np.random.default_rng(1)
    draws = 6000
    counts = {}
    for _ in range(draws):
        σ = tuple(mechanism.draw(votes, rng.uniform(size=4)).tolist())
        counts[σ] = counts.get(σ, 0) + 1
    assert set(counts) <= set(exact)
    for σ, p in exact.items():
        assert abs(counts.get(σ, 0) / draws - p) <= 4 * math.sqrt(p * (1 - p) / draws) + 1e-3


def test_add_remove_weights_are_e_to_the_epsilon_per_vote():
    assert ClusterVote(2.0).log_weights(np.array([[3, 1]])).tolist() == [[6.0, 2.0]]
    assert ClusterVote(2.0, "replace_one").log_weights(np.array([[3, 1]])).tolist() == [[3.0, 1.0]]


def test_one_charge_for_all_classes_distinct_choices_and_the_majority_wins_at_large_epsilon():
    ledger = BudgetLedger(100.0, DELTA, {"release": 100.0}, reproducible_noise=True)
    private = np.array([[0.1, 0.0], [0.0, 0.2], [9.9, 0.1], [0.2, 9.8], [0.1, 10.1]])
    labels = np.array([0, 0, 1, 1, 1])  # class 1: two votes for centre 2, one for centre 1
    chosen = ClusterVote(40.0).select(private, labels, CENTRES, classes=2, ledger=ledger, stage="release",
                                      noise=seeded(1))
    assert list(chosen) == [0, 2]
    assert list(ledger.events()) == [ExponentialSelection(40.0)]
    # Two classes want the same centre: the assignment honouring the most votes wins, whatever the class order
    # (class 0: 2 votes for centre 0, 2 for centre 1; class 1: 3 for centre 0, 1 for centre 1).
    private = np.array([[0.0, 0.1], [0.1, 0.0], [9.0, 0.0], [9.1, 0.0], [0.2, 0.0], [0.0, 0.2], [0.1, 0.1],
                        [9.0, 0.1]])
    same = ClusterVote(40.0).select(private, np.array([0, 0, 0, 0, 1, 1, 1, 1]), CENTRES, classes=2, ledger=ledger,
                                    stage="release", noise=seeded(2))
    assert list(same) == [1, 0]


def test_the_private_data_is_read_only_after_the_charge_and_a_refused_vote_draws_nothing(monkeypatch):
    monkeypatch.setattr(vote_module, "vote_weights", unlocking(vote_module.vote_weights))
    ledger = BudgetLedger(3.0, DELTA, {"release": 3.0}, reproducible_noise=True)
    private = np.array([[0.1, 0.0], [9.0, 0.0]]).view(LockedPrivate)
    assert ClusterVote(2.0, width=5.0).select(private, np.array([0, 1]), CENTRES, classes=2, ledger=ledger,
                                              stage="release", noise=seeded(4)).shape == (2,)
    monkeypatch.undo()
    ledger = BudgetLedger(1.0, DELTA, {"release": 1.0}, reproducible_noise=True)
    generator = np.random.default_rng(3)
    state = generator.bit_generator.state
    private = np.zeros((4, 2)).view(LockedPrivate)
    with pytest.raises(BudgetExceeded):
        ClusterVote(2.0).select(private, np.array([0, 0, 1, 1]), CENTRES, classes=2, ledger=ledger, stage="release",
                                noise=GeneratorNoise(generator))
    assert generator.bit_generator.state == state and ledger.events() == ()  # and the locked array was not read
    with pytest.raises(ValueError, match="at least 4 public clusters"):
        ClusterVote(1.0).select(private, np.array([0, 1, 2, 3]), CENTRES, classes=4, ledger=ledger,
                                stage="release", noise=GeneratorNoise(generator))


def test_votes_and_public_clusters():
    votes = class_votes(vote_weights(np.array([[0.0, 1.0], [9.0, 1.0], [8.0, 0.0]]), CENTRES, 0.0), np.array([0, 1, 1]),
                        classes=2)
    assert votes.tolist() == [[1, 0, 0], [0, 2, 0]]
    rng = np.random.default_rng(0)
    points = np.concatenate([rng.normal(c, 0.1, (50, 2)) for c in CENTRES])
    found = public_clusters(points, 3, rng=np.random.default_rng(1))
    assert sorted(nearest_centre(CENTRES, found).tolist()) == [0, 1, 2]
    assert np.allclose(found, public_clusters(points, 3, rng=np.random.default_rng(1)))
    with pytest.raises(ValueError, match="cannot make 4 clusters"):
        public_clusters(points[:3], 4, rng=rng)


def test_public_clusters_in_the_leading_directions():
    # Two kinds apart along the first direction; the second carries a wider split within each kind, which k-means
    # on both directions would follow instead.
    rng = np.random.default_rng(0)
    kind = np.repeat([-1.0, 1.0], 200)
    spread = rng.choice([-6.0, 6.0], 400) + rng.normal(0, 0.1, 400)
    points = np.column_stack([kind + rng.normal(0, 0.1, 400), spread])
    both = public_clusters(points, 2, rng=np.random.default_rng(1))
    assert np.allclose(np.sort(np.abs(both[:, 1])), 6.0, atol=0.5)
    leading = public_clusters(points, 2, rng=np.random.default_rng(1), directions=1)
    assert np.allclose(np.sort(leading[:, 0]), [-1.0, 1.0], atol=0.05)
    # Each centre is its members' mean in every direction: the within-kind split averages out.
    assert np.all(np.abs(leading[:, 1]) < 1.5)
    with pytest.raises(ValueError, match="cannot cluster in 3 of 2"):
        public_clusters(points, 2, rng=rng, directions=3)


def test_variance_directions():
    variances = np.array([5.0, 3.0, 1.0, 1.0])
    assert variance_directions(variances, 0.5) == 1
    assert variance_directions(variances, 0.8) == 2
    assert variance_directions(variances, 0.81) == 3
    assert variance_directions(variances, 1.0) == 4
