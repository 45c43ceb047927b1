"""The modalities by ``data.modality`` (the one registry line a new modality adds)."""

from pcevolve.modalities.base import Modality
from pcevolve.modalities.image import IMAGE
from pcevolve.modalities.tabular import TABULAR
from pcevolve.modalities.text import TEXT
from pcevolve.registry import Registry

MODALITIES: Registry[Modality] = Registry("modality", {IMAGE.name: IMAGE, TABULAR.name: TABULAR,
                                                         TEXT.name: TEXT})
