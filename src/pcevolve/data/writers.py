"""Writers of a synthetic set in the input's own format, built under a temporary name so a crash leaves nothing
half-written and an existing set is replaced only once the new one is complete."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from pcevolve.io import atomic_directory


def write_image_folder(path: str | os.PathLike[str], samples: np.ndarray, labels: np.ndarray,
                       class_names: Sequence[str]) -> Path:
    """``path/<class name>/<class name>_<index>.png`` for every sample, built under a temporary name.

    Grey samples are (N, H, W) uint8, colour ones (N, H, W, 3); an existing folder is replaced
    only once the new one is complete.
    """
    samples = np.asarray(samples)
    labels = np.asarray(labels)
    if samples.dtype != np.uint8 or samples.ndim not in (3, 4) or len(samples) != len(labels):
        raise ValueError(f"expected uint8 samples (N, H, W[, 3]) with N labels, got {samples.dtype} "
                         f"{samples.shape} and {labels.shape}")
    with atomic_directory(path, overwrite=True) as staging:
        for k, name in enumerate(class_names):
            folder = staging / name
            folder.mkdir()
            for index, sample in enumerate(samples[labels == k]):
                Image.fromarray(sample).save(folder / f"{name}_{index:05d}.png", optimize=False)
    return Path(path)
