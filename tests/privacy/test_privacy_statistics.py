"""Per-class statistic releases: the stated sensitivity holds (checked on neighbours) and the noise has its scale."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from privacy_helpers import ZeroNoise, roomy_ledger

from pcevolve.privacy import (
    BudgetLedger,
    ClassStatisticsRelease,
    GaussianRelease,
    NoisyClassStatistics,
    RandomFourierFeatures,
    account,
)

DIM = 4
RFF = RandomFourierFeatures.draw(DIM, 64, bandwidth=1.5, rng=np.random.default_rng(123))
ALL = ("count", "sum", "second_moment", "rff")


def exact(release, features, labels):
    out = release.release(features, labels, ledger=roomy_ledger(release.neighbouring), stage="test",
                          noise=ZeroNoise())
    parts = {"count": out.counts, "sum": out.sums, "rff": out.rff_sums}
    if "second_moment" in release.components:
        second = out.second_moments
        if release.second_moment == "full":
            second = second[:, *np.triu_indices(DIM)]
        parts["second_moment"] = second
    return {c: np.asarray(parts[c], dtype=np.float64) for c in release.components}


def rescaled_distance_sq(release, a, b):
    """Σ_c ‖a_c − b_c‖² / s_c²: the squared sensitivity of the unit-noise release on this pair."""
    stds = release.noise_stds()
    return sum(float(np.sum((a[c] - b[c]) ** 2)) / stds[c] ** 2 for c in release.components)


def make_release(neighbouring, components=ALL, second_moment="diagonal", shares=None):
    return ClassStatisticsRelease(num_classes=3, clip_norm=0.8, noise_multiplier=1.7, components=components,
                                  second_moment=second_moment, rff=RFF, shares=shares, neighbouring=neighbouring)


records = st.tuples(
    st.lists(st.floats(-50, 50), min_size=DIM, max_size=DIM),
    st.integers(0, 2),
)
component_sets = st.sampled_from([ALL, ("count", "sum"), ("sum",), ("second_moment", "rff"), ("count",)])


@settings(max_examples=120, deadline=None)
@given(extra=records, components=component_sets, second=st.sampled_from(["diagonal", "full"]), seed=st.integers(0, 99))
def test_add_remove_sensitivity_holds(extra, components, second, seed):
    release = make_release("add_remove", components, second)
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=(12, DIM)) * 3, rng.integers(0, 3, 12)
    record, label = np.array([extra[0]]), np.array([extra[1]])
    d = exact(release, x, y)
    d_prime = exact(release, np.vstack([x, record]), np.concatenate([y, label]))
    assert rescaled_distance_sq(release, d, d_prime) <= (1 / release.noise_multiplier) ** 2 * (1 + 1e-9)


@settings(max_examples=120, deadline=None)
@given(new=records, components=component_sets, second=st.sampled_from(["diagonal", "full"]), seed=st.integers(0, 99),
       index=st.integers(0, 11))
def test_replace_one_sensitivity_holds(new, components, second, seed, index):
    release = make_release("replace_one", components, second)
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=(12, DIM)) * 3, rng.integers(0, 3, 12)
    x2, y2 = x.copy(), y.copy()
    x2[index], y2[index] = new[0], new[1]
    d, d_prime = exact(release, x, y), exact(release, x2, y2)
    assert rescaled_distance_sq(release, d, d_prime) <= (1 / release.noise_multiplier) ** 2 * (1 + 1e-9)


def test_add_remove_bound_is_attained_by_an_axis_aligned_large_record():
    # Tightness: the stated sensitivity is not loose for the worst record (norm ≥ C, one non-zero coordinate).
    release = make_release("add_remove")
    x, y = np.random.default_rng(0).normal(size=(10, DIM)), np.zeros(10, dtype=int)
    worst = np.array([[100.0, 0.0, 0.0, 0.0]])
    d, d_prime = exact(release, x, y), exact(release, np.vstack([x, worst]), np.append(y, 1))
    assert rescaled_distance_sq(release, d, d_prime) == pytest.approx(1 / release.noise_multiplier**2, rel=1e-9)


def test_replace_one_class_change_attains_the_bound_for_counts_and_sums():
    release = make_release("replace_one", ("count", "sum"))
    x, y = np.array([[5.0, 0, 0, 0], [1.0, 1, 0, 0]]), np.array([0, 2])
    moved = exact(release, np.array([[-5.0, 0, 0, 0], [1.0, 1, 0, 0]]), np.array([1, 2]))
    assert rescaled_distance_sq(release, exact(release, x, y), moved) == pytest.approx(
        1 / release.noise_multiplier**2, rel=1e-9)


def test_replace_one_same_class_sum_attains_the_bound():
    release = make_release("replace_one", ("sum",))
    a = exact(release, np.array([[5.0, 0, 0, 0]]), np.array([0]))
    b = exact(release, np.array([[-5.0, 0, 0, 0]]), np.array([0]))
    assert rescaled_distance_sq(release, a, b) == pytest.approx(1 / release.noise_multiplier**2, rel=1e-9)
    # Replace-one needs twice the noise of add/remove for a lone sum (sensitivity 2C vs C).
    assert release.noise_stds()["sum"] == pytest.approx(2 * make_release("add_remove", ("sum",)).noise_stds()["sum"])


def test_one_ledger_event_for_all_classes_and_components():
    ledger = BudgetLedger(8.0, 1e-5, {"release": 5.0}, reproducible_noise=True)
    release = ClassStatisticsRelease.calibrated(5.0, 1e-5, num_classes=10, clip_norm=1.0, components=ALL, rff=RFF)
    x, y = np.random.default_rng(1).normal(size=(200, DIM)), np.arange(200) % 10
    out = release.release(x, y, ledger=ledger, stage="release", noise=np.random.default_rng(2))
    assert len(ledger.history) == 1
    assert ledger.history[0].event == GaussianRelease(release.noise_multiplier)
    assert ledger.spent("release") <= 5.0
    assert account([release.event], delta=1e-5).epsilon <= 5.0
    assert out.counts.shape == (10,) and out.sums.shape == (10, DIM)
    assert out.second_moments.shape == (10, DIM) and out.rff_sums.shape == (10, RFF.num_features)


def test_noise_of_each_component_has_the_stated_std():
    # Many classes, no records: the release is pure noise, so its spread is the noise std.
    release = ClassStatisticsRelease(num_classes=3000, clip_norm=2.0, noise_multiplier=0.9, components=ALL, rff=RFF,
                                     shares={"count": 0.1, "sum": 0.4, "second_moment": 0.2, "rff": 0.3})
    out = release.release(np.zeros((0, DIM)), np.zeros(0, dtype=int), ledger=roomy_ledger(), stage="test",
                          noise=np.random.default_rng(3))
    stds = release.noise_stds()
    # s_c = z · a_c / √w_c under add/remove.
    assert stds["count"] == pytest.approx(0.9 * 1 / math.sqrt(0.1))
    assert stds["sum"] == pytest.approx(0.9 * 2.0 / math.sqrt(0.4))
    assert stds["second_moment"] == pytest.approx(0.9 * 4.0 / math.sqrt(0.2))
    assert stds["rff"] == pytest.approx(0.9 * 1 / math.sqrt(0.3))
    for name, values in (("count", out.counts), ("sum", out.sums), ("second_moment", out.second_moments),
                         ("rff", out.rff_sums)):
        n = values.size
        assert abs(values.std() - stds[name]) < 5 * stds[name] / math.sqrt(2 * n), name


def test_full_second_moment_is_symmetric_and_exact_without_noise():
    release = make_release("add_remove", ("second_moment",), "full")
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(20, DIM)), rng.integers(0, 3, 20)
    out = release.release(x, y, ledger=roomy_ledger(), stage="test", noise=ZeroNoise())
    from pcevolve.privacy import clip_rows

    clipped = clip_rows(x, 0.8)
    for k in range(3):
        assert np.allclose(out.second_moments[k], clipped[y == k].T @ clipped[y == k])
    noisy = release.release(x, y, ledger=roomy_ledger(), stage="test", noise=rng)
    assert np.allclose(noisy.second_moments, np.transpose(noisy.second_moments, (0, 2, 1)))


def test_means_are_post_processing_of_the_noisy_release():
    release = make_release("add_remove", ("count", "sum", "rff"))
    x, y = np.ones((6, DIM)) * 0.1, np.array([0, 0, 0, 1, 1, 1])
    out = release.release(x, y, ledger=roomy_ledger(), stage="test", noise=ZeroNoise())
    assert np.allclose(out.means()[0], 0.1)
    assert np.allclose(out.means()[2], 0.0)  # empty class: count clamped to min_count
    assert np.allclose(np.linalg.norm(out.rff_means()[0]), 1.0)
    with pytest.raises(ValueError):
        out.second_moment_means()


def test_rff_rows_are_unit_vectors_and_approximate_the_kernel():
    rff = RandomFourierFeatures.draw(3, 4000, bandwidth=2.0, rng=np.random.default_rng(5))
    x = np.random.default_rng(6).normal(size=(5, 3)) * 3
    psi = rff.transform(x)
    assert np.allclose(np.linalg.norm(psi, axis=1), 1.0)
    kernel = np.exp(-np.sum((x[:, None] - x[None]) ** 2, axis=-1) / (2 * 2.0**2))
    assert np.all(np.abs(psi @ psi.T - kernel) < 5 / math.sqrt(4000))


def test_bad_inputs_are_refused_before_charging():
    release = make_release("add_remove", ("count", "sum"))
    ledger = roomy_ledger()
    for features, labels in ((np.ones((3, DIM)), np.array([0, 1, 3])),
                             (np.ones((3, DIM)), np.array([0.0, 1.0, 1.0])),
                             (np.ones((3, DIM)), np.array([0, 1])),
                             (np.full((2, DIM), np.nan), np.array([0, 1])),
                             (np.ones(DIM), np.array([0]))):
        with pytest.raises(ValueError):
            release.release(features, labels, ledger=ledger, stage="test", noise=np.random.default_rng(0))
    assert ledger.history == ()
    with pytest.raises(ValueError):
        ClassStatisticsRelease(num_classes=2, clip_norm=1.0, noise_multiplier=1.0, components=("rff",))
    with pytest.raises(ValueError):
        ClassStatisticsRelease(num_classes=2, clip_norm=1.0, noise_multiplier=1.0, components=("sum",),
                               shares={"sum": 0.5})
    with pytest.raises(ValueError):
        ClassStatisticsRelease(num_classes=2, clip_norm=1.0, noise_multiplier=1.0, components=("mean",))


def test_class_sizes_are_equal_unless_the_counts_spread_more_than_their_noise_explains():
    def sizes(counts, std):
        return NoisyClassStatistics(counts=np.array(counts, dtype=float), sums=None, second_moments=None,
                                    rff_sums=None, noise_stds={"count": std}).class_sizes()

    # Five classes of 10 behind noise of std 58: a spread of this size is noise 1 time in 4 — equal sizes.
    assert np.allclose(sizes([-66.7, -40.8, 79.4, 0.3, 126.6], 57.8), 19.76)
    # Clearly unequal classes (the spread is 12 times the noise's): shrunk towards the mean, still unequal.
    uneven = sizes([1000.0, 100.0, 100.0, 100.0, 100.0], 20.0)
    assert uneven[0] > 900 and np.allclose(uneven[1:], uneven[1]) and uneven[1] < 150
    # No recorded noise: the counts as they are (at least 1).
    assert sizes([3.0, 0.2], 0.0).tolist() == [3.0, 1.0]
