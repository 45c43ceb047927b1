"""The search space: public basis, per-class frames from released Gaussians, sampling, surrogate."""

import numpy as np
import pytest

from pcevolve.search.basis import PublicBasis, local_variances, public_bandwidth, unit_rows
from pcevolve.search.roundtrip import RoundTripSurrogate
from pcevolve.search.space import ClassFrames, SearchSpace


def _features(n=400, d=16, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) * np.linspace(3, 0.1, d) + 5.0


def test_basis_is_orthonormal_and_reduce_expand_round_trip_within_the_span():
    features = _features()
    basis = PublicBasis.fit(features, 16)
    np.testing.assert_allclose(basis.directions.T @ basis.directions, np.eye(16), atol=1e-10)
    assert np.all(np.diff(basis.variances) <= 1e-12)  # largest first
    # With the full basis, expand(reduce(φ)) recovers the unit direction of φ.
    np.testing.assert_allclose(basis.expand(basis.reduce(features)), unit_rows(features), atol=1e-10)
    restored = PublicBasis.from_arrays(basis.to_arrays())
    np.testing.assert_array_equal(restored.reduce(features), basis.reduce(features))


def test_leading_radii_grow_with_the_directions_and_end_at_the_whole_radius():
    features = np.random.default_rng(4).normal(size=(300, 12))
    basis = PublicBasis.fit(features, 5)
    radii = basis.leading_radii(features, 0.5)
    assert radii.shape == (5,) and np.all(np.diff(radii) >= 0)
    assert radii[-1] == pytest.approx(basis.radius(features, 0.5))
    assert radii[0] == pytest.approx(np.quantile(np.abs(basis.reduce(features)[:, 0]), 0.5))


def test_fixed_directions_join_the_principal_ones_along_the_public_axes_of_their_span():
    features = _features(d=24)
    fixed = np.zeros((24, 3))
    fixed[[20, 21, 22], [0, 1, 2]] = 1.0  # three coordinates the public pool hardly varies along
    plain = PublicBasis.fit(features, 4)
    basis = PublicBasis.fit(features, 4, fixed_directions=fixed)
    assert basis.dim == 7
    np.testing.assert_allclose(basis.directions.T @ basis.directions, np.eye(7), atol=1e-10)
    # Both the fixed directions and the plain principal ones lie inside the basis.
    for inside in (fixed, plain.directions):
        np.testing.assert_allclose(basis.directions @ (basis.directions.T @ inside), inside, atol=1e-10)
    # Turned to the public axes: largest variance first, the public covariance diagonal with those variances.
    assert np.all(np.diff(basis.variances) <= 1e-12)
    z = basis.reduce(features)
    covariance = np.cov(z.T)
    np.testing.assert_allclose(covariance, np.diag(basis.variances), atol=1e-9 * basis.variances[0])
    # A fixed direction already inside the principal span adds nothing.
    assert PublicBasis.fit(features, 4, fixed_directions=plain.directions[:, :2]).dim == 4
    with pytest.raises(ValueError, match="fixed directions"):
        PublicBasis.fit(features, 4, fixed_directions=np.ones((5, 2)))


def test_a_fixed_direction_the_pool_never_varies_along_gets_a_small_positive_variance():
    features = _features(d=12)
    features[:, 11] = features[:, 10]  # two coordinates that are always equal, like two equal colour channels
    difference = np.zeros((12, 1))
    difference[[10, 11], 0] = [1.0, -1.0]
    basis = PublicBasis.fit(features, 3, fixed_directions=difference / np.sqrt(2))
    assert basis.dim == 4 and np.all(basis.variances > 0)
    assert basis.variances[-1] == pytest.approx(1e-9 * basis.variances[0])


def test_local_variances_leave_out_the_spread_between_groups_of_similar_features():
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(6, 5)) * 10.0
    z = np.concatenate([c + rng.normal(size=(100, 5)) * 0.5 for c in centres])
    local = local_variances(z, rng=np.random.default_rng(0), group_size=50)
    assert local.shape == (5,)
    assert np.all(local < 0.5) and np.all(local > 0.1)  # the groups' own spread (0.25), not the pool's (12-280)
    assert np.all(np.var(z, axis=0) > 10)
    np.testing.assert_array_equal(local, local_variances(z, rng=np.random.default_rng(0), group_size=50))
    np.testing.assert_allclose(local_variances(z, rng=np.random.default_rng(0), group_size=len(z)),
                               np.var(z, axis=0, ddof=1))


