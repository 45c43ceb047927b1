"""Builders of real image folders and files on disk, shared by the data tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image


def write_png(path: Path, pixels: np.ndarray, *, mode: str | None = None) -> Path:
    """Save ``pixels`` (uint8 HxW or HxWx3) as a PNG; ``mode`` converts before saving (e.g. "RGBA")."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.fromarray(np.asarray(pixels, dtype=np.uint8))
    if mode is not None:
        image = image.convert(mode)
    image.save(path, format="PNG")
    return path


def random_pixels(rng: np.random.Generator, size: int = 8, channels: int | None = None) -> np.ndarray:
    shape = (size, size) if channels is None else (size, size, channels)
    return rng.integers(0, 256, shape, dtype=np.uint8)


def make_class_folders(
    root: Path, counts: dict[str, int], *, size: int = 8, seed: int = 0, channels: int | None = None
) -> Path:
    """``root/<class>/NNN.png`` with distinct random images (no accidental duplicates)."""
    rng = np.random.default_rng(seed)
    for name, count in counts.items():
        (root / name).mkdir(parents=True, exist_ok=True)
        for i in range(count):
            write_png(root / name / f"{i:03d}.png", random_pixels(rng, size, channels))
    return root
