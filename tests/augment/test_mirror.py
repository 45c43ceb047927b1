"""The public test that decides whether mirrored images are fair training copies (``augment.flip``)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits

from pcevolve.augment.mirror import MIN_SHARE, MirrorTest, mirror_advice, mirror_test


def l_shapes(count: int, *, mirrored_share: float, rng: np.random.Generator) -> np.ndarray:
    """24-pixel images of an L (a vertical bar with a foot to the right) of random place and size; the given
    share of them mirrored (foot to the left)."""
    images = np.zeros((count, 24, 24), np.uint8)
    for image in images:
        x, top = rng.integers(3, 12), rng.integers(2, 8)
        bottom, foot = rng.integers(top + 8, 21), rng.integers(5, 10)
        image[top:bottom + 1, x:x + 2] = 255
        image[bottom - 1:bottom + 1, x:x + foot] = 255
    flipped = rng.random(count) < mirrored_share
    images[flipped] = images[flipped][:, :, ::-1]
    return images


def test_a_kind_seen_both_ways_is_symmetric_and_one_facing_one_way_is_not() -> None:
    rng = np.random.default_rng(0)
    both_ways = mirror_test(l_shapes(1500, mirrored_share=0.5, rng=rng), rng=np.random.default_rng(1))
    one_way = mirror_test(l_shapes(1500, mirrored_share=0.0, rng=rng), rng=np.random.default_rng(1))
    assert both_ways.queries == one_way.queries == 500
    assert both_ways.share > 0.4 and both_ways.symmetric
    assert one_way.share < 0.02 and not one_way.symmetric


def test_handwritten_digits_are_oriented_and_colour_images_are_read() -> None:
    digits = (load_digits().images * 16).clip(0, 255).astype(np.uint8)
    assert mirror_test(digits, rng=np.random.default_rng(0)).share < MIN_SHARE
    # The same digits in colour: the channels are compared together, the verdict is the same.
    colour = np.repeat(digits[..., None], 3, axis=3)
    assert not mirror_test(colour, rng=np.random.default_rng(0)).symmetric


def test_the_draw_is_the_seed_s_and_bad_input_is_refused() -> None:
    images = l_shapes(200, mirrored_share=0.5, rng=np.random.default_rng(2))
    assert mirror_test(images, rng=np.random.default_rng(3)) == mirror_test(images, rng=np.random.default_rng(3))
    with pytest.raises(ValueError, match="uint8"):
        mirror_test(images.astype(np.float32), rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="at least 10"):
        mirror_test(images[:5], rng=np.random.default_rng(0))


def test_the_advice_names_the_setting_only_for_an_oriented_kind() -> None:
    assert mirror_advice(MirrorTest(share=MIN_SHARE, queries=500)) is None
    advice = mirror_advice(MirrorTest(share=0.04, queries=500))
    assert advice is not None and "4% of 500" in advice and "augment.flip: false" in advice
