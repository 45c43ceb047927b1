"""Modalities by ``data.modality``: the parts that change when the samples are images, table rows or texts.

To add one, write its :class:`Modality` in a module of this package, add it to
:data:`~pcevolve.modalities.registry.MODALITIES` and its traits to :mod:`pcevolve.catalog.modalities`; list it in
the ``modalities`` of every decoder that serves it (:mod:`pcevolve.catalog.decoders` too), and add its judges to
:data:`pcevolve.report.judges.JUDGES` (see ``docs/architecture.md``). The names below are imported on first use
(:mod:`pcevolve.lazy_exports`), so the config's checks read the catalog without loading a modality.
"""

from pcevolve.lazy_exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "base": ["Modality", "PublicSamples"],
    "image": ["IMAGE"],
    "registry": ["MODALITIES"],
    "tabular": ["TABULAR"],
    "text": ["TEXT"],
})
