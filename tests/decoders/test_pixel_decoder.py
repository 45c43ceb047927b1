"""The pixel-view decoder: reads the image out of the feature's own pixel view, so it draws shapes no public image
showed; dataset-shaped output, exact save/load, public training only."""

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

from pcevolve.config import DecoderConfig, parse_config
from pcevolve.decoders import DECODERS, Decoder, PixelViewDecoder, build_decoder, load_decoder
from pcevolve.encoders import ImageEncoder
from pcevolve.encoders.pixel_view import PixelLayout
from pcevolve.encoders.reencode import reencode_check

FAST = DecoderConfig(name="pixel-view", public_images=400, epochs=4, batch_size=32, width=16, learning_rate=3e-3)


def _digits(side=28) -> np.ndarray:
    images = torch.from_numpy(load_digits().images[:, None].astype(np.float32) / 16.0)
    big = torch.nn.functional.interpolate(images, size=(side, side), mode="bilinear", align_corners=False)
    return (big[:, 0].clamp(0, 1) * 255).round().to(torch.uint8).numpy()


@pytest.fixture(scope="module")
def viewer():
    """A small real encoder that keeps a 14-pixel pixel view of 28-pixel images."""
    return ImageEncoder.pretrained("efficientnet-lite0", trainable_blocks=1, input_size=32, proj_hidden_dim=32,
                                   feature_dim=64, pixel_side=14, pixel_channels=1).eval()


@pytest.fixture(scope="module")
def digits():
    images = _digits()
    return {"ones": images[load_digits().target == 1], "rest": images[load_digits().target != 1][:400]}


@pytest.fixture(scope="module")
def trained(viewer, digits):
    decoder = build_decoder(FAST, feature_dim=viewer.feature_dim, sample_shape=(28, 28), seed=0)
    return decoder, decoder.fit(digits["rest"], encoder=viewer, seed=1)


def test_registry_protocol_and_nothing_to_train_under_dp():
    assert DECODERS["pixel-view"] is PixelViewDecoder
    assert isinstance(build_decoder(FAST, feature_dim=260, sample_shape=(28, 28), seed=0), Decoder)
    assert PixelViewDecoder.trainable_under_dp is False and PixelViewDecoder.modalities == ("image",)


def test_it_draws_a_shape_the_public_pool_never_showed(trained, viewer, digits):
    # Trained on every digit but 1, it still draws 1s: the shape comes from the feature, not from the training set.
    decoder, result = trained
    _, features = viewer.encode_both(digits["ones"])
    drawn = decoder.decode(features).astype(np.float64)
    real = digits["ones"].astype(np.float64)
    correlation = [np.corrcoef(a.ravel(), b.ravel())[0, 1] for a, b in zip(drawn, real, strict=True)]
    assert np.median(correlation) > 0.9, np.median(correlation)
    # ... and its images re-encode close to the features asked for.
    assert reencode_check(viewer, decoder.decode(features), features).cosine.mean() > 0.9
    assert result.steps == 4 * 13 and result.images == 400 and 0.9 < result.final_consistency <= 1.0


@pytest.mark.parametrize("shape", [(28, 28), (20, 24, 3)])
def test_decode_shape_dtype_labels_and_per_sample(shape):
    channels = shape[2] if len(shape) == 3 else 1
    encoder = ImageEncoder.pretrained("efficientnet-lite0", trainable_blocks=1, input_size=32, proj_hidden_dim=32,
                                      feature_dim=64, pixel_side=8, pixel_channels=channels).eval()
    images = np.random.default_rng(0).integers(0, 256, (40, *shape), dtype=np.uint8)
    decoder = build_decoder(FAST.model_copy(update={"epochs": 1}), feature_dim=encoder.feature_dim,
                            sample_shape=shape, seed=0)
    decoder.fit(images, encoder=encoder, seed=0)
    features = np.random.default_rng(1).normal(size=(5, encoder.feature_dim)).astype(np.float32)
    out = decoder.decode(features)
    assert out.dtype == np.uint8 and out.shape == (5, *shape)
    assert decoder.decode(features[:0]).shape == (0, *shape)
    assert np.array_equal(decoder.decode(features, labels=np.zeros(5, np.int64)), out)
    assert np.array_equal(decoder.decode(features[:1]), out[:1])
    with pytest.raises(ValueError, match="features"):
        decoder.decode(features[:, :10])
    with pytest.raises(ValueError, match="labels"):
        decoder.decode(features, labels=np.zeros(2, np.int64))


