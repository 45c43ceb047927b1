"""Augmentations that make positive pairs for contrastive learning, matched to the task, of adjustable strength."""

from pcevolve.augment.image import ImageAugmentation

__all__ = ["ImageAugmentation"]
