"""Bounds: validation, clipping and the widened coarse box."""

import numpy as np
import pytest

from pcevolve.evolution import Bounds


def test_bounds_are_validated():
    with pytest.raises(ValueError, match="lower must be < upper"):
        Bounds(np.array([0.0, 1.0]), np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match="finite"):
        Bounds(np.array([0.0, -np.inf]), np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match="one shape"):
        Bounds(np.zeros(2), np.ones(3))
    with pytest.raises(ValueError, match="one shape"):
        Bounds(np.zeros(0), np.ones(0))


def test_bounds_copy_and_freeze_their_arrays():
    lower = np.zeros(3)
    bounds = Bounds(lower, np.ones(3))
    lower[0] = 5.0
    assert bounds.lower[0] == 0.0
    with pytest.raises(ValueError):
        bounds.lower[0] = 1.0


def test_clip_span_and_equality():
    bounds = Bounds(np.array([-1.0, 0.0]), np.array([1.0, 4.0]))
    np.testing.assert_array_equal(bounds.span, [2.0, 4.0])
    np.testing.assert_array_equal(bounds.clip(np.array([[-3.0, 2.0], [0.5, 9.0]])), [[-1.0, 2.0], [0.5, 4.0]])
    assert bounds == Bounds(np.array([-1.0, 0.0]), np.array([1.0, 4.0]))
    assert bounds != Bounds(np.array([-1.0, 0.0]), np.array([1.0, 5.0]))


def test_widened_scales_around_the_centre_and_contains_the_original():
    bounds = Bounds(np.array([0.0, -1.0]), np.array([2.0, 3.0]))
    wide = bounds.widened(3.0)
    np.testing.assert_allclose(wide.centre, bounds.centre)
    np.testing.assert_allclose(wide.span, 3.0 * bounds.span)
    assert wide.contains(np.stack([bounds.lower, bounds.upper]))
    assert bounds.widened(1.0) is bounds
    with pytest.raises(ValueError, match=">= 1"):
        bounds.widened(0.5)
