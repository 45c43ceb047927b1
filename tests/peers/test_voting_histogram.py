"""Private Evolution's voting histogram and the PE selector hosted on it: votes, charges, accounting, data access."""

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant
from privacy_helpers import LockedPrivate, unlocking

from pcevolve.privacy import (
    BudgetExceeded,
    BudgetLedger,
    GaussianRelease,
    GeneratorNoise,
)
from peers import voting_histogram as histogram_module
from peers.pe_selector import PESettings, pe_select, pool_neighbours
from peers.voting_histogram import VotingHistogram, nearest_candidate_votes

DELTA = 1e-5


def _ledger(epsilon=4.0, **kwargs):
    return BudgetLedger(epsilon, DELTA, {"release": epsilon}, reproducible_noise=True, **kwargs)


def test_each_record_votes_once_for_its_nearest_candidate_of_its_own_class():
    candidates = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 0.0], [10.0, 0.0]])
    candidate_labels = np.array([0, 0, 1, 1])
    private = np.array([[1.0, 0.0], [9.0, 0.0], [8.0, 0.0], [0.5, 0.5]])
    labels = np.array([0, 0, 1, 1])
    np.testing.assert_array_equal(nearest_candidate_votes(private, labels, candidates, candidate_labels),
                                  [1, 1, 1, 1])
    # Removing one record changes one bin by one: the stated add/remove sensitivity.
    fewer = nearest_candidate_votes(private[1:], labels[1:], candidates, candidate_labels)
    assert np.abs(fewer - [1, 1, 1, 1]).sum() == 1
    assert VotingHistogram(1.0).sensitivity == 1.0
    assert VotingHistogram(1.0, neighbouring="replace_one").sensitivity == pytest.approx(np.sqrt(2))


def test_a_release_charges_one_gaussian_event_and_a_refused_one_reads_and_draws_nothing():
    ledger = _ledger(3.0)
    mechanism = VotingHistogram(2.0)  # costs ε ≈ 2 of 3
    candidates, candidate_labels = np.zeros((4, 3)), np.array([0, 0, 1, 1])
    private, labels = np.ones((6, 3)), np.array([0, 1] * 3)
    noisy = mechanism.release(private, labels, candidates, candidate_labels, ledger=ledger, stage="release",
                              noise=GeneratorNoise(np.random.default_rng(0)))
    assert noisy.shape == (4,) and list(ledger.events()) == [GaussianRelease(2.0)]
    assert not np.allclose(noisy, nearest_candidate_votes(private, labels, candidates, candidate_labels))
    generator = np.random.default_rng(1)
    state = generator.bit_generator.state
    guarded = np.ones((6, 3)).view(LockedPrivate)
    with pytest.raises(BudgetExceeded):
        VotingHistogram(0.05).release(guarded, labels, candidates, candidate_labels, ledger=ledger,
                                      stage="release", noise=GeneratorNoise(generator))
    assert generator.bit_generator.state == state and len(ledger.events()) == 1


def test_pe_spends_its_iterations_as_the_accountant_says_and_reads_private_data_only_in_the_histogram(
        monkeypatch):
    rng = np.random.default_rng(3)
    pool = rng.standard_normal((300, 4))
    private = np.concatenate([pool[:20] + 0.01, pool[100:120] + 0.01]).view(LockedPrivate)
    labels = np.repeat([0, 1], 20)
    votes = unlocking(histogram_module.nearest_candidate_votes)
    monkeypatch.setattr(histogram_module, "nearest_candidate_votes", votes)
    ledger = _ledger(4.0)
    settings = PESettings(iterations=5, neighbours=4)
    selection = pe_select(private, labels, pool, classes=2, per_class=30, settings=settings, ledger=ledger,
                          stage="release", noise=GeneratorNoise(np.random.default_rng(4)),
                          rng=np.random.default_rng(5))
    assert len(ledger.events()) == 5
    assert all(e == GaussianRelease(selection.noise_multiplier) for e in ledger.events())
    reference = pld_privacy_accountant.PLDAccountant()
    reference.compose(dp_accounting.GaussianDpEvent(selection.noise_multiplier), 5)
    assert ledger.spent() == pytest.approx(reference.get_epsilon(DELTA), rel=1e-2)
    assert 4.0 * 0.98 <= ledger.spent() <= 4.0
    assert selection.indices.shape == (60,) and np.all(np.bincount(selection.labels) == 30)
    assert np.all((selection.indices >= 0) & (selection.indices < 300))


def test_pool_neighbours_are_the_nearest_others():
    pool = np.array([[0.0], [1.0], [3.0], [10.0]])
    np.testing.assert_array_equal(np.sort(pool_neighbours(pool, 1)[:, 0]), np.sort([1, 0, 1, 2]))
    assert pool_neighbours(pool, 1)[3, 0] == 2
