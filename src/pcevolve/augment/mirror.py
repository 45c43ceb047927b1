"""Whether a left-right mirror is a fair augmentation for a kind of image, judged on the public pool alone.

Mirroring (``augment.flip``) is used by the contrastive encoder's views, the pool labeller's small CNN and the
evaluation's classic augmentation. It suits garments, animals, street scenes — a mirrored image of such a kind is
as ordinary as the original — and harms digits, letters and documents, where it makes shapes that never occur and
teaches the pool labeller that a mirrored 2 is still a 2: on handwritten digits, switching it off made more of the
delivered labels right and trained the downstream CNN better (measured in docs/search.md §9).

**The test** reads public images only. It draws ``queries`` pool images and ``references`` more (a seeded, public
choice), shrinks every image to :data:`SIDE` pixels a side (shape, not texture; cheap), and asks for each query
whether its mirror lies at least as close to the other drawn images as the query itself (Euclidean distance to the
nearest one; a query is never compared with itself). In a kind that looks the same mirrored, that happens often;
in an oriented kind almost never: garments and photographs score well above digits (the shares of each kind are
measured in docs/search.md §9). A pool of a few hundred images is too sparse to tell well and its share drifts up
for any kind, so the test then errs towards mirroring, the former default. Mirroring is kept at a share of
:data:`MIN_SHARE` or more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

#: Images are compared at this side (box-filtered).
SIDE = 16
#: Mirror when at least this share of the queries' mirrors is as close to the pool as the queries are.
MIN_SHARE = 0.10
QUERIES = 500
REFERENCES = 2000


@dataclass(frozen=True)
class MirrorTest:
    """``share``: the queries whose mirror is at least as close to the references as they are; ``queries``: how
    many were asked; ``symmetric``: ``share >= MIN_SHARE`` (mirroring is a fair augmentation)."""

    share: float
    queries: int

    @property
    def symmetric(self) -> bool:
        return self.share >= MIN_SHARE

    @property
    def finding(self) -> str:
        """The measurement in words, for a user who has never heard of the test."""
        return (f"{self.share:.0%} of {self.queries} public images checked look as much like the pool mirrored as "
                f"unmirrored (a mirror-symmetric kind, such as garments or photos: {MIN_SHARE:.0%} or more; an "
                "oriented kind, such as digits, letters or documents: less)")


def _shrunk(images: np.ndarray) -> np.ndarray:
    """(n, H, W[, C]) uint8 → (n, SIDE, SIDE[, C]) float32 in [0, 1]."""
    return np.stack([np.asarray(Image.fromarray(image).resize((SIDE, SIDE), Image.Resampling.BOX), dtype=np.float32)
                     for image in images]) / 255.0


def _nearest_others(queries: np.ndarray, references: np.ndarray) -> np.ndarray:
    """Distance from each row i of ``queries`` to its nearest row of ``references`` other than row i (the
    references start with the queries themselves; both flattened)."""
    squared = (np.sum(queries**2, axis=1)[:, None] + np.sum(references**2, axis=1)[None, :]
               - 2.0 * queries @ references.T)
    squared[np.arange(len(queries)), np.arange(len(queries))] = np.inf
    return np.sqrt(np.maximum(squared.min(axis=1), 0.0))


def mirror_test(images: np.ndarray, *, rng: np.random.Generator, queries: int = QUERIES,
                references: int = REFERENCES) -> MirrorTest:
    """Test a pool of uint8 images ``(N, H, W)`` or ``(N, H, W, C)`` (see the module docstring).

    ``queries`` images are asked (at most half the pool), each against the ``references`` others drawn with
    them and the other queries — never against itself. Needs at least 10 images.
    """
    images = np.asarray(images)
    if images.ndim not in (3, 4) or images.dtype != np.uint8 or len(images) < 10:
        raise ValueError(f"need at least 10 uint8 images (N, H, W[, C]), got {images.dtype} {images.shape}")
    order = rng.permutation(len(images))
    asked = min(queries, len(images) // 2)
    drawn = images[order[:asked + references]]
    pool = _shrunk(drawn).reshape(len(drawn), -1)
    plain = _nearest_others(pool[:asked], pool)
    # Mirrored at full size, then shrunk: a box filter's grid need not be symmetric (24 → 16 pixels is not).
    mirrored = _nearest_others(_shrunk(np.ascontiguousarray(drawn[:asked, :, ::-1])).reshape(asked, -1), pool)
    return MirrorTest(share=float(np.mean(mirrored <= plain)), queries=asked)


def mirror_advice(test: MirrorTest) -> str | None:
    """What to tell a user whose run mirrors images of an oriented kind (None when mirroring suits the pool)."""
    if test.symmetric:
        return None
    return (f"augment.flip is on, but only {test.finding}. For digits, letters or documents a mirrored image is a "
            "shape that never occurs, and mirrored copies teach the pool's labeller wrong labels; set augment.flip: "
            "false (pcevolve init chooses it)")
