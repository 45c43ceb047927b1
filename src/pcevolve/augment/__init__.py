"""Augmentations that make positive pairs for contrastive learning (SPEC R2.2–R2.3)."""

from pcevolve.augment.image import ImageAugmentation

__all__ = ["ImageAugmentation"]