def test_save_load_round_trip(trained, tmp_path):
    decoder, _ = trained
    decoder.save(tmp_path / "dec")
    assert sorted(p.name for p in (tmp_path / "dec").iterdir()) == ["decoder.json", "decoder.safetensors"]
    again = load_decoder(tmp_path / "dec")
    assert isinstance(again, PixelViewDecoder) and again.config == decoder.config
    assert again.layout == decoder.layout == PixelLayout(offset=64, channels=1, side=14)
    assert again.brightness == decoder.brightness
    features = np.random.default_rng(3).normal(size=(7, decoder.feature_dim)).astype(np.float32)
    assert np.array_equal(again.decode(features), decoder.decode(features))


def test_training_is_deterministic_and_public_only(viewer, digits):
    twins = [build_decoder(FAST.model_copy(update={"epochs": 1}), feature_dim=viewer.feature_dim,
                           sample_shape=(28, 28), seed=0) for _ in range(2)]
    for decoder in twins:
        decoder.fit(digits["rest"][:64], encoder=viewer, seed=5)
    for a, b in zip(twins[0].network.state_dict().values(), twins[1].network.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert twins[0].brightness == twins[1].brightness


def test_it_refuses_what_it_cannot_do(viewer, digits, encoder):
    untrained = build_decoder(FAST, feature_dim=viewer.feature_dim, sample_shape=(28, 28), seed=0)
    with pytest.raises(RuntimeError, match="after fit"):
        untrained.decode(np.zeros((1, viewer.feature_dim), np.float32))
    with pytest.raises(ValueError, match="uint8"):
        untrained.fit(digits["rest"].astype(np.float32), encoder=viewer, seed=0)
    blind = build_decoder(FAST, feature_dim=encoder.feature_dim, sample_shape=(28, 28), seed=0)
    with pytest.raises(ValueError, match="pixel view"):
        blind.fit(digits["rest"], encoder=encoder, seed=0)  # an encoder without a pixel view


def test_the_config_refuses_dp_training_and_pixel_frequencies_it_cannot_have():
    with pytest.raises(ValueError, match="nothing to train under DP"):
        parse_config({"decoder": {"name": "pixel-view", "training": "public-then-dp"},
                      "privacy": {"split": {"decoder": 0.2, "release": 0.8}}}, source="<test>")
    for search, extra, message in [({"pixel_frequencies": 29}, {}, "more than the pixel view's side"),
                                   ({"pixel_frequencies": 8}, {"representation": {"pixel_view": 0}}, "pixel view"),
                                   ({"pixel_frequencies": 20}, {"data": {"image_size": 16}}, "more than")]:
        with pytest.raises(ValueError, match=message):
            parse_config({"search": search, **extra}, source="<test>")
    with pytest.raises(ValueError, match="representation.pixel_view above 0"):
        parse_config({"decoder": {"name": "pixel-view"}, "representation": {"pixel_view": 0}}, source="<test>")
    for search in ({"basis_dim": 16, "release_dim": 17}, {"basis_dim": 16, "pixel_frequencies": 2, "release_dim": 21}):
        with pytest.raises(ValueError, match="search.release_dim"):
            parse_config({"search": search}, source="<test>")
    assert parse_config({"search": {"basis_dim": 16, "pixel_frequencies": 2, "release_dim": 20}},
                        source="<test>").search.release_dim == 20
    config = parse_config({"search": {"pixel_frequencies": 14, "basis_dim": 16}}, source="<test>")
    assert config.basis_size == 16 + 14 * 14
    assert parse_config({"data": {"image_mode": "RGB"}, "search": {"pixel_frequencies": 4, "basis_dim": 8}},
                        source="<test>").basis_size == 8 + 3 * 16