def test_basis_refuses_bad_sizes():
    with pytest.raises(ValueError, match="basis_dim"):
        PublicBasis.fit(_features(d=4), 5)
    with pytest.raises(ValueError, match="two public features"):
        PublicBasis.fit(_features(n=1), 2)


def _frames(k=3, p=4, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(k, p))
    factors = rng.normal(size=(k, p, p))
    covariances = factors @ np.transpose(factors, (0, 2, 1)) + 0.1 * np.eye(p)
    return ClassFrames.from_gaussians(means, covariances), means, covariances


def test_baseline_individual_samples_the_released_gaussians():
    frames, means, covariances = _frames()
    space = SearchSpace(frames)
    z, labels = space.sample(space.baseline(), space.noise(20000, np.random.default_rng(1)))
    for k in range(3):
        rows = z[labels == k]
        np.testing.assert_allclose(rows.mean(axis=0), means[k], atol=0.1)
        np.testing.assert_allclose(np.cov(rows.T), covariances[k], atol=0.15 * np.abs(covariances[k]).max())


def test_offsets_move_the_mean_and_coefficients_scale_the_spread():
    frames, means, _ = _frames()
    space = SearchSpace(frames)
    draws = space.noise(4000, np.random.default_rng(2))
    vector = space.baseline().reshape(3, 2, 4)
    vector[0, 0, 0] = 1.0          # class 0: one spread along its first direction
    vector[1, 1, :] = 0.0          # class 1: collapsed onto its mean
    z, labels = space.sample(vector.ravel(), draws)
    shift = z[labels == 0].mean(axis=0) - means[0]
    np.testing.assert_allclose(shift, frames.scales[0, 0] * frames.directions[0][:, 0], atol=0.15)
    np.testing.assert_allclose(z[labels == 1], np.broadcast_to(means[1], (4000, 4)), atol=1e-12)
    bounds = space.bounds()
    assert bounds.lower.shape == (space.size,) and np.all(bounds.lower < space.baseline())
    assert np.all(space.baseline() < bounds.upper)


def test_sampling_is_deterministic_and_sample_counts_gives_the_sizes():
    frames, _, _ = _frames()
    space = SearchSpace(frames)
    draws = space.noise(5, np.random.default_rng(3))
    a = space.sample(space.baseline(), draws)[0]
    b = space.sample(space.baseline(), draws)[0]
    np.testing.assert_array_equal(a, b)
    z, labels = space.sample_counts(space.baseline(), np.array([2, 0, 7]), np.random.default_rng(4))
    assert z.shape == (9, 4) and labels.tolist() == [0, 0] + [2] * 7
    with pytest.raises(ValueError, match="entries"):
        space.split(np.zeros(3))


def test_surrogate_recovers_an_affine_map_and_reports_agreement():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(500, 6))
    a, b = rng.normal(size=(6, 6)), rng.normal(size=6)
    surrogate = RoundTripSurrogate.fit(x, x @ a + b, ridge=1e-9)
    assert surrogate.r2 > 0.999
    fresh = rng.normal(size=(100, 6))
    assert surrogate.agreement(fresh, fresh @ a + b) > 0.999
    assert surrogate.agreement(fresh, rng.normal(size=(100, 6))) < 0.1


def test_surrogate_data_refits_on_checks_and_forgets_later_generations_on_resume(tmp_path):
    from pcevolve.search.roundtrip import SurrogateData

    rng = np.random.default_rng(6)
    public = rng.normal(size=(200, 3))
    data = SurrogateData(public, public * 0.5, {})
    # The search's region behaves differently from the public pool: the refit must follow it.
    local = rng.normal(size=(400, 3)) + 4.0
    checked = data.with_check(0, local, -local).with_check(5, local + 1, -(local + 1))
    assert checked.fit().agreement(local, -local) > data.fit().agreement(local, -local) + 0.5
    assert sorted(checked.before(5).checked) == [0] and data.checked == {}  # immutable
    path = checked.save(tmp_path / "roundtrips.npz")
    loaded = SurrogateData.load(path)
    np.testing.assert_array_equal(loaded.fit().weights, checked.fit().weights)
    np.testing.assert_array_equal(loaded.before(5).fit().weights, checked.before(5).fit().weights)


def test_public_bandwidth_is_the_median_pair_distance():
    z = np.array([[0.0], [1.0], [3.0]])
    # pair distances 1, 2, 3 → median 2 (sampled pairs, so allow the sampling error)
    assert public_bandwidth(z, rng=np.random.default_rng(0)) == pytest.approx(2.0, abs=1e-9)
