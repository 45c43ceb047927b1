"""The public image decoder: dataset-shaped output, exact save/load, consistency learned, no private reads."""

import inspect

import numpy as np
import pydantic
import pytest
import torch
from sklearn.datasets import load_digits

from pcevolve.config import DecoderConfig
from pcevolve.decoders import (
    DECODERS,
    ConvImageDecoder,
    Decoder,
    build_decoder,
    load_decoder,
)
from pcevolve.encoders.reencode import reencode_check

FAST = DecoderConfig(public_images=480, epochs=10, batch_size=32, width=16, learning_rate=3e-3,
                     consistency_every=1, consistency_batch=8, feature_noise=0.1)


def _digits() -> np.ndarray:
    images = torch.from_numpy(load_digits().images[:, None].astype(np.float32) / 16.0)
    big = torch.nn.functional.interpolate(images, size=(28, 28), mode="bilinear", align_corners=False)
    return (big[:, 0].clamp(0, 1) * 255).round().to(torch.uint8).numpy()


@pytest.fixture(scope="module")
def digits():
    images = _digits()
    order = np.random.default_rng(0).permutation(len(images))
    return images[order[:480]], images[order[480:680]]


@pytest.fixture(scope="module")
def trained(encoder, digits):
    decoder = build_decoder(FAST, feature_dim=64, sample_shape=(28, 28), seed=0)
    result = decoder.fit(digits[0], encoder=encoder, seed=1)
    return decoder, result


def _features(encoder, images):
    return encoder.encode_both(images)[1]


def test_registry_and_protocol():
    assert DECODERS["conv"] is ConvImageDecoder
    decoder = build_decoder(DecoderConfig(), feature_dim=64, sample_shape=(28, 28), seed=0)
    assert isinstance(decoder, Decoder)
    with pytest.raises(KeyError, match="unknown decoder"):
        build_decoder(DecoderConfig(name="nope"), feature_dim=64, sample_shape=(28, 28), seed=0)
    assert DecoderConfig(training="dp").training == "dp"
    with pytest.raises(pydantic.ValidationError):
        DecoderConfig(training="private")


@pytest.mark.parametrize("shape", [(28, 28), (16, 16, 3), (30, 26)])
def test_decode_shape_dtype_and_mode(shape):
    decoder = build_decoder(FAST, feature_dim=64, sample_shape=shape, seed=0)
    feats = np.random.default_rng(0).normal(size=(5, 64)).astype(np.float32)
    out = decoder.decode(feats)
    assert out.dtype == np.uint8 and out.shape == (5, *shape)
    assert out.min() >= 0 and out.max() <= 255 and out.std() > 0
    assert decoder.decode(feats[:0]).shape == (0, *shape)
    assert np.array_equal(decoder.decode(feats, labels=np.zeros(5, np.int64)), out)
    with pytest.raises(ValueError, match="features"):
        decoder.decode(feats[:, :10])


def test_decoding_is_per_sample(trained):
    # GroupNorm, no BatchNorm: a sample's image never depends on the rest of the batch.
    decoder, _ = trained
    feats = np.random.default_rng(2).normal(size=(6, 64)).astype(np.float32)
    assert np.array_equal(decoder.decode(feats[:1]), decoder.decode(feats)[:1])


def test_save_load_round_trip(trained, tmp_path):
    decoder, _ = trained
    decoder.save(tmp_path / "dec")
    assert sorted(p.name for p in (tmp_path / "dec").iterdir()) == ["decoder.json", "decoder.safetensors"]
    again = load_decoder(tmp_path / "dec")
    assert isinstance(again, ConvImageDecoder) and again.config == decoder.config
    feats = np.random.default_rng(3).normal(size=(7, 64)).astype(np.float32)
    assert np.array_equal(again.decode(feats), decoder.decode(feats))


