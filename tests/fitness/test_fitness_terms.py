"""Each fitness term moves the right way on constructed candidates, and the total combines them as documented."""

import dataclasses
import json
import math

import numpy as np
import pytest
from fitness_helpers import K, N_CANDIDATE, P, candidates, exact_targets, noisy_release, rff
from hypothesis import given, settings
from hypothesis import strategies as st

from pcevolve.config import FitnessWeights
from pcevolve.fitness import (
    TERMS,
    Candidate,
    FitnessBreakdown,
    FitnessOptions,
    FitnessTargets,
    accuracy,
    attack,
    consistency,
    diversity,
    evaluate,
    fit_ridge_classifier,
    mmd,
    privacy_violation,
    wasserstein,
    weighted_total,
)
from pcevolve.fitness.distribution import _w2_squared_1d
from pcevolve.fitness.geometry import knn_radii, mean_pairwise_distance, pairwise_distances

BAD = ("collapsed_means", "collapsed_modes", "label_swapped", "shifted")


@pytest.fixture(scope="module")
def targets():
    return exact_targets()


@pytest.fixture(scope="module")
def scored(targets):
    """Every term of every constructed candidate."""
    out = {}
    for name, (x, y) in candidates(targets).items():
        out[name] = evaluate(x, y, targets, FitnessWeights()).terms
    return out


@pytest.mark.parametrize("bad", BAD)
def test_accuracy_prefers_a_sample_of_the_targets(scored, bad):
    # The scenario's classes need their covariance: means alone, a few modes, wrong labels or shifts all lose.
    assert scored["good"]["accuracy"] > 0.85
    assert scored["good"]["accuracy"] > scored[bad]["accuracy"] + 0.1


@pytest.mark.parametrize("bad", BAD)
def test_mmd_prefers_a_sample_of_the_targets(scored, bad):
    assert scored["good"]["mmd"] < 0.25 * scored[bad]["mmd"]


@pytest.mark.parametrize("bad", BAD)
def test_wasserstein_prefers_a_sample_of_the_targets(scored, bad):
    assert scored["good"]["wasserstein"] < scored[bad]["wasserstein"] - 0.3


@pytest.mark.parametrize("bad", ["collapsed_means", "collapsed_modes", "shrunk"])
def test_attack_penalises_piled_up_mass(scored, bad):
    # Means and a shrunk copy pile mass on the DP density's centre; three modes pile it on a few points.
    assert scored["good"]["attack"] < 0.02
    assert scored[bad]["attack"] >= 0.45


def test_attack_does_not_flag_a_displaced_but_spread_candidate(scored):
    # Wrong place is the distribution terms' business; density is judged relative to the class's own spread.
    assert scored["shifted"]["attack"] < 0.05


@pytest.mark.parametrize("bad", ["collapsed_means", "collapsed_modes"])
def test_privacy_flags_near_duplicates(scored, bad):
    assert scored["good"]["privacy"] == 0.0
    assert scored[bad]["privacy"] == 1.0


@pytest.mark.parametrize("bad", ["collapsed_means", "collapsed_modes", "shrunk"])
def test_diversity_prefers_the_data_spread(scored, bad):
    assert scored["good"]["diversity"] > 0.9
    assert scored[bad]["diversity"] < scored["good"]["diversity"] - 0.25
    assert scored["collapsed_means"]["diversity"] == 0.0


def test_diversity_is_capped_at_one(targets):
    x, y = candidates(targets)["good"]
    centres = targets.means[y]
    wide = Candidate.of(centres + 3.0 * (x - centres), y, targets)
    assert diversity(wide, targets) == 1.0


@pytest.mark.parametrize("bad", BAD)
def test_total_prefers_a_sample_of_the_targets(targets, bad):
    weights = FitnessWeights()
    good = evaluate(*candidates(targets)["good"], targets, weights)
    assert good.total > evaluate(*candidates(targets)[bad], targets, weights).total + 0.2


def test_consistency_drops_when_round_trips_move_to_another_class(targets):
    x, y = candidates(targets)["good"]
    kept = Candidate.of(x, y, targets, roundtrip=x)
    moved = Candidate.of(x, y, targets, roundtrip=x - targets.means[y] + targets.means[(y + 1) % K])
    assert consistency(kept, targets) > 0.85
    assert consistency(moved, targets) < 0.15
    # Without round trips the candidate features themselves are judged.
    assert consistency(Candidate.of(x, y, targets), targets) == consistency(kept, targets)


def test_evaluate_passes_round_trips_to_consistency_only(targets):
    x, y = candidates(targets)["good"]
    moved = x - targets.means[y] + targets.means[(y + 1) % K]
    plain, judged = (evaluate(x, y, targets, FitnessWeights(), roundtrip=r) for r in (None, moved))
    assert judged.terms["consistency"] < plain.terms["consistency"] - 0.5
    assert {k: v for k, v in judged.terms.items() if k != "consistency"} == \
        {k: v for k, v in plain.terms.items() if k != "consistency"}


