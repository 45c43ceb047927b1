"""Downstream utility models (R7.1): the CNN learns an easy task, is seeded, and leaves global state alone;
the linear probe never looks at the test set."""

import numpy as np
import pytest
import torch

from pcevolve.evaluation import (
    classic_augmentation,
    classification_metrics,
    cnn_features,
    linear_probe,
    predict,
    small_cnn,
    train_cnn,
)


def _bars(n, seed):
    """8×8 grey images, 3 classes: bright top half, bright bottom half, bright middle columns; on noise."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    images = rng.integers(0, 60, (n, 8, 8)).astype(np.uint8)
    regions = [(slice(0, 4), slice(None)), (slice(4, 8), slice(None)), (slice(None), slice(2, 6))]
    for k, (rows, cols) in enumerate(regions):
        block = images[labels == k]
        block[:, rows, cols] += 150
        images[labels == k] = block
    return images, labels


@pytest.fixture(scope="module")
def bars():
    return _bars(300, 0), _bars(150, 1)


def test_cnn_learns_a_trivially_separable_task(bars):
    (x, y), (tx, ty) = bars
    model = train_cnn(x, y, classes=3, seed=0, epochs=2)
    assert not model.training
    assert classification_metrics(ty, predict(model, tx), 3).accuracy > 0.9
    assert cnn_features(model, tx[:5]).shape == (5, 128)


def test_cnn_with_classic_augmentation_learns_too(bars):
    (x, y), (tx, ty) = bars
    # The classes are vertical/horizontal bars, which a left-right flip and a 1 px shift keep apart.
    model = train_cnn(x, y, classes=3, seed=0, epochs=2, augment=True)
    assert classification_metrics(ty, predict(model, tx), 3).accuracy > 0.9


def test_cnn_is_deterministic_for_a_seed_and_restores_global_state(bars):
    (x, y), _ = bars
    x, y = x[:96], y[:96]
    before = (torch.are_deterministic_algorithms_enabled(), torch.get_num_threads())
    a = train_cnn(x, y, classes=3, seed=7, epochs=1, augment=True)
    b = train_cnn(x, y, classes=3, seed=7, epochs=1, augment=True)
    c = train_cnn(x, y, classes=3, seed=8, epochs=1, augment=True)
    assert (torch.are_deterministic_algorithms_enabled(), torch.get_num_threads()) == before
    for key, value in a.state_dict().items():
        assert torch.equal(value, b.state_dict()[key]), key
    assert not torch.equal(a[0].weight, c[0].weight)


def test_classic_augmentation_is_a_small_shift_and_an_optional_flip():
    image = torch.zeros(1, 1, 12, 12)
    image[0, 0, 6, 3] = 1.0  # one bright pixel, away from the border
    images = image.repeat(200, 1, 1, 1)
    generator = torch.Generator().manual_seed(0)
    shifted = classic_augmentation(images, generator=generator, flip=False)
    assert shifted.shape == images.shape
    rows, cols = np.nonzero(shifted[:, 0].sum(0).numpy())
    # max_shift(12×12) = 1: the pixel lands within 1 of (6, 3), and every offset occurs.
    assert set(rows.tolist()) == {5, 6, 7} and set(cols.tolist()) == {2, 3, 4}
    assert torch.equal(shifted.flatten(1).sum(1), torch.ones(200))  # moved, never blurred or lost
    flipped = classic_augmentation(images, generator=torch.Generator().manual_seed(0), flip=True)
    mirrored_cols = {12 - 1 - c for c in (2, 3, 4)}
    _, cols = np.nonzero(flipped[:, 0].sum(0).numpy())
    assert set(cols.tolist()) == {2, 3, 4} | mirrored_cols
    again = classic_augmentation(images, generator=torch.Generator().manual_seed(0), flip=True)
    assert torch.equal(flipped, again)


def test_small_cnn_and_train_cnn_validate_inputs():
    with pytest.raises(ValueError, match="at least 4×4"):
        small_cnn(2, channels=1, size=(3, 8), generator=torch.Generator().manual_seed(0))
    images = np.zeros((4, 8, 8), np.uint8)
    with pytest.raises(ValueError, match="labels must be in"):
        train_cnn(images, np.array([0, 1, 2, 3]), classes=3, seed=0, epochs=1)
    with pytest.raises(TypeError, match="uint8"):
        train_cnn(images.astype(np.float32), np.zeros(4, np.int64), classes=3, seed=0, epochs=1)


def _blobs(n, seed, dim=20):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, n)
    return rng.normal(size=(n, dim)) + 5.0 * np.eye(4, dim)[labels], labels  # centres 7σ apart


def test_linear_probe_separates_blobs_and_never_looks_at_the_test_set():
    x, y = _blobs(200, 0)
    tx, ty = _blobs(100, 1)
    predicted = linear_probe(x, y, tx)
    assert classification_metrics(ty, predicted, 4).accuracy > 0.9
    # Each test prediction depends on its own row only: predicting a subset, or a shuffled or
    # shifted test set, changes nothing for the rows it keeps.
    np.testing.assert_array_equal(linear_probe(x, y, tx[:7]), predicted[:7])
    np.testing.assert_array_equal(linear_probe(x, y, np.r_[tx[50:], tx[:50] + 100.0])[:50], predicted[50:])


def test_linear_probe_keeps_label_values_and_handles_tiny_classes():
    x, y = _blobs(40, 2)
    names = np.array([10, 20, 30, 40])[y]
    assert set(linear_probe(x, names, x).tolist()) <= {10, 20, 30, 40}
    # One sample in a class: no cross-validation possible, the fixed C = 1 is used.
    tiny_x, tiny_y = np.r_[x[:20], x[y == 3][:1]], np.r_[np.where(y[:20] == 3, 0, y[:20]), [3]]
    assert linear_probe(tiny_x, tiny_y, tiny_x).shape == (21,)
    with pytest.raises(ValueError, match="two classes"):
        linear_probe(x, np.zeros(40, np.int64), x)


def test_cnn_takes_rgb_images():
    images = np.random.default_rng(3).integers(0, 256, (32, 8, 8, 3), dtype=np.uint8)
    model = train_cnn(images, np.arange(32) % 2, classes=2, seed=0, epochs=1, augment=True)
    assert model[0].in_channels == 3
    assert predict(model, images).shape == (32,) and cnn_features(model, images).shape == (32, 128)


def test_images_larger_than_the_cnn_s_side_are_averaged_down_with_their_aspect_kept():
    from pcevolve.nets.small_cnn import cnn_input

    small = np.arange(2 * 40 * 30, dtype=np.uint8).reshape(2, 40, 30)
    np.testing.assert_allclose(cnn_input(small, max_side=64).numpy(), small[:, None] / 255.0, atol=1e-6)  # as is
    rgb = np.zeros((5, 256, 128, 3), dtype=np.uint8)
    rgb[:, :, :64, 0] = 204  # left half red
    view = cnn_input(rgb, max_side=64, chunk=2)  # chunks of 2: 2 + 2 + 1 images
    assert view.shape == (5, 3, 64, 32)
    np.testing.assert_allclose(view[:, 0, :, :16].numpy(), 0.8, atol=1e-6)
    assert float(view[:, :, :, 16:].abs().max()) == 0.0 and float(view[:, 1:].abs().max()) == 0.0


def test_the_cnn_trains_and_predicts_on_large_images_through_the_same_reduced_view():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 60)
    images = rng.integers(0, 60, (60, 160, 160, 3)).astype(np.uint8)
    images[labels == 0, :80] += 150  # class 0: bright top half; class 1: bright bottom half
    images[labels == 1, 80:] += 150
    model = train_cnn(images, labels, classes=2, seed=0, epochs=3)
    assert model[-1].out_features == 2 and model[7].in_features == 64 * 16 * 16  # it saw 64 × 64 inputs
    assert np.mean(predict(model, images) == labels) == 1.0
