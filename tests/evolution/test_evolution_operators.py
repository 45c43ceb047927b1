"""Each operator does what its docstring says on toy populations, and every one stays in bounds."""

from functools import partial
from itertools import permutations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcevolve.evolution import (
    CROSSOVERS,
    MUTATIONS,
    Bounds,
    differential_mutation,
    gaussian_mutation,
    interpolation_crossover,
    polynomial_mutation,
    uniform_crossover,
)


def _rng(seed=0):
    return np.random.default_rng(seed)


def test_gaussian_changes_about_rate_times_d_genes_with_sigma_times_span_steps():
    spans = np.array([0.5, 1.0, 2.0, 8.0, 40.0])
    bounds = Bounds(-spans / 2, spans / 2)
    x = np.zeros((20_000, spans.size))  # the centre: a 5%-of-span step is never clipped (10 sigma to the edge)
    rate, sigma = 0.3, 0.05
    out = gaussian_mutation(x, rng=_rng(), bounds=bounds, rate=rate, sigma=sigma, population=x)
    changed = out != x
    assert abs(changed.mean() - rate) < 0.01
    for j, span in enumerate(spans):
        steps = out[changed[:, j], j]
        assert abs(steps.std() / (sigma * span) - 1.0) < 0.05
        assert abs(steps.mean()) < 0.05 * sigma * span


def test_gaussian_rate_zero_is_identity_and_input_is_untouched():
    bounds = Bounds.uniform(-1, 1, 4)
    x = _rng(1).uniform(-1, 1, (10, 4))
    before = x.copy()
    out = gaussian_mutation(x, rng=_rng(), bounds=bounds, rate=0.0, sigma=0.5, population=x)
    np.testing.assert_array_equal(out, x)
    np.testing.assert_array_equal(x, before)
    assert out is not x


def test_polynomial_stays_in_bounds_even_from_the_edges():
    bounds = Bounds(np.array([0.0, -2.0, 10.0]), np.array([1.0, 2.0, 10.5]))
    edges = np.stack([bounds.lower, bounds.upper, bounds.centre] * 200)
    for eta in (0.0, 1.0, 20.0):
        out = polynomial_mutation(edges, rng=_rng(), bounds=bounds, rate=1.0, sigma=0.05, population=edges, eta=eta)
        assert bounds.contains(out)


def test_polynomial_perturbation_shrinks_with_larger_eta():
    bounds = Bounds.uniform(-1, 1, 8)
    x = _rng(2).uniform(-0.5, 0.5, (4000, 8))
    sizes = []
    for eta in (1.0, 5.0, 20.0, 100.0):
        out = polynomial_mutation(x, rng=_rng(3), bounds=bounds, rate=1.0, sigma=0.05, population=x, eta=eta)
        sizes.append(np.abs(out - x).mean())
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[-1] < 0.2 * sizes[0]
    with pytest.raises(ValueError, match="eta"):
        polynomial_mutation(x, rng=_rng(), bounds=bounds, rate=1.0, eta=-1.0)


def test_polynomial_changes_about_rate_of_the_genes():
    bounds = Bounds.uniform(-1, 1, 10)
    x = np.zeros((5000, 10))
    out = polynomial_mutation(x, rng=_rng(), bounds=bounds, rate=0.2, population=x)
    assert abs((out != x).mean() - 0.2) < 0.01


def test_differential_builds_genes_from_three_distinct_other_members():
    bounds = Bounds.uniform(-100, 100, 3)
    population = np.array([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0], [-4.0, 5.0, -6.0]])
    allowed = [population[a] + 0.5 * (population[b] - population[c]) for a, b, c in permutations(range(3))]
    rows = np.zeros((300, 3))
    out = differential_mutation(rows, rng=_rng(), bounds=bounds, rate=1.0, population=population)
    for row in out:
        assert any(np.allclose(row, mutant) for mutant in allowed)
    # All six orderings of the donors occur (they are drawn, not fixed).
    seen = {int(np.argmin([np.abs(row - mutant).sum() for mutant in allowed])) for row in out}
    assert seen == set(range(6))