def test_evaluate_is_deterministic(targets):
    x, y = candidates(targets)["good"]
    first, second = (evaluate(x, y, targets, FitnessWeights()) for _ in range(2))
    assert first == second


def test_breakdown_holds_every_term_and_serialises(targets):
    breakdown = evaluate(*candidates(targets)["good"], targets, FitnessWeights())
    assert set(breakdown.terms) == set(TERMS)
    loaded = json.loads(json.dumps(breakdown.to_json()))
    assert loaded == {"total": breakdown.total, "terms": dict(breakdown.terms)}
    assert isinstance(breakdown, FitnessBreakdown)


def test_total_is_the_documented_weighted_sum(targets):
    weights = FitnessWeights(acc=1.0, mmd=0.6, attack=0.4, privacy=0.3, diversity=0.2, consistency=0.5)
    t = evaluate(*candidates(targets)["shrunk"], targets, weights).terms
    expected = (1.0 * t["accuracy"] - 0.6 * t["mmd"] - 0.4 * t["attack"] - 0.3 * t["privacy"]
                + 0.2 * t["diversity"] + 0.5 * t["consistency"])
    assert weighted_total(t, weights) == pytest.approx(expected, abs=1e-12)
    zero = FitnessWeights(acc=0, mmd=0, attack=0, privacy=0, diversity=0, consistency=0)
    assert evaluate(*candidates(targets)["shrunk"], targets, zero).total == 0.0


def test_terms_called_alone_match_evaluate(targets):
    x, y = candidates(targets)["collapsed_modes"]
    c = Candidate.of(x, y, targets)
    terms = evaluate(x, y, targets, FitnessWeights()).terms
    alone = {"accuracy": accuracy(c, targets), "mmd": mmd(c, targets), "wasserstein": wasserstein(c, targets),
             "attack": attack(c, targets), "privacy": privacy_violation(c, targets),
             "diversity": diversity(c, targets), "consistency": consistency(c, targets), "shift": 0.0}
    assert alone == dict(terms)


def test_shift_is_passed_through_and_priced_by_its_weight(targets):
    x, y = candidates(targets)["good"]
    still, moved = (evaluate(x, y, targets, FitnessWeights(shift=0.05), shift=s) for s in (0.0, 0.2))
    assert moved.terms["shift"] == 0.2 and still.terms["shift"] == 0.0
    assert still.total - moved.total == pytest.approx(0.05 * 0.2, abs=1e-12)
    assert {k: v for k, v in moved.terms.items() if k != "shift"} == {k: v for k, v in still.terms.items()
                                                                        if k != "shift"}
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="shift"):
            evaluate(x, y, targets, FitnessWeights(), shift=bad)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.0, 3.0), per_class=st.integers(2, 40))
def test_bounded_terms_stay_in_their_ranges(seed, scale, per_class):
    targets = exact_targets()
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), per_class)
    x = targets.means[y] + scale * rng.normal(size=(y.size, P)) * rng.uniform(0, 1, size=(y.size, 1))
    terms = evaluate(x, y, targets, FitnessWeights()).terms
    for name in ("accuracy", "attack", "privacy", "diversity", "consistency"):
        assert 0.0 <= terms[name] <= 1.0, name
    assert 0.0 <= terms["mmd"] <= 4.0
    assert terms["wasserstein"] >= 0.0 and math.isfinite(terms["wasserstein"])


@pytest.mark.parametrize("change, message", [
    (lambda x, y: (x[:, :-1], y), "shape"),
    (lambda x, y: (np.where(np.arange(x.size).reshape(x.shape) == 7, np.nan, x), y), "non-finite"),
    (lambda x, y: (x, y.astype(float)), "integers"),
    (lambda x, y: (x, np.where(y == 0, K, y)), "0..4"),
    (lambda x, y: (x[y != 1][1:], y[y != 1][1:]), "at least 2"),
])
def test_malformed_candidates_are_refused(targets, change, message):
    x, y = change(*candidates(targets)["good"])
    with pytest.raises(ValueError, match=message):
        evaluate(x, y, targets, FitnessWeights())


def test_round_trip_of_the_wrong_shape_is_refused(targets):
    x, y = candidates(targets)["good"]
    with pytest.raises(ValueError, match="roundtrip"):
        evaluate(x, y, targets, FitnessWeights(), roundtrip=x[:-1])


def test_options_are_validated():
    with pytest.raises(ValueError):
        FitnessOptions(dense_ratio=1.5)


def test_ridge_classifier_separates_separable_data_and_survives_no_spread():
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 20)
    x = np.eye(3)[y] * 5 + rng.normal(scale=0.1, size=(60, 3))
    weights, bias = fit_ridge_classifier(x, y, 3)
    assert np.all(np.argmax(x @ weights + bias, axis=1) == y)
    weights, bias = fit_ridge_classifier(np.ones((6, 3)), np.array([0, 0, 1, 1, 2, 2]), 3)
    assert np.all(weights == 0.0) and np.all(np.isfinite(bias))


