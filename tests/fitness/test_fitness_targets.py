"""FitnessTargets: exact releases give the true statistics, noisy ones are repaired, checkpoints round-trip."""

import dataclasses

import numpy as np
import pytest
from fitness_helpers import CLIP, K, P, V, candidates, exact_targets, noisy_release, private_data, release, rff

from pcevolve.config import FitnessWeights
from pcevolve.fitness import (
    Candidate,
    FitnessTargets,
    evaluate,
    repair_covariance,
    shrink_class_covariances,
    shrink_covariance,
)
from pcevolve.fitness.distribution import mmd
from pcevolve.privacy import NoisyClassStatistics


def per_class(x, y):
    return [x[y == k] for k in range(K)]


def test_exact_release_reproduces_the_true_statistics():
    x, y = private_data()
    assert np.linalg.norm(x, axis=1).max() < CLIP  # nothing clipped: the release saw x itself
    targets = exact_targets()
    groups = per_class(x, y)
    assert np.allclose(targets.counts, [len(g) for g in groups])
    assert np.allclose(targets.means, [g.mean(axis=0) for g in groups], atol=1e-12)
    assert np.allclose(targets.covariances, [np.cov(g, rowvar=False, bias=True) for g in groups], atol=1e-12)
    assert np.allclose(targets.rff_means, [rff().transform(g).mean(axis=0) for g in groups], atol=1e-12)
    assert not targets.fallback.any() and not targets.floored_eigenvalues.any()


def test_validation_set_is_drawn_from_the_dp_gaussians():
    targets = FitnessTargets.from_release(release(), rff(), validation_per_class=4000, rng=np.random.default_rng(0))
    assert targets.validation_features.shape == (K * 4000, P)
    assert np.array_equal(np.bincount(targets.validation_labels), [4000] * K)
    for k, g in enumerate(per_class(targets.validation_features, targets.validation_labels)):
        scale = np.sqrt(np.diag(targets.covariances[k]))
        assert np.all(np.abs(g.mean(axis=0) - targets.means[k]) < 5 * scale / np.sqrt(4000))
        assert np.allclose(np.cov(g, rowvar=False), targets.covariances[k], atol=0.1 * scale.max() ** 2)


def test_noisy_negative_eigenvalues_are_repaired():
    noisy = noisy_release(noise_multiplier=3.0)
    raw = noisy.second_moment_means(min_count=2.0) - np.einsum("ki,kj->kij", noisy.means(min_count=2.0),
                                                                noisy.means(min_count=2.0))
    assert np.linalg.eigvalsh(raw)[:, 0].max() < 0  # every class's raw estimate is indefinite
    targets = FitnessTargets.from_release(noisy, rff(), validation_per_class=V, rng=np.random.default_rng(0))
    eigenvalues = np.linalg.eigvalsh(targets.covariances)
    assert np.all(eigenvalues > 0)
    assert np.allclose(targets.covariances, np.swapaxes(targets.covariances, 1, 2))
    assert np.all(np.isfinite(targets.validation_features))
    x, y = candidates(targets)["good"]
    assert np.isfinite(evaluate(x, y, targets, FitnessWeights()).total)


def test_repair_covariance_clips_and_floors_eigenvalues():
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(3, 3)))
    matrix = (q * np.array([-1.0, 0.5, 2.5])) @ q.T
    repaired, floored = repair_covariance(matrix, relative_floor=0.01)
    assert floored == 1
    assert np.allclose(np.linalg.eigvalsh(repaired), [0.01 * 1.0, 0.5, 2.5])  # mean clipped eigenvalue = 1
    positive = (q * np.array([0.3, 0.5, 2.5])) @ q.T
    assert np.allclose(repair_covariance(positive)[0], positive)
    # No positive eigenvalue: nothing of the shape survives, the fallback scale sets an isotropic matrix.
    assert np.allclose(repair_covariance(-np.eye(2), relative_floor=0.1, fallback_scale=4.0)[0], 4.0 * np.eye(2))
    assert repair_covariance(-np.eye(2), fallback_scale=4.0)[1] == 2


def test_shrink_covariance_follows_the_noise_energy():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(6, 6))
    matrix = a @ a.T
    assert shrink_covariance(matrix, entry_noise_var=0.0) is matrix
    buried = shrink_covariance(matrix, entry_noise_var=1e6)
    assert np.allclose(buried, np.trace(matrix) / 6 * np.eye(6))
    partly = shrink_covariance(matrix, entry_noise_var=0.05)
    assert np.trace(partly) == pytest.approx(np.trace(matrix))
    assert np.sum((partly - np.diag(np.diag(partly))) ** 2) < np.sum((matrix - np.diag(np.diag(matrix))) ** 2)
    assert np.allclose(shrink_covariance(matrix, entry_noise_var=1.0, diagonal_only=True),
                       np.diag(np.diag(shrink_covariance(matrix, entry_noise_var=1.0, diagonal_only=True))))


