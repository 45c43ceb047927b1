"""Stage 2 encoders: pretrained backbones behind one interface (SPEC R3.1–R3.2)."""

from pcevolve.encoders.backbones import (
    BACKBONES,
    BackboneSpec,
    BackboneUnavailable,
    load_split_backbone,
    trainable_blocks_for,
)
from pcevolve.encoders.encoder import Encoder, EncoderMeta, ImageEncoder
from pcevolve.encoders.projection import ProjectionHead

__all__ = [
    "BACKBONES",
    "BackboneSpec",
    "BackboneUnavailable",
    "Encoder",
    "EncoderMeta",
    "ImageEncoder",
    "ProjectionHead",
    "load_split_backbone",
    "trainable_blocks_for",
]
