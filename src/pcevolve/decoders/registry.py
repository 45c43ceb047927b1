"""The decoders by ``decoder.name``, and building, training and loading one by name."""

import os
from pathlib import Path

from pcevolve.config import DecoderConfig
from pcevolve.decoders.base import META_FILE, Decoder
from pcevolve.decoders.conv import ConvImageDecoder
from pcevolve.decoders.nearest import NearestPublicDecoder
from pcevolve.decoders.pixel import PixelViewDecoder
from pcevolve.decoders.table_mlp import TableGeneratorDecoder
from pcevolve.decoders.text_variation import TextVariationDecoder
from pcevolve.io import read_json
from pcevolve.registry import Registry

DECODERS: Registry[type] = Registry("decoder", {ConvImageDecoder.name: ConvImageDecoder,
                                                NearestPublicDecoder.name: NearestPublicDecoder,
                                                PixelViewDecoder.name: PixelViewDecoder,
                                                TableGeneratorDecoder.name: TableGeneratorDecoder,
                                                TextVariationDecoder.name: TextVariationDecoder})


def build_decoder(config: DecoderConfig, *, feature_dim: int, sample_shape: tuple[int, ...], seed: int) -> Decoder:
    """A fresh, untrained decoder of the kind ``config.name`` names.

    Every ``training`` mode builds the same network; :func:`~pcevolve.decoders.stage.train_decoder` trains it as
    configured.

    Raises:
        KeyError: Unknown decoder name.
    """
    return DECODERS.get_part(config.name)(config, feature_dim=feature_dim, sample_shape=sample_shape, seed=seed)


def load_decoder(folder: str | os.PathLike[str]) -> Decoder:
    """Load a decoder saved by ``save``, dispatching on the name in its ``decoder.json``."""
    name = read_json(Path(folder) / META_FILE).get("name")
    if name not in DECODERS:
        raise KeyError(f"{folder}/{META_FILE} names unknown decoder {name!r}")
    return DECODERS[name].load(folder)
