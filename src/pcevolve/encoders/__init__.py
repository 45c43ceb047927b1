"""Stage 2 encoders: pretrained backbones behind one interface, contrastively fine-tuned under DP."""

from pcevolve.encoders.backbones import (
    BACKBONES,
    BackboneSpec,
    BackboneUnavailable,
    load_split_backbone,
    trainable_blocks_for,
)
from pcevolve.encoders.diagnostics import CollapseReport, diagnose_collapse
from pcevolve.encoders.encoder import Encoder, EncoderMeta, ImageEncoder
from pcevolve.encoders.projection import ProjectionHead
from pcevolve.encoders.training import RepresentationResult, build_encoder, train_representation

__all__ = [
    "BACKBONES",
    "BackboneSpec",
    "BackboneUnavailable",
    "CollapseReport",
    "Encoder",
    "EncoderMeta",
    "ImageEncoder",
    "ProjectionHead",
    "RepresentationResult",
    "build_encoder",
    "diagnose_collapse",
    "load_split_backbone",
    "train_representation",
    "trainable_blocks_for",
]
