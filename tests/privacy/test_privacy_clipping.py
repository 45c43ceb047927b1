"""Per-sample clipping bounds every norm by C, and the releases really clip."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from privacy_helpers import ZeroNoise, roomy_ledger

from pcevolve.privacy import ClassStatisticsRelease, clip_rows, clip_rows_torch

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(
    x=arrays(np.float64, st.tuples(st.integers(1, 20), st.integers(1, 16)), elements=finite),
    bound=st.floats(min_value=1e-3, max_value=1e3),
)
def test_clipped_norms_never_exceed_the_bound(x, bound):
    clipped = clip_rows(x, bound)
    norms = np.linalg.norm(clipped, axis=1)
    assert np.all(norms <= bound)
    original = np.linalg.norm(x, axis=1)
    inside = original <= bound
    assert np.array_equal(clipped[inside], x[inside])  # rows within the bound are untouched
    outside = ~inside
    assert np.allclose(norms[outside], bound, rtol=1e-10)  # clipped rows land on the sphere ...
    cosine = np.sum(clipped[outside] * x[outside], axis=1) / (norms[outside] * original[outside])
    assert np.allclose(cosine, 1.0)  # ... in the same direction


def test_clipping_examples():
    x = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    clipped = clip_rows(x, 1.0)
    assert np.allclose(clipped[0], [0.6, 0.8])
    assert np.array_equal(clipped[1:], x[1:])
    with pytest.raises(ValueError):
        clip_rows(np.array([[np.nan, 1.0]]), 1.0)
    with pytest.raises(ValueError):
        clip_rows(np.ones(3), 1.0)
    with pytest.raises(ValueError):
        clip_rows(x, 0.0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_torch_clipping_matches_numpy_and_bounds_norms(dtype):
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(64, 3, 5, generator=generator, dtype=dtype) * 10
    x[0] = 0.0
    x[1] = 0.01
    clipped = clip_rows_torch(x, 1.5)
    assert clipped.shape == x.shape and clipped.dtype == dtype
    norms = torch.linalg.vector_norm(clipped.reshape(64, -1), dim=1)
    assert bool((norms <= 1.5).all())
    reference = clip_rows(x.reshape(64, -1).double().numpy(), 1.5)
    assert np.allclose(clipped.reshape(64, -1).double().numpy(), reference, rtol=1e-5, atol=1e-6)
    assert torch.equal(clipped[0], x[0]) and torch.equal(clipped[1], x[1])


def test_torch_clipping_is_differentiable():
    x = (torch.randn(4, 3) * 5).requires_grad_()
    clip_rows_torch(x, 1.0).sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad).all()


def test_class_statistics_release_clips_before_summing():
    # Huge feature vectors: without clipping the sums would be ~1e6; with it each record adds at most C.
    rng = np.random.default_rng(0)
    features = rng.normal(size=(40, 6)) * 1e6
    labels = np.repeat([0, 1], 20)
    release = ClassStatisticsRelease(num_classes=2, clip_norm=1.5, noise_multiplier=1.0,
                                     components=("count", "sum", "second_moment"))
    exact = release.release(features, labels, ledger=roomy_ledger(), stage="test", noise=ZeroNoise())
    clipped = clip_rows(features, 1.5)
    assert np.allclose(exact.sums, [clipped[:20].sum(0), clipped[20:].sum(0)])
    assert np.all(np.linalg.norm(exact.sums, axis=1) <= 20 * 1.5)
    assert np.allclose(exact.second_moments, [(clipped[:20] ** 2).sum(0), (clipped[20:] ** 2).sum(0)])
    assert np.array_equal(exact.counts, [20.0, 20.0])