def test_training_result_and_determinism(trained, encoder, digits):
    decoder, result = trained
    assert result.steps == 10 * 15 and result.images == 480
    assert 0.0 < result.final_consistency <= 1.0 and result.total_seconds > 0
    twin = build_decoder(FAST.model_copy(update={"epochs": 1}), feature_dim=64, sample_shape=(28, 28), seed=0)
    other = build_decoder(FAST.model_copy(update={"epochs": 1}), feature_dim=64, sample_shape=(28, 28), seed=0)
    twin.fit(digits[0][:64], encoder=encoder, seed=5)
    other.fit(digits[0][:64], encoder=encoder, seed=5)
    for a, b in zip(twin.network.state_dict().values(), other.network.state_dict().values(), strict=True):
        assert torch.equal(a, b)


def test_fit_leaves_the_encoder_untouched(encoder, digits):
    before = {k: v.clone() for k, v in encoder.state_dict().items()}
    flags = [p.requires_grad for p in encoder.parameters()]
    encoder.train()
    decoder = build_decoder(FAST.model_copy(update={"epochs": 1}), feature_dim=64, sample_shape=(28, 28), seed=0)
    decoder.fit(digits[0][:64], encoder=encoder, seed=0)
    assert encoder.training
    encoder.eval()
    assert [p.requires_grad for p in encoder.parameters()] == flags
    assert all(p.grad is None for p in encoder.parameters())
    for key, value in encoder.state_dict().items():
        assert torch.equal(value, before[key]), key


def test_trained_decoder_is_consistent_on_held_out_data(trained, encoder, digits):
    decoder, _ = trained
    untrained = build_decoder(FAST, feature_dim=64, sample_shape=(28, 28), seed=0)
    feats = _features(encoder, digits[1])
    trained_cos = reencode_check(encoder, decoder.decode(feats), feats).cosine.mean()
    untrained_cos = reencode_check(encoder, untrained.decode(feats), feats).cosine.mean()
    unit = feats / np.linalg.norm(feats, axis=1, keepdims=True)
    between_real = (unit @ np.roll(unit, 1, axis=0).T).diagonal().mean()  # cosine of two different images
    # This tiny encoder's features all point roughly one way, so compare distances (1 - cosine):
    # training must cut the gap to the requested feature by more than half, and land closer to its
    # own feature than another real image does.
    assert 1 - trained_cos < 0.5 * (1 - untrained_cos), (trained_cos, untrained_cos)
    assert 1 - trained_cos < 0.5 * (1 - between_real), (trained_cos, between_real)
    # and it reconstructs: far closer in pixels to the images than the untrained decoder's output
    own = np.abs(decoder.decode(feats).astype(np.float32) - digits[1]).mean()
    untrained_mae = np.abs(untrained.decode(feats).astype(np.float32) - digits[1]).mean()
    assert own < 0.5 * untrained_mae, (own, untrained_mae)


def test_public_training_reads_no_files(monkeypatch, encoder, digits):
    # The training entry point takes arrays only, so it cannot name a private folder ...
    params = inspect.signature(ConvImageDecoder.fit).parameters
    assert list(params) == ["self", "public_samples", "encoder", "seed", "progress", "executor"]

    # ... and it opens no dataset or image file while training.
    def refuse(*args, **kwargs):
        raise AssertionError(f"decoder training tried to read data: {args}")

    import PIL.Image

    import pcevolve.data
    import pcevolve.data.image_folder

    for module, name in [(pcevolve.data, "read_image_folder"), (pcevolve.data, "read_unlabeled_images"),
                         (pcevolve.data.image_folder, "read_image_folder"),
                         (pcevolve.data.image_folder, "read_unlabeled_images"), (PIL.Image, "open"),
                         (np, "load")]:
        monkeypatch.setattr(module, name, refuse)
    decoder = build_decoder(FAST.model_copy(update={"epochs": 1}), feature_dim=64, sample_shape=(28, 28), seed=0)
    result = decoder.fit(digits[0][:64], encoder=encoder, seed=0)
    assert result.images == 64


def test_fit_validates_inputs(encoder, digits):
    decoder = build_decoder(FAST, feature_dim=64, sample_shape=(28, 28), seed=0)
    with pytest.raises(ValueError, match="uint8"):
        decoder.fit(digits[0].astype(np.float32), encoder=encoder, seed=0)
    wrong = build_decoder(FAST, feature_dim=32, sample_shape=(28, 28), seed=0)
    with pytest.raises(ValueError, match="64-d"):
        wrong.fit(digits[0], encoder=encoder, seed=0)
