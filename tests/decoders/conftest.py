"""What the decoder tests share: one small real encoder (packaged EfficientNet-Lite0 at 32 px, 64-d features)."""

import pytest

from pcevolve.encoders import ImageEncoder


@pytest.fixture(scope="module")
def encoder():
    return ImageEncoder.pretrained("efficientnet-lite0", trainable_blocks=1, input_size=32, proj_hidden_dim=32,
                                   feature_dim=64).eval()
