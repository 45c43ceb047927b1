"""Re-encode check before delivery: do decoded samples land where they were asked to?"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pcevolve.similarity import unit_vectors

if TYPE_CHECKING:
    from pcevolve.encoders import ImageEncoder


@dataclass(frozen=True)
class ReencodeCheck:
    """Per-sample results of re-encoding decoded samples.

    Attributes:
        cosine: cosine(requested feature, re-encoded projected feature), (N,).
        classes: Index of the nearest reference centroid (cosine) of each re-encoded feature, (N,),
            or ``None`` when no centroids were given.
        reencoded: The re-encoded projected features, (N, feature_dim).
    """

    cosine: np.ndarray
    classes: np.ndarray | None
    reencoded: np.ndarray

    def agreement(self, labels: np.ndarray) -> float:
        """Fraction of samples whose re-encoded class equals the requested ``labels``."""
        if self.classes is None:
            raise ValueError("no centroids were given, so there are no classes to compare")
        return float(np.mean(self.classes == np.asarray(labels)))


def reencode_check(encoder: "ImageEncoder", samples: np.ndarray, requested: np.ndarray, *,
                   centroids: np.ndarray | None = None, batch_size: int = 256) -> ReencodeCheck:
    """Re-encode decoded samples and compare them with the features they were decoded from.

    Args:
        encoder: The encoder whose projected space ``requested`` lives in (eval mode is used).
        samples: Decoded uint8 samples, (N, H, W) or (N, H, W, C).
        requested: The features they were decoded from, (N, feature_dim).
        centroids: Optional per-class reference centroids (K, feature_dim), e.g. released class
            means; each re-encoded feature is assigned the class of highest cosine.
        batch_size: Encoding batch size.

    Returns:
        A :class:`ReencodeCheck`.
    """
    requested = np.asarray(requested, dtype=np.float32)
    if len(samples) != len(requested):
        raise ValueError(f"{len(samples)} samples for {len(requested)} requested features")
    was_training = encoder.training
    encoder.eval()
    try:
        _, reencoded = encoder.encode_both(samples, batch_size=batch_size)
    finally:
        encoder.train(was_training)
    cosine = np.sum(unit_vectors(reencoded) * unit_vectors(requested), axis=-1)
    classes = None
    if centroids is not None:
        centroids = np.asarray(centroids, dtype=np.float32)
        if centroids.ndim != 2 or centroids.shape[1] != reencoded.shape[1]:
            raise ValueError(f"centroids must be (K, {reencoded.shape[1]}), got {centroids.shape}")
        classes = np.argmax(unit_vectors(reencoded) @ unit_vectors(centroids).T, axis=1)
    return ReencodeCheck(cosine=cosine.astype(np.float32), classes=classes, reencoded=reencoded)
