"""The DP class model (noise-aware discriminant of released means) and the class territories built from it."""

import numpy as np
import pytest

from pcevolve.privacy.statistics import NoisyClassStatistics
from pcevolve.search.class_model import (
    MAX_SHRINKAGE,
    MIN_DIMS,
    MIN_SHRINKAGE,
    SIGNAL_TO_NOISE,
    ClassModel,
)
from pcevolve.search.pool_labels import PoolLabels
from pcevolve.search.territory import cut_territories

DIM = 16
VARIANCES = 1.0 / (1.0 + np.arange(DIM))  # public variances along the basis, largest first
MEANS = np.zeros((3, DIM))
MEANS[0, 0], MEANS[1, 1], MEANS[2, 0] = 1.5, 1.0, -1.5


def _release(sum_noise_std, counts=(100.0, 100.0, 100.0)):
    counts = np.asarray(counts)
    return NoisyClassStatistics(counts=counts, sums=MEANS * counts[:, None], second_moments=None, rff_sums=None,
                                noise_stds={"count": 1.0, "sum": sum_noise_std})


def test_with_little_noise_every_direction_is_kept_with_the_least_shrinkage():
    model = ClassModel.from_release(_release(1e-3), VARIANCES)
    assert model.kept == DIM and model.shrinkage == MIN_SHRINKAGE
    np.testing.assert_allclose(model.means, MEANS)
    np.testing.assert_allclose(np.diag(model.covariance),
                               (1 - MIN_SHRINKAGE) * VARIANCES + MIN_SHRINKAGE * VARIANCES.mean())


def test_noisy_means_drop_the_directions_they_cannot_resolve_and_shrink_more():
    noise = 0.25 * 100  # σ of a sum; a mean of 100 has σ 0.25, variance 0.0625
    model = ClassModel.from_release(_release(noise), VARIANCES)
    expected = int(np.sum(VARIANCES >= SIGNAL_TO_NOISE * 0.25**2))
    assert model.kept == max(expected, MIN_DIMS) and model.kept < DIM
    assert model.shrinkage == pytest.approx(min(MAX_SHRINKAGE, 2 * 0.25**2 / VARIANCES[model.kept - 1]))
    assert model.mean_noise_std == pytest.approx(0.25)
    # Dropped directions do not move a score.
    z = np.zeros((1, DIM))
    moved = z.copy()
    moved[0, model.kept:] = 50.0
    np.testing.assert_allclose(model.scores(moved), model.scores(z), atol=1e-3)
    # Even under the worst noise at least MIN_DIMS directions stay.
    assert ClassModel.from_release(_release(1e6), VARIANCES).kept == MIN_DIMS


def test_the_model_never_reads_directions_the_release_did_not_cover():
    assert ClassModel.from_release(_release(1e-3), VARIANCES, released_dim=3).kept == 3
    assert ClassModel.from_release(_release(1e6), VARIANCES, released_dim=3).kept == 3  # below MIN_DIMS too


def test_predictions_and_confidence():
    model = ClassModel.from_release(_release(1e-3), VARIANCES)
    rng = np.random.default_rng(0)
    points = np.concatenate([m + 0.2 * rng.standard_normal((50, DIM)) * np.sqrt(VARIANCES) for m in MEANS])
    assert np.mean(model.predict(points) == np.repeat([0, 1, 2], 50)) > 0.95
    at_mean, between, far = MEANS[0], (MEANS[0] + MEANS[1]) / 2, MEANS[0] * 10
    predicted, confidence = model.confidence(np.stack([at_mean, between, far]))
    assert predicted[0] == 0 and confidence[0] > confidence[1] and confidence[0] > confidence[2]


def test_release_without_sums_or_with_wrong_variances_is_refused():
    statistics = _release(1.0)
    with pytest.raises(ValueError, match="noisy sums"):
        ClassModel.from_release(NoisyClassStatistics(counts=statistics.counts, sums=None, second_moments=None,
                                                     rff_sums=None, noise_stds={}), VARIANCES)
    with pytest.raises(ValueError, match="largest first"):
        ClassModel.from_release(statistics, VARIANCES[::-1])


def test_territories_hold_the_most_confident_points_of_each_class_and_are_disjoint():
    model = ClassModel.from_release(_release(1e-3), VARIANCES)
    rng = np.random.default_rng(1)
    pool = np.concatenate([m + 0.5 * rng.standard_normal((40, DIM)) * np.sqrt(VARIANCES) for m in MEANS])
    territories = cut_territories(pool, PoolLabels.from_class_model(model, pool), np.array([10, 20, 200]))
    predicted, confidence = model.confidence(pool)
    assert territories.sizes() == [10, 20, int(np.sum(predicted == 2))]  # a class cannot hold more than it has
    members = np.concatenate(territories.members)
    assert len(set(members.tolist())) == len(members)
    for k, rows in enumerate(territories.members):
        assert np.all(predicted[rows] == k)
        others = np.setdiff1d(np.flatnonzero(predicted == k), rows)
        if len(others):
            assert confidence[rows].min() >= confidence[others].max()
        np.testing.assert_allclose(territories.spreads[k], np.cov(pool[rows], rowvar=False))
    with pytest.raises(ValueError, match="positive counts"):
        cut_territories(pool, PoolLabels.from_class_model(model, pool), np.array([10, 0, 5]))