def test_one_dimensional_w2_is_exact():
    a = np.array([[0.0], [1.0], [2.0]])
    assert _w2_squared_1d(a, a + 0.5) == pytest.approx([0.25])
    # Unequal sizes, same distribution: {0, 1} against {0, 0, 1, 1}.
    assert _w2_squared_1d(np.array([[0.0], [1.0]]), np.array([[0.0], [0.0], [1.0], [1.0]])) == pytest.approx([0.0])
    # W2² between uniform{0, 1} and the point 0.5 is 1/4.
    assert _w2_squared_1d(np.array([[0.0], [1.0]]), np.array([[0.5]] * 3)) == pytest.approx([0.25])


def test_geometry_helpers_match_brute_force():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(30, 4)) + 100.0  # far from the origin: the centring keeps precision
    brute = np.linalg.norm(x[:, None, :] - x[None, :, :], axis=2)
    assert np.allclose(pairwise_distances(x), brute, atol=1e-9)
    assert np.allclose(knn_radii(brute, 3), np.sort(brute, axis=1)[:, 3])
    assert mean_pairwise_distance(brute) == pytest.approx(brute[np.triu_indices(30, 1)].mean())


def test_candidate_arrays_are_copied_and_read_only(targets):
    x, y = candidates(targets)["good"]
    x = x.copy()
    c = Candidate.of(x, y, targets)
    x[:] = 0.0
    assert not np.all(c.features == 0.0)
    with pytest.raises(ValueError):
        c.features[0, 0] = 1.0
    assert c.size == K * N_CANDIDATE


@pytest.mark.parametrize("seed", [0, 1])
def test_the_ordering_survives_noisy_targets(seed):
    # A real release (noise multiplier 1: ε ≈ 4.4 at δ = 1e-5, PLD) instead of the exact one.
    from fitness_helpers import V, noisy_release, rff

    from pcevolve.fitness import FitnessTargets
    targets = FitnessTargets.from_release(noisy_release(1.0, seed=seed), rff(), validation_per_class=V,
                                          rng=np.random.default_rng(seed))
    built = candidates(targets, seed=seed + 10)
    scores = {name: evaluate(x, y, targets, FitnessWeights()) for name, (x, y) in built.items()}
    for bad in BAD:
        assert scores["good"].total > scores[bad].total + 0.2, bad
    for collapsed in ("collapsed_means", "collapsed_modes"):
        assert scores[collapsed].terms["attack"] >= 0.45
        assert scores[collapsed].terms["privacy"] == 1.0
    assert scores["good"].terms["attack"] < 0.02 and scores["good"].terms["privacy"] == 0.0


def test_classes_larger_than_the_reference_sample_are_judged_on_a_subsample(targets):
    from fitness_helpers import V, draw
    x, y = draw(targets.means, targets.covariances, V + 50, np.random.default_rng(8))
    c = Candidate.of(x, y, targets)
    assert attack(c, targets) < 0.02
    collapsed = Candidate.of(targets.means[y], y, targets)
    assert attack(collapsed, targets) == 1.0


def test_mmd_noise_floor_bounds_the_released_embeddings_noise():
    # The floor is what the noise puts between the released and the exact mean embedding, 19 times in 20.

    exact = exact_targets()
    gaps, floors = [], []
    for seed in range(20):
        noisy = FitnessTargets.from_release(noisy_release(2.0, seed), rff(), validation_per_class=50,
                                            rng=np.random.default_rng(3))
        gaps.append(np.sum((noisy.rff_means - exact.rff_means) ** 2, axis=1))
        floors.append(noisy.rff_noise_floor)
    gaps, floors = np.concatenate(gaps), np.concatenate(floors)
    assert exact.rff_noise_floor.tolist() == [0.0] * K  # no noise, no floor
    # The class sizes the denominators use are estimates, so the 5% is met to within sampling error.
    assert np.mean(gaps > floors) <= 0.15
    assert 0.75 * floors.mean() < gaps.mean() < floors.mean()


def test_mmd_above_the_noise_floor_is_about_the_candidate_not_the_noise():
    # With a noisy release the raw distance of a sample of the true classes is mostly the released embedding's
    # noise (the same for every candidate, and what a search would chase); above the floor what is left is
    # about the size of its distance to the exact embedding.
    x, y = candidates(exact_targets())["good"]
    raw, floored = [], []
    for seed in range(5):
        noisy = FitnessTargets.from_release(noisy_release(2.0, seed), rff(), validation_per_class=50,
                                            rng=np.random.default_rng(3))
        sample = Candidate.of(x, y, noisy)
        raw.append(mmd(sample, dataclasses.replace(noisy, rff_noise_floor=None)))
        floored.append(mmd(sample, noisy))
    exact = mmd(Candidate.of(x, y, exact_targets()), exact_targets())
    assert np.mean(raw) > 10 * exact
    assert np.mean(floored) < 0.25 * np.mean(raw)
    assert np.mean(floored) < 5 * exact
