"""Distribution distances (R7.1, R7.3) against brute force and closed forms."""

import math

import numpy as np
import pytest
import scipy.linalg
import scipy.stats

from pcevolve.evaluation import (
    distribution_metrics,
    frechet_distance,
    median_bandwidth,
    mmd_rbf,
    per_class,
    sliced_wasserstein,
)


def _brute_mmd(x, y, sigma):
    k = lambda a, b: math.exp(-np.sum((a - b) ** 2) / (2 * sigma**2))  # noqa: E731
    m, n = len(x), len(y)
    xx = sum(k(x[i], x[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    yy = sum(k(y[i], y[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    xy = sum(k(a, b) for a in x for b in y) / (m * n)
    return xx + yy - 2 * xy


def test_median_bandwidth_by_hand():
    # Pooled 1-D points 0, 1, 3: distances 1, 3, 2 → median 2.
    assert median_bandwidth(np.array([[0.0], [1.0]]), np.array([[3.0]])) == pytest.approx(2.0)
    assert median_bandwidth(np.zeros((3, 2)), np.zeros((2, 2))) == 1.0  # degenerate: fallback


def test_mmd_matches_brute_force_and_default_bandwidth_is_the_median():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(7, 3)), rng.normal(0.5, 1.0, size=(5, 3))
    assert mmd_rbf(x, y, bandwidth=1.3) == pytest.approx(_brute_mmd(x, y, 1.3), rel=1e-10)
    assert mmd_rbf(x, y) == pytest.approx(_brute_mmd(x, y, median_bandwidth(x, y)), rel=1e-10)


def test_mmd_near_zero_for_one_distribution_and_positive_for_a_shift():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(300, 4)), rng.normal(size=(300, 4))
    assert abs(mmd_rbf(x, x)) < 0.01
    same = mmd_rbf(x, y)
    shifted = mmd_rbf(x, y + 1.0)
    # Null standard deviation of unbiased MMD² is O(1/n) ≈ 0.003 here.
    assert abs(same) < 0.01
    assert shifted > 0.1 > 10 * abs(same)


def test_sliced_wasserstein_of_a_1d_shift_is_the_shift():
    x = np.random.default_rng(2).normal(size=(50, 1))
    for order in (1.0, 2.0):
        value = sliced_wasserstein(x, x + 3.0, projections=8, rng=np.random.default_rng(0), order=order)
        assert value == pytest.approx(3.0, rel=1e-12)


def test_sliced_wasserstein_is_exact_for_unequal_sizes_in_1d():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(13, 1)), rng.normal(1.0, 2.0, size=(29, 1))
    value = sliced_wasserstein(x, y, projections=4, rng=rng, order=1.0)
    assert value == pytest.approx(scipy.stats.wasserstein_distance(x[:, 0], y[:, 0]), rel=1e-10)


def test_sliced_wasserstein_zero_for_identical_and_seeded():
    x = np.random.default_rng(4).normal(size=(40, 6))
    assert sliced_wasserstein(x, x.copy(), rng=np.random.default_rng(0)) == pytest.approx(0.0, abs=1e-12)
    y = x + np.random.default_rng(5).normal(0.3, 1.0, size=x.shape)
    a = sliced_wasserstein(x, y, rng=np.random.default_rng(7))
    assert a == sliced_wasserstein(x, y, rng=np.random.default_rng(7)) > 0


def _with_moments(mean, cov, n, seed):
    """n samples whose sample mean and (ddof=1) covariance are exactly ``mean`` and ``cov``."""
    z = np.random.default_rng(seed).normal(size=(n, len(mean)))
    z -= z.mean(0)
    z = z @ np.linalg.inv(np.linalg.cholesky(np.cov(z, rowvar=False))).T
    return z @ np.linalg.cholesky(cov).T + mean


def test_frechet_matches_the_closed_form():
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
    cov1, cov2 = a @ a.T + 0.1 * np.eye(4), b @ b.T + 0.1 * np.eye(4)
    mu1, mu2 = np.array([0.0, 1.0, 2.0, 3.0]), np.array([1.0, 1.0, 0.0, 3.0])
    x, y = _with_moments(mu1, cov1, 50, 0), _with_moments(mu2, cov2, 70, 1)
    expected = np.sum((mu1 - mu2) ** 2) + np.trace(cov1 + cov2 - 2 * scipy.linalg.sqrtm(cov1 @ cov2).real)
    assert frechet_distance(x, y) == pytest.approx(expected, rel=1e-8)
    # Diagonal covariances: Tr(Σ1 + Σ2 − 2√(Σ1Σ2)) = Σ (σ1 − σ2)².
    s1, s2 = np.array([1.0, 2.0, 0.5]), np.array([3.0, 1.0, 0.5])
    x, y = _with_moments(np.zeros(3), np.diag(s1**2), 40, 2), _with_moments(np.ones(3), np.diag(s2**2), 40, 3)
    assert frechet_distance(x, y) == pytest.approx(3.0 + np.sum((s1 - s2) ** 2), rel=1e-8)


def test_frechet_is_stable_with_fewer_samples_than_dimensions():
    x = np.random.default_rng(7).normal(size=(10, 30))
    # Zero eigenvalues under a square root: rounding is ~√(machine ε) relative to the trace (≈ 30).
    assert frechet_distance(x, x) == pytest.approx(0.0, abs=1e-5)
    assert np.isfinite(frechet_distance(x, x[::-1] + 1.0))


def test_per_class_and_worst_class():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(60, 2))
    labels = np.repeat([0, 1, 2], 20)
    y = x + np.where(labels[:, None] == 1, 2.0, 0.0)  # only class 1 moves
    result = per_class(frechet_distance, x, labels, y, labels, classes=4)
    assert result.per_class[0] == pytest.approx(0.0, abs=1e-10)
    assert result.per_class[1] == pytest.approx(8.0)
    assert math.isnan(result.per_class[3])  # class 3 has no samples
    assert result.worst_class == 1
    js = result.to_json()
    assert js["per_class"][3] is None and js["worst_class"] == 1 and js["direction"] == "min"


def test_distribution_metrics_are_seeded():
    rng = np.random.default_rng(9)
    x, y = rng.normal(size=(40, 3)), rng.normal(size=(30, 3))
    xl, yl = np.arange(40) % 2, np.arange(30) % 2
    first = distribution_metrics(x, xl, y, yl, classes=2, rng=np.random.default_rng(0), projections=16)
    again = distribution_metrics(x, xl, y, yl, classes=2, rng=np.random.default_rng(0), projections=16)
    assert set(first) == {"mmd_rbf", "sliced_wasserstein", "frechet"}
    assert {k: v.to_json() for k, v in first.items()} == {k: v.to_json() for k, v in again.items()}
    with pytest.raises(KeyError, match="unknown distribution metric"):
        distribution_metrics(x, xl, y, yl, classes=2, rng=rng, metrics=("fid",))


def test_distribution_metrics_share_one_mmd_bandwidth_across_classes():
    rng = np.random.default_rng(10)
    x, y = rng.normal(size=(40, 3)), rng.normal(0.5, 1.0, size=(30, 3))
    xl, yl = np.arange(40) % 2, np.arange(30) % 2
    result = distribution_metrics(x, xl, y, yl, classes=2, rng=rng, metrics=("mmd_rbf",))["mmd_rbf"]
    sigma = median_bandwidth(x, y)
    assert result.overall == pytest.approx(mmd_rbf(x, y, bandwidth=sigma))
    assert result.per_class[1] == pytest.approx(mmd_rbf(x[xl == 1], y[yl == 1], bandwidth=sigma))
