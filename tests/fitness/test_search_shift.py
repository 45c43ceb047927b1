"""The search prices its own moves away from the released Gaussians (the ``shift`` term)."""

import numpy as np
import pytest
from fitness_helpers import exact_targets

from pcevolve.config import FitnessWeights
from pcevolve.search.problem import SearchProblem
from pcevolve.search.space import ClassFrames, SearchSpace


def _problem(weights: FitnessWeights) -> SearchProblem:
    targets = exact_targets()
    space = SearchSpace(ClassFrames.from_gaussians(targets.means, targets.covariances))
    return SearchProblem.build(space, targets, weights, None, per_class=40, eval_seeds=2, seed=3)


def test_shift_is_zero_at_the_release_and_grows_with_offsets_and_spread_changes():
    space = _problem(FitnessWeights()).space
    assert space.shift(space.baseline()) == 0.0
    offsets, coefficients = (np.array(a) for a in space.split(space.baseline()))
    offsets[0, :] = 0.5            # class 0's mean moved half a spread along every direction
    coefficients[1, :] = 0.8       # class 1's spread shrunk by a fifth
    vector = np.stack([offsets, coefficients], axis=1).ravel()
    k = space.frames.num_classes
    assert space.shift(vector) == pytest.approx(0.25 / k + 0.04 / k)


def test_the_problem_subtracts_the_weighted_shift_and_nothing_else():
    priced, free = _problem(FitnessWeights(shift=0.05)), _problem(FitnessWeights(shift=0.0))
    vector = priced.space.baseline() + 0.1
    a, b = priced.evaluate(vector), free.evaluate(vector)
    assert a.terms == b.terms and a.terms["shift"] == pytest.approx(priced.space.shift(vector))
    assert b.total - a.total == pytest.approx(0.05 * a.terms["shift"], abs=1e-12)
    assert priced.evaluate(priced.space.baseline()).terms["shift"] == 0.0
