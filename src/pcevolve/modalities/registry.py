"""The modalities' run parts by ``data.modality``, each imported from its package when first asked for."""

from pcevolve.catalog.modalities import ByModality
from pcevolve.modalities.base import Modality

MODALITIES: ByModality[Modality] = ByModality("modality", lambda spec: spec.load("parts"))
