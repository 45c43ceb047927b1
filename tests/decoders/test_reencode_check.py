"""Re-encode check (SPEC R6.3): per-sample cosine and nearest-centroid class."""

import numpy as np
import pytest

from pcevolve.encoders.reencode import reencode_check


def _images(n, seed):
    return (np.random.default_rng(seed).random((n, 28, 28)) * 255).astype(np.uint8)


def test_real_images_against_their_own_features(encoder):
    images = _images(6, 0)
    feats = encoder.encode(images)
    check = reencode_check(encoder, images, feats, centroids=feats)
    np.testing.assert_allclose(check.cosine, 1.0, atol=1e-5)
    assert check.classes.tolist() == list(range(6))
    assert check.agreement(np.arange(6)) == 1.0
    assert check.reencoded.shape == (6, 64)


def test_cosine_matches_a_direct_computation_and_scale_is_ignored(encoder):
    images = _images(4, 1)
    requested = np.random.default_rng(2).normal(size=(4, 64)).astype(np.float32)
    check = reencode_check(encoder, images, requested * 7.0)
    again = encoder.encode(images)
    expected = (again * requested).sum(1) / np.linalg.norm(again, axis=1) / np.linalg.norm(requested, axis=1)
    np.testing.assert_allclose(check.cosine, expected, rtol=1e-5, atol=1e-6)
    assert check.classes is None
    with pytest.raises(ValueError, match="no centroids"):
        check.agreement(np.zeros(4))


def test_nearest_centroid_picks_the_closest_direction(encoder):
    images = _images(3, 3)
    feats = encoder.encode(images)
    centroids = np.stack([-feats[0], feats[0] * 3.0])  # same direction wins regardless of norm
    check = reencode_check(encoder, images[:1], feats[:1], centroids=centroids)
    assert check.classes.tolist() == [1]


def test_rejects_mismatched_inputs(encoder):
    images = _images(3, 4)
    with pytest.raises(ValueError, match="requested"):
        reencode_check(encoder, images, np.zeros((2, 64), np.float32))
    with pytest.raises(ValueError, match="centroids"):
        reencode_check(encoder, images, np.ones((3, 64), np.float32), centroids=np.ones((2, 5)))
