"""The modalities' run parts by ``data.modality``, each imported from its package when first asked for."""

from pcevolve.catalog.modalities import ByModality
from pcevolve.modalities.base import Modality, checked_parts

#: Each modality's parts, checked to be a :class:`~pcevolve.modalities.base.Modality` of its name when first loaded.
MODALITIES: ByModality[Modality] = ByModality("modality", lambda spec: checked_parts(spec.load("parts"), spec.name))
