"""The in-task estimate: which of a pool looks like the task's classes, from the release's kernel mean embeddings."""

from __future__ import annotations

import numpy as np
import pytest

from pcevolve.privacy.statistics import NoisyClassStatistics, RandomFourierFeatures
from pcevolve.search.in_task import InTask, estimate_in_task, in_task_counts, two_gaussians
from pcevolve.search.pool_labels import PoolLabels
from pcevolve.search.territory import cut_territories

DIM = 4
TASK_CENTRES = np.array([[2.0, 0, 0, 0], [0, 2.0, 0, 0]])
OTHER_CENTRES = np.array([[-2.0, 0, 0, 0], [0, -2.0, 0, 0], [0, 0, 2.0, 0]])


def _cloud(centres: np.ndarray, per_centre: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    points = np.concatenate([c + 0.35 * rng.normal(size=(per_centre, DIM)) for c in centres])
    return points, np.repeat(np.arange(len(centres)), per_centre)


def _release(private: np.ndarray, labels: np.ndarray, rff: RandomFourierFeatures, *, noise: float,
             rng: np.random.Generator, with_rff: bool = True, with_moments: bool = False) -> NoisyClassStatistics:
    """Class statistics as the release makes them, with Gaussian noise of std ``noise`` on the random-feature sums
    (and, ``with_moments``, the class second moments Σ x xᵀ, noiseless)."""
    k = int(labels.max()) + 1
    counts = np.bincount(labels, minlength=k).astype(float)
    sums = np.stack([private[labels == c].sum(axis=0) for c in range(k)])
    features = rff.transform(private)
    rff_sums = np.stack([features[labels == c].sum(axis=0) for c in range(k)])
    moments = np.stack([private[labels == c].T @ private[labels == c] for c in range(k)]) if with_moments else None
    return NoisyClassStatistics(counts=counts, sums=sums, second_moments=moments,
                                rff_sums=rff_sums + noise * rng.normal(size=rff_sums.shape) if with_rff else None,
                                noise_stds={"count": 0.0, "sum": 0.0, "rff": noise})


def _posterior(pool: np.ndarray) -> np.ndarray:
    """A class model of the two task classes: the nearer of their axes."""
    posterior = np.zeros((len(pool), 2))
    posterior[np.arange(len(pool)), (pool[:, 1] > pool[:, 0]).astype(int)] = 1.0
    return posterior


@pytest.fixture(scope="module")
def rff() -> RandomFourierFeatures:
    return RandomFourierFeatures.draw(DIM, 256, bandwidth=2.0, rng=np.random.default_rng(1))


def test_two_gaussians_recovers_a_clear_mixture() -> None:
    rng = np.random.default_rng(0)
    scores = np.concatenate([rng.normal(-1.0, 0.2, 3000), rng.normal(1.0, 0.3, 7000)])
    weights, means, _, upper = two_gaussians(scores)
    assert weights[1] == pytest.approx(0.7, abs=0.01)
    assert means[0] == pytest.approx(-1.0, abs=0.05) and means[1] == pytest.approx(1.0, abs=0.05)
    assert np.mean(upper[3000:] > 0.5) > 0.99 and np.mean(upper[:3000] > 0.5) < 0.01


@pytest.mark.parametrize(("with_rff", "with_moments"), [(True, False), (False, False), (True, True)],
                         ids=["kernel", "kernel-at-means", "class-gaussians"])
def test_a_broad_pool_is_split_into_the_task_and_the_rest(rff: RandomFourierFeatures, with_rff: bool,
                                                          with_moments: bool) -> None:
    rng = np.random.default_rng(2)
    private, labels = _cloud(TASK_CENTRES, 100, rng)
    task, _ = _cloud(TASK_CENTRES, 600, rng)  # 1,200 pool points of the task's two classes
    other, _ = _cloud(OTHER_CENTRES, 600, rng)  # 1,800 of three kinds the private samples never show
    pool = np.concatenate([task, other])
    release = _release(private, labels, rff, noise=1.0, rng=rng, with_rff=with_rff, with_moments=with_moments)
    estimate = estimate_in_task(release, rff, pool, _posterior(pool))
    assert estimate.separated
    assert estimate.share == pytest.approx(0.4, abs=0.05)
    assert np.mean(estimate.inside[:1200]) > 0.95 and np.mean(estimate.inside[1200:]) < 0.05
    assert estimate.set_aside == pytest.approx(1800, abs=100)
    assert estimate.mass == pytest.approx([600, 600], abs=60)
    assert "about 40% of it looks like your classes" in estimate.line("image")


@pytest.mark.parametrize("with_moments", [False, True], ids=["kernel", "class-gaussians"])
def test_a_pool_of_the_task_alone_is_taken_whole(rff: RandomFourierFeatures, with_moments: bool) -> None:
    """Nothing gets worse when the pool holds only the task's classes: no split, nothing set aside."""
    rng = np.random.default_rng(3)
    private, labels = _cloud(TASK_CENTRES, 100, rng)
    pool, _ = _cloud(TASK_CENTRES, 1500, rng)
    estimate = estimate_in_task(_release(private, labels, rff, noise=1.0, rng=rng, with_moments=with_moments), rff,
                                pool, _posterior(pool))
    assert not estimate.separated and estimate.share == 1.0 and estimate.set_aside == 0
    assert "no part of it stands apart from your classes, so nothing is set aside" in estimate.line("image")


@pytest.mark.parametrize(("private_per_class", "pool_per_kind", "noise"), [(100, 600, 1e5), (30, 100, 1.0)],
                         ids=["release-swamped-by-noise", "pool-too-small"])
def test_a_split_that_cannot_be_trusted_sets_nothing_aside(rff: RandomFourierFeatures, private_per_class: int,
                                                           pool_per_kind: int, noise: float) -> None:
    """Score differences within the release's own noise, or a few hundred scores, give no split to believe: the pool
    stays whole, as before the estimate existed."""
    rng = np.random.default_rng(4)
    private, labels = _cloud(TASK_CENTRES, private_per_class, rng)
    pool = np.concatenate([_cloud(TASK_CENTRES, pool_per_kind, rng)[0], _cloud(OTHER_CENTRES, pool_per_kind, rng)[0]])
    estimate = estimate_in_task(_release(private, labels, rff, noise=noise, rng=rng), rff, pool, _posterior(pool))
    assert not estimate.separated and estimate.set_aside == 0


def test_the_delivered_count_follows_the_in_task_mass() -> None:
    assert in_task_counts(np.array([1000, 1000]), np.array([300.0, 2500.0]), fraction=1.0).tolist() == [300, 1000]
    assert in_task_counts(np.array([1000, 1000]), np.array([300.0, 0.2]), fraction=0.5).tolist() == [150, 1]


def test_territories_are_cut_from_the_in_task_part_only() -> None:
    posterior = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.2, 0.8], [0.1, 0.9]])
    labels = PoolLabels(posterior=posterior, confidence=posterior.max(axis=1), labeller="class-model")
    coordinates = np.arange(10.0).reshape(5, 2)
    inside = np.array([False, True, True, True, False])
    territories = cut_territories(coordinates, labels, np.array([2, 2]), eligible=inside)
    assert [m.tolist() for m in territories.members] == [[1, 2], [3]]
    whole = cut_territories(coordinates, labels, np.array([2, 2]))
    assert [m.tolist() for m in whole.members] == [[0, 1], [3, 4]]
    # A class none of whose assigned points is in the task borrows its most likely in-task point.
    only = cut_territories(coordinates, labels, np.array([1, 1]), eligible=np.array([True, True, False, False,
                                                                                      False]))
    assert [m.tolist() for m in only.members] == [[0], [1]]


def test_everything_is_the_old_behaviour() -> None:
    whole = InTask.everything(np.full((7, 2), 0.5))
    assert whole.share == 1.0 and whole.set_aside == 0 and whole.inside.all() and whole.mass.tolist() == [3.5, 3.5]

