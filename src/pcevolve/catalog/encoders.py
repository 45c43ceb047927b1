"""The packaged backbones by ``representation.backbone``, as plain data: read by the config's checks (and by
:data:`pcevolve.encoders.backbones.BACKBONES`, which adds how to load each) without importing torch."""

from __future__ import annotations

#: Blocks of each backbone (``representation.trainable_blocks`` counts from the top of these).
BACKBONE_BLOCKS: dict[str, int] = {"efficientnet-lite0": 16, "efficientnet-lite1": 16, "efficientnet-lite2": 16}
#: Width of each backbone's pooled features.
BACKBONE_FEATURES: dict[str, int] = {name: 1280 for name in BACKBONE_BLOCKS}
