"""The image modality's parts (:data:`IMAGE`): image folders read at the config's size and mode, the backbone
encoder, class folders of PNGs written."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pcevolve.data import read_image_folder, read_unlabeled_images
from pcevolve.data.writers import write_image_folder
from pcevolve.encoders import ImageEncoder, build_encoder, train_representation
from pcevolve.modalities.base import Modality

if TYPE_CHECKING:
    from pcevolve.config import DataConfig


def image_shape(data: DataConfig) -> tuple[int, ...]:
    """``(size, size)`` for grey images, ``(size, size, 3)`` for colour: every image is read to this shape."""
    return (data.image_size, data.image_size) if data.image_mode == "L" else (data.image_size, data.image_size, 3)


IMAGE = Modality(
    name="image",
    layout=image_shape,
    sample_shape=lambda shape: shape,
    read_public=lambda data, _: read_unlabeled_images(data.public, size=data.image_size, mode=data.image_mode),
    read_private=lambda data, _: read_image_folder(data.private, size=data.image_size, mode=data.image_mode,
                                                   class_names=data.classes, min_per_class=0),
    build_encoder=lambda config, layout, seed: build_encoder(config.representation, seed=seed, sample_shape=layout),
    train_representation=train_representation,
    load_encoder=lambda folder: ImageEncoder.load(folder).eval(),
    delivered_name="synthetic",
    write_synthetic=lambda path, samples, labels, class_names, _, overwrite=False: write_image_folder(
        path, samples, labels, class_names, overwrite=overwrite),
    read_synthetic=lambda path, shape, class_names: read_image_folder(
        path, size=shape[0], mode="L" if len(shape) == 2 else "RGB", class_names=class_names, min_per_class=1),
)
