"""PCEvolve's prototype selection and the selector hosted on it: utilities, charges, accounting, data access."""

import dp_accounting
import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant
from privacy_helpers import LockedPrivate, unlocking

from pcevolve.privacy import (
    BudgetExceeded,
    BudgetLedger,
    ExponentialSelection,
    GeneratorNoise,
)
from pcevolve.privacy.calibration import exponential_selection_epsilon
from peers import prototype_selection as selection_module
from peers.pcevolve_selector import PCEvolveSettings, pcevolve_select
from peers.prototype_selection import PrototypeSelection, prototype_utilities

DELTA = 1e-5


def test_utilities_lie_in_0_1_and_vanish_where_another_prototype_is_nearer():
    private = np.array([[0.0, 0.0], [0.2, 0.0], [10.0, 0.0], [10.2, 0.0]])  # prototypes (0.1, 0) and (10.1, 0)
    labels = np.array([0, 0, 1, 1])
    candidates = np.array([[0.1, 0.0], [2.0, 0.0], [9.0, 0.0], [10.1, 0.0], [5.0, 3.0]])
    candidate_labels = np.array([0, 0, 0, 1, 1])
    u = prototype_utilities(private, labels, candidates, candidate_labels, classes=2, tau=10.0)
    assert np.all((u >= 0) & (u <= 1))
    assert u[0] == pytest.approx(1.0) and 0 < u[1] < 1  # the nearest candidate of class 0 scores 1
    assert u[2] == 0.0  # nearer to class 1's prototype: never chosen for class 0 (up to exp(0))
    assert u[3] == pytest.approx(1.0)


def test_a_call_charges_one_batch_of_draws_and_a_refused_one_reads_and_draws_nothing():
    ledger = BudgetLedger(2.0, DELTA, {"release": 2.0}, reproducible_noise=True)
    mechanism = PrototypeSelection(0.1)
    candidates, candidate_labels = np.random.default_rng(0).standard_normal((10, 3)), np.repeat([0, 1], 5)
    private, labels = np.random.default_rng(1).standard_normal((8, 3)), np.repeat([0, 1], 4)
    picked = mechanism.release(private, labels, candidates, candidate_labels, classes=2, draws=3, ledger=ledger,
                               stage="release", noise=GeneratorNoise(np.random.default_rng(2)))
    assert list(ledger.events()) == [ExponentialSelection(0.1, count=6)]
    assert [len(p) for p in picked] == [3, 3] and set(picked[0]) <= set(range(5)) and set(picked[1]) <= {5, 6, 7, 8, 9}
    generator = np.random.default_rng(3)
    state = generator.bit_generator.state
    with pytest.raises(BudgetExceeded):
        PrototypeSelection(5.0).release(np.ones((8, 3)).view(LockedPrivate), labels, candidates, candidate_labels,
                                        classes=2, draws=3, ledger=ledger, stage="release",
                                        noise=GeneratorNoise(generator))
    assert generator.bit_generator.state == state and len(ledger.events()) == 1


def test_selector_spends_what_the_accountant_says_and_reads_private_data_only_in_the_mechanism(monkeypatch):
    rng = np.random.default_rng(4)
    pool = np.concatenate([rng.normal(0, 1, (150, 3)), rng.normal(6, 1, (150, 3))])
    private = np.concatenate([rng.normal(0, 1, (20, 3)), rng.normal(6, 1, (20, 3))]).view(LockedPrivate)
    labels = np.repeat([0, 1], 20)
    monkeypatch.setattr(selection_module, "prototype_utilities", unlocking(selection_module.prototype_utilities))
    ledger = BudgetLedger(4.0, DELTA, {"release": 4.0}, reproducible_noise=True)
    settings = PCEvolveSettings(rounds=3, draws=2, candidates=40, neighbours=5)
    result = pcevolve_select(private, labels, pool, classes=2, per_class=50, settings=settings, ledger=ledger,
                             stage="release", noise=GeneratorNoise(np.random.default_rng(5)),
                             rng=np.random.default_rng(6))
    draws = 3 * 2 * 2
    assert sum(e.count for e in ledger.events()) == draws
    assert result.epsilon_per_draw == pytest.approx(exponential_selection_epsilon(4.0, DELTA, count=draws))
    reference = rdp_privacy_accountant.RdpAccountant()
    reference.compose(dp_accounting.ZCDpEvent(rho=draws * result.epsilon_per_draw**2 / 8))
    assert ledger.spent() == pytest.approx(min(reference.get_epsilon(DELTA), draws * result.epsilon_per_draw),
                                           rel=1e-3)
    assert 4.0 * 0.99 <= ledger.spent() <= 4.0
    assert len(result.indices) == 100 and len(set(result.indices.tolist())) == 100
    # With a large budget the draws follow the utilities: references fall on their own class's side.
    LockedPrivate.locked = False
    rich = pcevolve_select(np.asarray(private.view(np.ndarray)), labels, pool, classes=2, per_class=50,
                           settings=settings, ledger=BudgetLedger(400.0, DELTA, {"release": 400.0},
                                                                  reproducible_noise=True),
                           stage="release", noise=GeneratorNoise(np.random.default_rng(7)),
                           rng=np.random.default_rng(8))
    LockedPrivate.locked = True
    assert np.all(rich.references[1] >= 150) and np.all(rich.references[0] < 150)
