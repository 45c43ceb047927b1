"""Modalities by ``data.modality``: the parts that change when the samples are images, table rows or texts.

Each modality is a package here (``image/``, ``tabular/``, ``text/``): its ``__init__`` holds its spec (what it is,
the files it reads, where its parts are) and the rest its parts, starting with its :class:`Modality`. The one line
that adds a modality is its entry in :data:`pcevolve.catalog.modalities.MODALITY_PACKAGES`; :data:`MODALITIES`
finds its parts from there (see docs/architecture.md, "How to add a modality"). The names below are imported on
first use (:mod:`pcevolve.lazy_exports`), so the config's checks read the specs without loading a modality.
"""

from pcevolve.lazy_exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "base": ["Modality", "PublicSamples"],
    "registry": ["MODALITIES"],
})
