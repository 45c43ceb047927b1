"""The image modality's parts (:data:`IMAGE`): image folders read at the config's size and mode, the backbone
encoder, class folders of PNGs written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.data import LabeledDataset, read_image_folder, read_unlabeled_images
from pcevolve.data.writers import write_image_folder
from pcevolve.encoders import ImageEncoder, build_encoder, train_representation
from pcevolve.modalities.base import Modality

if TYPE_CHECKING:
    from pcevolve.config import DataConfig, RunConfig


def image_shape(data: DataConfig) -> tuple[int, ...]:
    """``(size, size)`` for grey images, ``(size, size, 3)`` for colour: every image is read to this shape."""
    return (data.image_size, data.image_size) if data.image_mode == "L" else (data.image_size, data.image_size, 3)


class ImageModality(Modality[tuple[int, ...]]):
    """Images: the layout is the shape every image is read to."""

    name = "image"
    delivered_name = "synthetic"

    def layout(self, data: DataConfig) -> tuple[int, ...]:
        return image_shape(data)

    def sample_shape(self, layout: tuple[int, ...]) -> tuple[int, ...]:
        return layout

    def read_public(self, data: DataConfig, layout: tuple[int, ...]) -> Any:
        return read_unlabeled_images(data.public, size=data.image_size, mode=data.image_mode)

    def read_private(self, data: DataConfig, layout: tuple[int, ...]) -> LabeledDataset:
        return read_image_folder(data.private, size=data.image_size, mode=data.image_mode, class_names=data.classes,
                                 min_per_class=0)

    def build_encoder(self, config: RunConfig, layout: tuple[int, ...], seed: int) -> Any:
        return build_encoder(config.representation, seed=seed, sample_shape=layout)

    def train_representation(self, encoder: Any, private_samples: np.ndarray, public: np.ndarray | None,
                             **settings: Any) -> Any:
        return train_representation(encoder, private_samples, public, **settings)

    def load_encoder(self, folder: Path) -> Any:
        return ImageEncoder.load(folder).eval()

    def write_synthetic(self, path: Path, samples: np.ndarray, labels: np.ndarray, class_names: Sequence[Any],
                        layout: tuple[int, ...], *, overwrite: bool = False) -> Path:
        return write_image_folder(path, samples, labels, class_names, overwrite=overwrite)

    def read_synthetic(self, path: Path, layout: tuple[int, ...], class_names: Sequence[Any]) -> LabeledDataset:
        return read_image_folder(path, size=layout[0], mode="L" if len(layout) == 2 else "RGB",
                                 class_names=class_names, min_per_class=1)


IMAGE = ImageModality()
