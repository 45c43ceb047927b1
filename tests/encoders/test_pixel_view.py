"""The pixel view's place in the search features and its fixed cosine basis (data-free low spatial frequencies)."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from pcevolve.encoders import ImageEncoder
from pcevolve.encoders.pixel_view import PixelLayout, cosine_matrix
from pcevolve.encoders.preprocess import pixel_view


def test_the_cosine_matrix_is_orthonormal_and_starts_with_the_constant():
    for size in (1, 5, 28):
        matrix = cosine_matrix(size)
        np.testing.assert_allclose(matrix @ matrix.T, np.eye(size), atol=1e-12)
        np.testing.assert_allclose(matrix[0], np.full(size, 1 / np.sqrt(size)))
    with pytest.raises(ValueError):
        cosine_matrix(0)


def test_the_layout_comes_from_the_encoder_and_none_without_a_pixel_view():
    assert PixelLayout.of(SimpleNamespace(feature_dim=64, pixel_side=0, pixel_channels=0)) is None
    layout = PixelLayout.of(SimpleNamespace(feature_dim=64, pixel_side=7, pixel_channels=3))
    assert layout == PixelLayout(offset=64, channels=3, side=7) and layout.size == 147


def test_the_block_read_back_is_the_encoders_own_pixel_view_at_unit_length():
    encoder = ImageEncoder.pretrained("efficientnet-lite0", trainable_blocks=1, input_size=32, proj_hidden_dim=32,
                                      feature_dim=64, pixel_side=12, pixel_channels=1).eval()
    images = np.random.default_rng(0).integers(0, 256, (5, 24, 24), dtype=np.uint8)
    _, features = encoder.encode_both(images)
    layout = PixelLayout.of(encoder.meta)
    expected = pixel_view(torch.from_numpy(images[:, None] / 255.0).float(), side=12).numpy()
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(layout.images(features).reshape(5, -1), expected, atol=1e-5)
    with pytest.raises(ValueError, match="pixel view"):
        layout.images(features[:, :100])


@pytest.mark.parametrize("channels", [1, 3])
def test_cosine_directions_are_orthonormal_live_in_the_pixel_block_and_hold_smooth_images_exactly(channels):
    layout = PixelLayout(offset=10, channels=channels, side=8)
    directions = layout.cosine_directions(3, feature_dim=10 + layout.size + 4)
    assert directions.shape == (10 + layout.size + 4, channels * 9)
    np.testing.assert_allclose(directions.T @ directions, np.eye(channels * 9), atol=1e-12)
    assert not directions[:10].any() and not directions[10 + layout.size:].any()
    # An image made of the three lowest frequencies per side is reproduced exactly by its coordinates.
    rng = np.random.default_rng(1)
    low = cosine_matrix(8)[:3]
    image = np.stack([low.T @ rng.normal(size=(3, 3)) @ low for _ in range(channels)])
    feature = np.concatenate([rng.normal(size=10), image.ravel(), rng.normal(size=4)])
    block = directions @ (directions.T @ feature)
    np.testing.assert_allclose(block[10 : 10 + layout.size], image.ravel(), atol=1e-12)
    # An image of higher frequencies only has no coordinates at all.
    high = cosine_matrix(8)[3:]
    fine = np.stack([high.T @ rng.normal(size=(5, 5)) @ high for _ in range(channels)])
    np.testing.assert_allclose(directions.T @ np.concatenate([np.zeros(10), fine.ravel(), np.zeros(4)]), 0,
                               atol=1e-12)


def test_cosine_directions_refuse_frequencies_the_view_does_not_have():
    layout = PixelLayout(offset=0, channels=1, side=8)
    for frequencies in (0, 9):
        with pytest.raises(ValueError, match="1..8"):
            layout.cosine_directions(frequencies, feature_dim=64)
    with pytest.raises(ValueError, match="cannot hold"):
        layout.cosine_directions(2, feature_dim=32)