def test_shrink_class_covariances_pools_what_noise_cannot_tell_apart():
    rng = np.random.default_rng(1)
    raw = np.stack([(lambda a: a @ a.T)(rng.normal(size=(4, 4))) for _ in range(3)])
    assert np.array_equal(shrink_class_covariances(raw, np.zeros(3)), raw)
    buried = shrink_class_covariances(raw, np.full(3, 1e6))
    pooled_trace = np.trace(raw.mean(axis=0))
    assert np.allclose(buried, pooled_trace / 4 * np.eye(4))
    # A class outside the pool (a fallback class) is shrunk on its own.
    alone = shrink_class_covariances(raw, np.full(3, 1e6), members=np.array([True, True, False]))
    assert np.allclose(alone[2], np.trace(raw[2]) / 4 * np.eye(4))
    assert np.allclose(alone[0], np.trace(raw[:2].mean(axis=0)) / 4 * np.eye(4))


@pytest.mark.parametrize("seed", [1, 2])
def test_noise_aware_shrinkage_keeps_the_trace_far_closer_than_clipping_alone(seed):
    # At this noise the raw per-class covariance is mostly noise; clipping its negative
    # eigenvalues alone inflates the total variance several-fold.
    x, y = private_data()
    true_trace = np.mean([np.trace(np.cov(g, rowvar=False, bias=True)) for g in per_class(x, y)])
    noisy = noisy_release(noise_multiplier=1.0, seed=seed)
    shrunk = FitnessTargets.from_release(noisy, rff(), validation_per_class=V, rng=np.random.default_rng(0))
    clipped_only = FitnessTargets.from_release(dataclasses.replace(noisy, noise_stds={}), rff(),
                                               validation_per_class=V, rng=np.random.default_rng(0))
    trace = lambda t: np.mean(np.trace(t.covariances, axis1=1, axis2=2))  # noqa: E731
    assert trace(clipped_only) > 4 * true_trace
    assert abs(trace(shrunk) - true_trace) < 0.25 * abs(trace(clipped_only) - true_trace)


def test_very_noisy_counts_fall_back_to_pooled_statistics():
    exact = release()
    counts = exact.counts.copy()
    counts[2] = -3.0
    noisy = dataclasses.replace(exact, counts=counts)
    targets = FitnessTargets.from_release(noisy, rff(), validation_per_class=V, rng=np.random.default_rng(0))
    assert targets.fallback.tolist() == [False, False, True, False, False]
    assert np.allclose(targets.means[2], exact.sums.sum(axis=0) / counts.sum())
    assert np.allclose(targets.means[[0, 1, 3, 4]], exact.means()[[0, 1, 3, 4]])
    assert np.all(np.linalg.eigvalsh(targets.covariances) > 0)
    everything_negative = dataclasses.replace(exact, counts=-np.ones(K))
    broken = FitnessTargets.from_release(everything_negative, rff(), validation_per_class=V,
                                         rng=np.random.default_rng(0))
    assert broken.fallback.all()
    x, y = candidates(exact_targets())["good"]
    assert np.isfinite(evaluate(x, y, broken, FitnessWeights()).total)


def test_diagonal_second_moments_give_diagonal_covariances():
    targets = FitnessTargets.from_release(release(second_moment="diagonal"), rff(), validation_per_class=V,
                                          rng=np.random.default_rng(0))
    x, y = private_data()
    for k, g in enumerate(per_class(x, y)):
        assert np.allclose(targets.covariances[k], np.diag(g.var(axis=0)), atol=1e-12)


def test_from_release_is_deterministic_given_the_generator():
    build = lambda seed: FitnessTargets.from_release(  # noqa: E731
        noisy_release(1.0), rff(), validation_per_class=V, rng=np.random.default_rng(seed)).to_arrays()
    first, again, other = build(4), build(4), build(5)
    assert all(np.array_equal(first[key], again[key]) for key in first)
    assert not np.array_equal(first["validation_features"], other["validation_features"])


