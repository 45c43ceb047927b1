"""Stage 2 encoders: pretrained backbones behind one interface, contrastively fine-tuned under DP.

The names below are imported on first use (:mod:`pcevolve.lazy_exports`): the config's checks read
:mod:`pcevolve.catalog.encoders` without loading torch.
"""

from pcevolve.lazy_exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "backbones": ["BACKBONES", "BackboneSpec", "BackboneUnavailable", "load_split_backbone", "trainable_blocks_for"],
    "reencode": ["ReencodeCheck", "reencode_check"],
    "diagnostics": ["CollapseReport", "diagnose_collapse"],
    "encoder": ["Encoder", "EncoderMeta", "ImageEncoder"],
    "projection": ["ProjectionHead"],
    "training": ["RepresentationResult", "build_encoder", "train_representation"],
})
