"""Where an image encoder's pixel view sits in its search features, and a fixed cosine basis of it.

An image encoder with a pixel view (``representation.pixel_view``) ends its search features with the image
itself, averaged down to ``side`` × ``side`` per channel and flattened channel by channel (C·side² values), scaled
to unit length and then by 1/√2 (the projection head's output fills the other half). :class:`PixelLayout` reads
that block back out of a feature vector, and :meth:`PixelLayout.cosine_directions` gives the block's lowest
spatial frequencies as unit directions of the whole feature space: the orthonormal 2-D discrete cosine
transform (DCT-II), a fixed transform that depends on no data at all, public or private.

Why a data-free basis: a basis fitted to a public pool can only describe what the pool shows. A pool without
trousers has no principal direction for the gap between two legs, so class statistics released in such a basis
cannot carry it and no decoder can draw it. The low spatial frequencies describe every shape alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


def cosine_matrix(size: int) -> np.ndarray:
    """The orthonormal DCT-II matrix (size, size): row f is the f-th cosine over ``size`` samples."""
    if size < 1:
        raise ValueError(f"need at least one sample, got {size}")
    frequency = np.arange(size)[:, None]
    position = np.arange(size)[None, :]
    matrix = np.cos(np.pi * (2 * position + 1) * frequency / (2 * size)) * np.sqrt(2.0 / size)
    matrix[0] /= np.sqrt(2.0)
    return matrix


@dataclass(frozen=True)
class PixelLayout:
    """The pixel view's block in the search features: columns ``offset`` … ``offset + size``, shaped (C, side, side)."""

    offset: int
    channels: int
    side: int

    @classmethod
    def of(cls, meta: Any) -> PixelLayout | None:
        """The layout of an image encoder's metadata (``feature_dim``, ``pixel_side``, ``pixel_channels``);
        None when the encoder has no pixel view."""
        if not getattr(meta, "pixel_side", 0):
            return None
        return cls(offset=int(meta.feature_dim), channels=int(meta.pixel_channels), side=int(meta.pixel_side))

    @property
    def size(self) -> int:
        return self.channels * self.side * self.side

    def images(self, features: np.ndarray) -> np.ndarray:
        """Search features (N, D) → their pixel views (N, C, side, side), each scaled to unit length (all zeros
        stay zeros): the image's appearance with its overall brightness left out, as the features hold it."""
        block = np.asarray(features, dtype=np.float64)[:, self.offset : self.offset + self.size]
        if block.shape[1] != self.size:
            raise ValueError(f"features of width {np.shape(features)[1]} hold no {self.size}-value pixel view at "
                             f"column {self.offset}")
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        block = block / np.where(norms > 0, norms, 1.0)
        return block.reshape(-1, self.channels, self.side, self.side)

    def cosine_directions(self, frequencies: int, feature_dim: int) -> np.ndarray:
        """(feature_dim, C·k²) orthonormal directions: per channel, the pixel view's k × k lowest spatial
        frequencies (k = ``frequencies``), zero outside the pixel block.

        Raises:
            ValueError: ``frequencies`` outside 1 … side, or a ``feature_dim`` too small for the block.
        """
        if not 1 <= frequencies <= self.side:
            raise ValueError(f"pixel frequencies must lie in 1..{self.side} (the pixel view's side), got {frequencies}")
        if feature_dim < self.offset + self.size:
            raise ValueError(f"a {feature_dim}-d feature cannot hold a pixel view at "
                             f"{self.offset}..{self.offset + self.size}")
        low = cosine_matrix(self.side)[:frequencies]
        per_channel = np.kron(low, low)  # (k², side²): row (u, v) is the cosine pair's image, flattened row-major
        directions = np.zeros((feature_dim, self.channels * frequencies**2))
        for channel in range(self.channels):
            rows = slice(self.offset + channel * self.side**2, self.offset + (channel + 1) * self.side**2)
            directions[rows, channel * frequencies**2 : (channel + 1) * frequencies**2] = per_channel.T
        return directions
