"""Images: class folders in, a pretrained backbone fine-tuned contrastively, class folders of PNGs out."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pcevolve.data import read_image_folder, read_unlabeled_images
from pcevolve.data.writers import write_image_folder
from pcevolve.encoders import ImageEncoder, build_encoder, train_representation
from pcevolve.modalities.base import Modality

if TYPE_CHECKING:
    from pcevolve.config import DataConfig


def image_shape(data: DataConfig) -> tuple[int, ...]:
    """``(size, size)`` for grey images, ``(size, size, 3)`` for colour: every image is read to this shape."""
    return (data.image_size, data.image_size) if data.image_mode == "L" else (data.image_size, data.image_size, 3)


def _write(folder: Path, samples: np.ndarray, labels: np.ndarray, class_names: tuple[str, ...],
           layout: tuple[int, ...]) -> Path:
    target = folder / "synthetic"
    write_image_folder(target, samples, labels, class_names)
    return target


IMAGE = Modality(
    name="image",
    noun="image",
    layout=image_shape,
    sample_shape=lambda shape: shape,
    read_public=lambda data, _: read_unlabeled_images(data.public, size=data.image_size, mode=data.image_mode),
    read_private=lambda data, _: read_image_folder(data.private, size=data.image_size, mode=data.image_mode),
    build_encoder=lambda config, layout, seed: build_encoder(config.representation, seed=seed, sample_shape=layout),
    train_representation=train_representation,
    load_encoder=lambda folder: ImageEncoder.load(folder).eval(),
    write_synthetic=_write,
)
