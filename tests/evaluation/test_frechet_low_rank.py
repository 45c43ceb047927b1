"""The Fréchet distance's two routes (d × d covariance square root; n × m cross-Gram nuclear norm) agree."""

import numpy as np
import pytest

from pcevolve.evaluation import frechet_distance


def _by_covariances(x, y):
    # The textbook route, always through the d × d matrices: Σ √eig(Σx^{1/2} Σy Σx^{1/2}).
    cov_x, cov_y = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    values, vectors = np.linalg.eigh(cov_x)
    root = (vectors * np.sqrt(np.clip(values, 0, None))) @ vectors.T
    middle = root @ cov_y @ root
    cross = np.sqrt(np.clip(np.linalg.eigvalsh((middle + middle.T) / 2), 0, None)).sum()
    return ((x.mean(0) - y.mean(0)) ** 2).sum() + np.trace(cov_x) + np.trace(cov_y) - 2 * cross


@pytest.mark.parametrize("n, m", [(12, 20), (20, 12), (7, 7)])
def test_low_rank_route_matches_the_covariance_route(n, m):
    rng = np.random.default_rng(n * 100 + m)
    x = rng.normal(size=(n, 30)) @ rng.normal(size=(30, 30))
    y = rng.normal(0.5, 1.0, size=(m, 30)) @ rng.normal(size=(30, 30))
    assert frechet_distance(x, y) == pytest.approx(_by_covariances(x, y), rel=1e-7)


def test_low_rank_route_by_hand_in_one_sample_pair():
    # Two points per side in 3-D: each covariance is rank one, Σ = v vᵀ / 1 with v = (p − q)/√2 …
    # (ddof 1: v = p − q, /2).
    x = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])  # Σx = diag(2, 0, 0), mean (1, 0, 0)
    y = np.array([[0.0, 0.0, 0.0], [0.0, 4.0, 0.0]])  # Σy = diag(0, 8, 0), mean (0, 2, 0)
    # Σx Σy = 0 → cross term 0; distance = |μx − μy|² + tr Σx + tr Σy = (1 + 4) + 2 + 8.
    assert frechet_distance(x, y) == pytest.approx(15.0)