def test_differential_moves_at_least_one_gene_per_row_and_uses_the_population():
    bounds = Bounds.uniform(-1, 1, 6)
    population = np.full((5, 6), 0.25)  # identical members: every mutant gene equals 0.25
    rows = np.zeros((50, 6))
    out = differential_mutation(rows, rng=_rng(), bounds=bounds, rate=0.0, population=population)
    assert np.all((out == 0.25).sum(axis=1) == 1)  # rate 0: only the forced gene
    assert np.all(out[out != 0.0] == 0.25)
    with pytest.raises(ValueError, match="population"):
        differential_mutation(rows, rng=_rng(), bounds=bounds, rate=0.5, population=np.zeros((4, 5)))


def test_interpolation_children_lie_on_the_segment_between_their_parents():
    bounds = Bounds.uniform(-3, 3, 7)
    rng = _rng(4)
    a, b = rng.uniform(-3, 3, (2, 200, 7))
    child = interpolation_crossover(a, b, rng=_rng(5), bounds=bounds)
    u = (child[:, 0] - a[:, 0]) / (b[:, 0] - a[:, 0])
    assert np.all((u >= 0) & (u <= 1))
    np.testing.assert_allclose(child, a + u[:, None] * (b - a), atol=1e-12)
    assert u.std() > 0.2  # one u per child, spread over [0, 1]


def test_uniform_children_take_each_gene_from_one_parent():
    bounds = Bounds.uniform(0, 1, 9)
    a = np.zeros((500, 9))
    b = np.ones((500, 9))
    child = uniform_crossover(a, b, rng=_rng(), bounds=bounds)
    assert set(np.unique(child)) == {0.0, 1.0}
    assert abs(child.mean() - 0.5) < 0.02


def test_operators_are_deterministic_given_the_generator():
    bounds = Bounds.uniform(-1, 1, 4)
    x = _rng(6).uniform(-1, 1, (8, 4))
    for name, operator in MUTATIONS.items():
        first = operator(x, rng=_rng(7), bounds=bounds, rate=0.5, sigma=0.1, population=x)
        again = operator(x, rng=_rng(7), bounds=bounds, rate=0.5, sigma=0.1, population=x)
        np.testing.assert_array_equal(first, again, err_msg=name)


def test_registered_names_are_the_documented_ones():
    assert set(MUTATIONS) == {"gaussian", "polynomial", "differential"}
    assert set(CROSSOVERS) == {"interpolation", "uniform"}
    # eta is configurable by registering a partial under another name.
    flat = partial(polynomial_mutation, eta=1.0)
    bounds = Bounds.uniform(-1, 1, 3)
    assert bounds.contains(flat(np.zeros((4, 3)), rng=_rng(), bounds=bounds, rate=1.0, sigma=0.1, population=None))


@st.composite
def _case(draw):
    dim = draw(st.integers(1, 6))
    rows = draw(st.integers(1, 8))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    lower = rng.uniform(-1e3, 1e3, dim)
    span = 10.0 ** rng.uniform(-3, 3, dim)
    bounds = Bounds(lower, lower + span)
    inside = bounds.lower + rng.random((rows, dim)) * span
    outside = bounds.centre + rng.normal(0, 3, (rows, dim)) * span  # mutations also take rows from wider boxes
    rate = draw(st.floats(0, 1))
    sigma = draw(st.floats(1e-3, 1))
    return bounds, inside, outside, rate, sigma, seed


@settings(max_examples=60, deadline=None)
@given(_case())
def test_every_operator_returns_new_rows_inside_the_bounds(case):
    bounds, inside, outside, rate, sigma, seed = case
    for name, mutation in MUTATIONS.items():
        for rows in (inside, outside):
            out = mutation(rows, rng=_rng(seed), bounds=bounds, rate=rate, sigma=sigma, population=inside)
            assert out.shape == rows.shape, name
            assert bounds.contains(out), name
    for name, crossover in CROSSOVERS.items():
        out = crossover(inside, inside[::-1], rng=_rng(seed), bounds=bounds)
        assert out.shape == inside.shape, name
        assert bounds.contains(out), name
