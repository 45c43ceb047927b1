"""Feature spaces the evaluation judges in: the search's own and an independent one it never optimised.

* **Search space** — the run's saved encoder (``RUN/encoder``, EfficientNet-Lite0 fine-tuned under
  DP plus its projection head, joined with the pixel view): the space the fitness optimised.
* **Independent space** — EfficientNet-Lite2's ImageNet weights, globally pooled 1280-D features,
  nothing trained: a different, larger network that never saw the private data or the fitness.
  The synthetic set cannot have been tuned to it. Input size :data:`INDEPENDENT_INPUT_SIZE`:
  on the small demo images a linear probe on its features is nearly as accurate as at 64 px and
  far more accurate than at 32 px, where the last feature maps are 1×1, and it encodes faster
  than 64 px (measured in docs/compare.md, "The evaluation's own recipe", and docs/performance.md).

Both encoders are put in channels-last memory format, which encodes faster on a CPU
(docs/performance.md, "The evaluation"), for features equal to ~2e-5.
"""

from __future__ import annotations

import os

import numpy as np
import torch

from pcevolve.encoders import ImageEncoder
from pcevolve.evaluation.settings import INDEPENDENT_INPUT_SIZE

#: Backbone of the independent evaluator.
INDEPENDENT_BACKBONE = "efficientnet-lite2"


def independent_encoder(*, input_size: int = INDEPENDENT_INPUT_SIZE) -> ImageEncoder:
    """The pretrained EfficientNet-Lite2, every layer frozen, in eval mode (its projection head is unused)."""
    encoder = ImageEncoder.pretrained(INDEPENDENT_BACKBONE, trainable_blocks=0, input_size=input_size,
                                      proj_hidden_dim=16, feature_dim=64, seed=0)
    return encoder.to(memory_format=torch.channels_last).eval()


def search_encoder(run_dir: str | os.PathLike[str]) -> ImageEncoder:
    """The encoder the run's search optimised in (``RUN/encoder``), in eval mode."""
    return ImageEncoder.load(os.path.join(run_dir, "encoder")).to(memory_format=torch.channels_last).eval()


def pooled_features(encoder: ImageEncoder, images: np.ndarray, *, batch_size: int = 256,
                    progress: bool = False) -> np.ndarray:
    """Globally pooled backbone features (float32, (N, 1280)) of uint8 images."""
    return encoder.encode_both(images, batch_size=batch_size, progress=progress)[0]


def projected_features(encoder: ImageEncoder, images: np.ndarray, *, batch_size: int = 256,
                       progress: bool = False) -> np.ndarray:
    """The search features (float32, (N, feature_dim)) of uint8 images: projection, plus the pixel view if any."""
    return encoder.encode_both(images, batch_size=batch_size, progress=progress)[1]
