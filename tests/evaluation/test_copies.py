"""Copy check (R7.4, R7.6): finds planted copies, flags nothing on independent data."""

import numpy as np
import pytest

from pcevolve.evaluation import copy_check, find_near_copies, nearest_neighbours


def _images(n, seed):
    return np.random.default_rng(seed).integers(0, 256, (n, 8, 8), dtype=np.uint8)


def test_nearest_neighbours_match_brute_force():
    rng = np.random.default_rng(0)
    q, r = rng.normal(size=(30, 5)), rng.normal(size=(40, 5))
    index, distance = nearest_neighbours(q, r)
    brute = np.linalg.norm(q[:, None] - r[None], axis=2)
    np.testing.assert_array_equal(index, brute.argmin(1))
    np.testing.assert_allclose(distance, brute.min(1), rtol=1e-12)
    loo_index, loo_distance = nearest_neighbours(r, r, exclude_self=True)
    np.fill_diagonal(brute := np.linalg.norm(r[:, None] - r[None], axis=2), np.inf)
    np.testing.assert_array_equal(loo_index, brute.argmin(1))
    np.testing.assert_allclose(loo_distance, brute.min(1), rtol=1e-12)


def test_planted_copies_are_found_exactly_on_uint8_images():
    private = _images(50, 1)
    synthetic = _images(40, 2)
    synthetic[[3, 17]] = private[[8, 41]]
    near = synthetic.copy()
    near[25] = private[5]
    near[25, 0, 0] ^= 1  # one pixel off by one grey level
    check = copy_check(synthetic, private)
    assert check.nearest_index[[3, 17]].tolist() == [8, 41]
    assert check.nearest_distance[[3, 17]].tolist() == [0.0, 0.0]
    assert check.near_copies(0.0).tolist() == [3, 17]
    assert find_near_copies(synthetic, private, 0.0).tolist() == [3, 17]
    assert find_near_copies(near, private, 1.0).tolist() == [3, 17, 25]
    js = check.to_json()
    assert js["exact_copies"] == 2 and js["candidates"] == 40
    assert js["candidate_to_private"]["min"] == 0.0


def test_independent_data_flags_nothing():
    private, synthetic = _images(60, 3), _images(80, 4)
    check = copy_check(synthetic, private)
    # Two random 8×8 images are √(64·2·(256² − 1)/12) ≈ 836 grey levels apart on average; the nearest of
    # 60 is still > 600, far above any copy threshold.
    assert check.nearest_distance.min() > 500
    assert find_near_copies(synthetic, private, 50.0).size == 0
    assert check.to_json()["exact_copies"] == 0
    assert 0.0 <= check.closer_than_private_fraction() <= 0.1


def test_bad_inputs():
    with pytest.raises(ValueError, match="threshold"):
        find_near_copies(_images(2, 0), _images(2, 1), -1.0)
    with pytest.raises(ValueError, match="values per sample"):
        nearest_neighbours(np.zeros((2, 3)), np.zeros((2, 4)))
