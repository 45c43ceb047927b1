"""The end-to-end audit's canaries and the private set they join (:mod:`pcevolve.audit.end_to_end`, steps 2–3).

:func:`design_canaries` makes the canary images from public inputs and a seeded generator only: each aimed along a
random released direction of the run's public basis through the encoder's pixel view (smooth random shapes for an
encoder without one), checked to differ from each other and from every public and private image.
:func:`write_audit_private_set` writes the neighbouring private set the audit run reads: a file-for-file copy of
the run's private class folders plus the canaries the coins included, as ``audit-canary-NNNN.png`` in their
classes' folders. Neither draws the coins: the caller passes them.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pcevolve.audit.canary_scores import copied_canaries
from pcevolve.config import RunConfig
from pcevolve.io import private_tree
from pcevolve.modalities import MODALITIES
from pcevolve.run_folder import RunFolder
from pcevolve.search.assembly import load_public_features
from pcevolve.search.basis import PublicBasis
from pcevolve.privacy.released_statistics import StatisticsRelease

_CANARY_PREFIX = "audit-canary-"


def design_canaries(folder: RunFolder, config: RunConfig, count: int, *, rng: np.random.Generator) -> np.ndarray:
    """``count`` distinct canary images in the run's image shape (uint8), from public inputs and ``rng`` only.

    Each is aimed along a random direction of the run's public basis (in its released directions): through the
    encoder's pixel view, the image's pixels follow the positive part of that direction's pixel component, so
    that the canary's reduced features point that way, at about the clip radius or beyond — farther out than noise
    images reach, whose features also all look alike (measured in docs/privacy.md §10.4).
    An encoder without a pixel view gets smooth random black-and-white shapes instead.

    Raises:
        ValueError: Two canaries came out equal, or one (near) equal to a public or private image (the patterns are
            continuous draws: practically never; checked because "a delivered copy means it was in" rests on it).
    """
    modality = MODALITIES.get_part(config.data.modality)
    shape = tuple(int(s) for s in modality.layout(config.data))
    meta = getattr(modality.load_encoder(folder.path / "encoder"), "meta", None)
    basis = load_public_features(folder).basis
    released = StatisticsRelease.load(folder.path / "release.npz").dim
    if meta is not None and meta.pixel_side > 0:
        images = np.stack([_aimed_canary(basis, meta.feature_dim, meta.pixel_side, meta.pixel_channels, released,
                                         shape, rng) for _ in range(count)])
    else:
        images = np.stack([_shape_canary(shape, rng) for _ in range(count)])
    if len({image.tobytes() for image in images}) != count:
        raise ValueError("two canaries came out equal; run the audit again (another canary seed)")
    for role, samples in (("public", modality.read_public(config.data, shape).samples),
                          ("private", modality.read_private(config.data, shape).samples)):
        if copied_canaries(images, samples).any():
            raise ValueError(f"a canary came out (nearly) equal to a {role} image; run the audit again (another "
                             "canary seed)")
    return images


def _aimed_canary(basis: PublicBasis, projection_dim: int, side: int, channels: int, released: int,
                  shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """One image whose pixel view follows the positive part of a random released basis direction."""
    weights = np.zeros(basis.dim)
    weights[:released] = rng.normal(size=released)
    direction = basis.directions @ (weights / np.linalg.norm(weights))
    pixels = direction[projection_dim:projection_dim + channels * side * side].reshape(channels, side, side)
    if pixels.max() <= 0:  # the direction's pixels are all dark: its opposite has the same norm
        pixels = -pixels
    image = np.clip(pixels / pixels.max(), 0.0, 1.0).transpose(1, 2, 0)  # (side, side, channels) in [0, 1]
    return _to_shape(image, shape)


def _shape_canary(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Smooth random black-and-white shapes: a coarse random field, upsampled and cut at its median."""
    channels = 1 if len(shape) == 2 else shape[2]
    coarse = rng.normal(size=(4, 4, channels))
    smooth = _upsample(coarse, shape[0], shape[1])
    image = (smooth > np.median(smooth, axis=(0, 1))).astype(np.float64)
    return _to_shape(image, shape)


def _upsample(values: np.ndarray, height: int, width: int) -> np.ndarray:
    """(h, w, c) → (height, width, c) by bilinear interpolation (a fixed public transform)."""
    h, w, _ = values.shape
    rows, cols = np.linspace(0, h - 1, height), np.linspace(0, w - 1, width)
    r0, c0 = np.floor(rows).astype(int), np.floor(cols).astype(int)
    r1, c1 = np.minimum(r0 + 1, h - 1), np.minimum(c0 + 1, w - 1)
    fr, fc = (rows - r0)[:, None, None], (cols - c0)[None, :, None]
    top = values[r0][:, c0] * (1 - fc) + values[r0][:, c1] * fc
    bottom = values[r1][:, c0] * (1 - fc) + values[r1][:, c1] * fc
    return top * (1 - fr) + bottom * fr


def _to_shape(image: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """(side, side, channels) in [0, 1] → uint8 in the run's image shape (nearest-neighbour resize: the pixel view
    averages the image back down to ``side``, so blocks keep its pattern)."""
    rows = np.minimum((np.arange(shape[0]) * image.shape[0]) // shape[0], image.shape[0] - 1)
    cols = np.minimum((np.arange(shape[1]) * image.shape[1]) // shape[1], image.shape[1] - 1)
    resized = image[rows][:, cols]
    resized = resized[:, :, 0] if len(shape) == 2 else np.broadcast_to(resized, shape)
    return np.round(resized * 255.0).astype(np.uint8)


def write_audit_private_set(source: Path, target: Path, images: np.ndarray, classes: np.ndarray,
                            class_names: Sequence[str], included: np.ndarray) -> Path:
    """The audit's private set at ``target``: a copy of the run's private class folders (file for file) plus the
    included canaries as PNGs named ``audit-canary-NNNN.png`` in their classes' folders.

    Raises:
        ValueError: ``target`` exists, or a private file already has a canary's name.
    """
    from PIL import Image

    if target.exists():
        raise ValueError(f"{target} exists; an audit writes its private set into a new folder")
    # The private files as they are (the audit run reads what the run read), without their modes: the copy is the
    # secure zone's, its owner's alone.
    shutil.copytree(source, target, copy_function=shutil.copyfile)
    for index in np.flatnonzero(included):
        folder = target / class_names[int(classes[index])]
        folder.mkdir(exist_ok=True)  # a declared class may have no private folder
        path = folder / f"{_CANARY_PREFIX}{index:04d}.png"
        if path.exists():
            raise ValueError(f"{source} already holds a file named {path.name}; the audit cannot add its canary")
        Image.fromarray(images[index]).save(path)  # uint8 (H, W) is read as grey, (H, W, 3) as colour
    private_tree(target)
    return target
