"""The fitness API cannot read private data: it sees a candidate and targets built from one DP release only."""

import dataclasses
import inspect
import typing

import numpy as np
from fitness_helpers import V, candidates, noisy_release, private_data, release, rff

from pcevolve.config import FitnessWeights
from pcevolve.fitness import Candidate, FitnessTargets, evaluate
from pcevolve.privacy import NoisyClassStatistics, RandomFourierFeatures
from pcevolve.privacy.noise import GeneratorNoise


def test_evaluate_takes_only_the_candidate_the_targets_and_settings():
    assert list(inspect.signature(evaluate).parameters) == [
        "features", "labels", "targets", "weights", "roundtrip", "shift", "options"]
    hints = typing.get_type_hints(evaluate)
    assert hints["targets"] is FitnessTargets
    assert hints["shift"] is float  # a number the search computes from its own individual, not an array


def test_targets_are_built_from_a_release_and_public_inputs_only():
    parameters = inspect.signature(FitnessTargets.from_release).parameters
    # discriminant_covariance is public (the public pool's covariance in the basis), like rff and rng.
    assert list(parameters) == ["noisy", "rff", "validation_per_class", "rng", "min_count", "eigenvalue_floor",
                                "num_projections", "discriminant_covariance", "public_covariance"]
    hints = typing.get_type_hints(FitnessTargets.from_release)
    assert hints["noisy"] is NoisyClassStatistics
    assert hints["rff"] is RandomFourierFeatures
    assert hints["rng"] is np.random.Generator


def test_targets_hold_only_arrays_derived_from_the_release():
    fields = {f.name for f in dataclasses.fields(FitnessTargets)}
    assert fields == {"counts", "means", "covariances", "rff", "rff_means", "validation_features",
                      "validation_labels", "projections", "fallback", "floored_eigenvalues", "discriminant_covariance",
                      "rff_noise_floor", "reference"}
    targets = FitnessTargets.from_release(noisy_release(1.0), rff(), validation_per_class=V,
                                          rng=np.random.default_rng(0))
    for name in fields - {"rff", "reference", "discriminant_covariance"}:
        assert isinstance(getattr(targets, name), np.ndarray), name
    # The reference statistics are recomputed from the checkpointable fields alone.
    restored = FitnessTargets.from_arrays(targets.to_arrays())
    assert np.array_equal(restored.reference.lda_weights, targets.reference.lda_weights)


def test_a_public_discriminant_covariance_replaces_the_dp_one_and_survives_a_checkpoint():
    targets = FitnessTargets.from_release(noisy_release(1.0), rff(), validation_per_class=V,
                                          rng=np.random.default_rng(0))
    public = np.diag(np.linspace(0.5, 2.0, targets.dim))
    with_public = FitnessTargets.from_release(noisy_release(1.0), rff(), validation_per_class=V,
                                              rng=np.random.default_rng(0), discriminant_covariance=public)
    np.testing.assert_allclose(with_public.reference.lda_weights, np.linalg.inv(public) @ with_public.means.T)
    assert not np.allclose(with_public.reference.lda_weights, targets.reference.lda_weights)
    np.testing.assert_array_equal(with_public.means, targets.means)  # nothing else changes
    restored = FitnessTargets.from_arrays(with_public.to_arrays())
    np.testing.assert_array_equal(restored.reference.lda_weights, with_public.reference.lda_weights)


def test_fitness_depends_on_the_private_data_only_through_the_release():
    x, y = private_data()
    noisy = release(features=x.copy(), labels=y, noise=GeneratorNoise(np.random.default_rng(9)))
    build = lambda n: FitnessTargets.from_release(n, rff(), validation_per_class=V,  # noqa: E731
                                                  rng=np.random.default_rng(0))
    targets = build(noisy)
    cx, cy = candidates(targets)["good"]
    before = evaluate(cx, cy, targets, FitnessWeights())
    # Another private dataset with the very same released values gives the very same fitness.
    other = NoisyClassStatistics(counts=noisy.counts.copy(), sums=noisy.sums.copy(),
                                 second_moments=noisy.second_moments.copy(), rff_sums=noisy.rff_sums.copy(),
                                 noise_stds=dict(noisy.noise_stds))
    assert evaluate(cx, cy, build(other), FitnessWeights()) == before
    # And nothing keeps a handle on the release's arrays after the targets are built.
    noisy.sums[:] = 0.0
    assert evaluate(cx, cy, targets, FitnessWeights()) == before


def test_candidate_holds_only_candidate_arrays():
    assert {f.name for f in dataclasses.fields(Candidate)} == {"features", "labels", "groups", "roundtrip",
                                                               "_distances"}
