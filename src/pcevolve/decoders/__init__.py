"""Stage 4 decoders: feature vectors back to samples.

The names below are imported on first use (:mod:`pcevolve.lazy_exports`): the config's checks read
:mod:`pcevolve.catalog.decoders` without loading torch.
"""

from pcevolve.lazy_exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "base": ["META_FILE", "Decoder", "DecoderTrainingResult", "KnownEncodings"],
    "conv": ["ConvImageDecoder"],
    "dp": ["DPDecoderResult", "fine_tune_dp", "per_sample_gradients"],
    "nearest": ["NearestPublicDecoder"],
    "pixel": ["PixelViewDecoder"],
    "registry": ["DECODERS", "build_decoder", "load_decoder"],
    "stage": ["DecoderStageResult", "train_decoder"],
    "table_mlp": ["TableGeneratorDecoder"],
    "text_variation": ["TextVariationDecoder"],
})