def test_arrays_round_trip_through_npz(tmp_path):
    targets = FitnessTargets.from_release(noisy_release(1.0), rff(), validation_per_class=V,
                                          rng=np.random.default_rng(0))
    np.savez(tmp_path / "targets.npz", **targets.to_arrays())
    with np.load(tmp_path / "targets.npz", allow_pickle=False) as loaded:
        restored = FitnessTargets.from_arrays(dict(loaded))
    original, back = targets.to_arrays(), restored.to_arrays()
    assert set(original) == set(back)
    assert all(np.array_equal(original[key], back[key]) and original[key].dtype == back[key].dtype
               for key in original)
    x, y = candidates(targets)["good"]
    assert evaluate(x, y, targets, FitnessWeights()) == evaluate(x, y, restored, FitnessWeights())


def test_from_arrays_refuses_missing_keys_and_unknown_versions():
    arrays = exact_targets().to_arrays()
    with pytest.raises(ValueError, match="projections"):
        FitnessTargets.from_arrays({k: v for k, v in arrays.items() if k != "projections"})
    with pytest.raises(ValueError, match="version"):
        FitnessTargets.from_arrays({**arrays, "version": np.array(99)})


def test_release_without_a_needed_component_is_refused():
    exact = release()
    with pytest.raises(ValueError, match="sum"):
        FitnessTargets.from_release(dataclasses.replace(exact, sums=None), rff(), validation_per_class=V,
                                    rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="public_covariance"):
        FitnessTargets.from_release(dataclasses.replace(exact, second_moments=None), rff(), validation_per_class=V,
                                    rng=np.random.default_rng(0))


def test_a_release_of_counts_and_sums_only_uses_the_public_covariance_and_has_no_mmd_term():
    exact = release()
    public = np.diag(np.linspace(2.0, 0.5, P))
    lean = dataclasses.replace(exact, second_moments=None, rff_sums=None)
    targets = FitnessTargets.from_release(lean, rff(), validation_per_class=V, rng=np.random.default_rng(0),
                                          public_covariance=public)
    assert targets.rff_means is None
    np.testing.assert_allclose(targets.covariances, np.repeat(public[None], K, axis=0), rtol=1e-9)
    np.testing.assert_allclose(targets.means, FitnessTargets.from_release(
        exact, rff(), validation_per_class=V, rng=np.random.default_rng(0)).means)
    rebuilt = FitnessTargets.from_arrays(targets.to_arrays())
    assert rebuilt.rff_means is None
    candidate = Candidate.of(targets.validation_features, targets.validation_labels, targets)
    assert mmd(candidate, targets) == 0.0
    assert np.isfinite(evaluate(targets.validation_features, targets.validation_labels, targets,
                                FitnessWeights()).total)


def test_one_public_covariance_per_class_stands_in_for_each_class_and_an_empty_one_takes_the_mean_variance():
    lean = dataclasses.replace(release(), second_moments=None, rff_sums=None)
    per_class = np.stack([np.diag(np.full(P, 0.5 + k)) for k in range(K)])
    per_class[-1] = 0.0  # a class whose territory is a single point spreads by nothing
    targets = FitnessTargets.from_release(lean, rff(), validation_per_class=V, rng=np.random.default_rng(0),
                                          public_covariance=per_class)
    for k in range(K - 1):
        np.testing.assert_allclose(targets.covariances[k], per_class[k], rtol=1e-9)
    mean_variance = np.mean([np.trace(c) for c in per_class]) / P
    np.testing.assert_allclose(targets.covariances[-1], mean_variance * np.eye(P), rtol=1e-9)
    with pytest.raises(ValueError, match="public_covariance"):
        FitnessTargets.from_release(lean, rff(), validation_per_class=V, rng=np.random.default_rng(0),
                                    public_covariance=per_class[:, :2, :2])


def test_constructor_refuses_an_indefinite_covariance():
    arrays = exact_targets().to_arrays()
    covariances = arrays["covariances"].copy()
    covariances[0] = -np.eye(P)
    with pytest.raises(ValueError, match="positive definite"):
        FitnessTargets.from_arrays({**arrays, "covariances": covariances})


def test_targets_are_copies_and_read_only():
    exact = release()
    sums = exact.sums.copy()
    noisy = dataclasses.replace(exact, sums=sums)
    targets = FitnessTargets.from_release(noisy, rff(), validation_per_class=V, rng=np.random.default_rng(0))
    before = targets.means.copy()
    sums[:] = 0.0
    assert np.array_equal(targets.means, before)
    for name in ("means", "covariances", "rff_means", "validation_features", "projections"):
        with pytest.raises(ValueError):
            getattr(targets, name)[...] = 0.0
    assert isinstance(noisy, NoisyClassStatistics)
