"""Modalities by ``data.modality``: the parts that change when the samples are images, table rows or texts.

To add one, write its :class:`Modality` in a module of this package and add it to :data:`MODALITIES` below;
list it in the ``modalities`` of every decoder that serves it, and add its judges to
:data:`pcevolve.evaluation.JUDGES` (see ``docs/architecture.md``).
"""

from pcevolve.modalities.base import Modality, PublicSamples
from pcevolve.modalities.image import IMAGE
from pcevolve.modalities.tabular import TABULAR
from pcevolve.modalities.text import TEXT
from pcevolve.registry import Registry

MODALITIES: Registry[Modality] = Registry("modality", {IMAGE.name: IMAGE, TABULAR.name: TABULAR,
                                                         TEXT.name: TEXT})

__all__ = ["IMAGE", "MODALITIES", "TABULAR", "TEXT", "Modality", "PublicSamples"]
