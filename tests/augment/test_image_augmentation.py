"""Image augmentations: shapes, ranges, determinism, and that each transform really changes images."""

import pytest
import torch

from pcevolve.augment import ImageAugmentation
from pcevolve.augment.image import color_jitter, random_blur, random_flip, random_resized_crop


def _images(n=16, channels=1, size=28, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, channels, size, size, generator=g)


@pytest.mark.parametrize("channels", [1, 3])
def test_shape_range_and_determinism(channels):
    images = _images(channels=channels)
    augment = ImageAugmentation(strength=0.5)
    a = augment(images, generator=torch.Generator().manual_seed(1))
    b = augment(images, generator=torch.Generator().manual_seed(1))
    c = augment(images, generator=torch.Generator().manual_seed(2))
    assert a.shape == images.shape and a.dtype == images.dtype
    assert a.min() >= 0 and a.max() <= 1
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_zero_strength_is_identity():
    images = _images()
    out = ImageAugmentation(strength=0.0)(images, generator=torch.Generator().manual_seed(0))
    assert torch.equal(out, images) and out is not images


def test_strength_scales_distortion():
    images = _images(n=64)
    def distortion(strength):
        out = ImageAugmentation(strength=strength)(images, generator=torch.Generator().manual_seed(0))
        return (out - images).abs().mean().item()
    assert distortion(0.1) < distortion(0.5) < distortion(1.0)


def test_flip_is_exact_mirror_or_identity():
    images = _images(n=64)
    out = random_flip(images, generator=torch.Generator().manual_seed(0))
    mirrored = torch.tensor([torch.equal(o, i.flip(-1)) for o, i in zip(out, images)])
    same = torch.tensor([torch.equal(o, i) for o, i in zip(out, images)])
    assert bool((mirrored | same).all())
    assert 10 < int(mirrored.sum()) < 54  # about half are flipped


def test_full_crop_of_constant_image_is_constant():
    images = torch.full((4, 1, 20, 20), 0.3)
    out = random_resized_crop(images, strength=1.0, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(out, images, atol=1e-6)


def test_crop_changes_structured_images():
    ramp = torch.linspace(0, 1, 28).repeat(28, 1)[None, None].repeat(8, 1, 1, 1)
    out = random_resized_crop(ramp, strength=1.0, generator=torch.Generator().manual_seed(0))
    assert (out - ramp).abs().mean() > 0.01


def test_jitter_keeps_range_and_changes_intensity():
    images = _images(n=32)
    out = color_jitter(images, strength=1.0, generator=torch.Generator().manual_seed(0))
    assert out.min() >= 0 and out.max() <= 1
    assert (out.mean(dim=(1, 2, 3)) - images.mean(dim=(1, 2, 3))).abs().max() > 0.01


def test_blur_smooths_and_preserves_mean_of_constant():
    images = _images(n=64)
    out = random_blur(images, strength=1.0, generator=torch.Generator().manual_seed(0))
    blurred = (out != images).flatten(1).any(dim=1)
    assert blurred.any() and not blurred.all()  # applied with probability 0.5
    # Blurring lowers the high-frequency energy (neighbour differences) of the images it touched.
    def roughness(x):
        return (x[..., 1:] - x[..., :-1]).abs().mean(dim=(1, 2, 3))
    assert bool((roughness(out[blurred]) < roughness(images[blurred])).all())
    constant = torch.full((4, 3, 10, 10), 0.7)
    blurred = random_blur(constant, strength=1.0, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(blurred, constant, atol=1e-6)


def test_rejects_bad_strength_and_shape():
    with pytest.raises(ValueError):
        ImageAugmentation(strength=1.5)
    with pytest.raises(ValueError):
        ImageAugmentation()(torch.rand(3, 28, 28), generator=torch.Generator())
