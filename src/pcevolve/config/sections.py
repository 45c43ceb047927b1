"""Which settings a run reads, so that the ``config.yaml`` it writes shows those and not every part's.

One flat schema serves every modality and decoder, and a run reads only part of it: an image run no text
column, a text run no crop or backbone, a retrieval decoder no training schedule, a run with a public pool no
``synthesis`` section and a run without one no representation, decoder or search. What only some parts read is
declared by them — each modality's spec (``settings``, :mod:`pcevolve.catalog.modalities`), each decoder's traits
(``settings``, :mod:`pcevolve.catalog.decoders`) — and the sections below by the run's shape.

:func:`file_mapping` is the config as its file shows it: a setting the run does not read is left out *when it is at
its default*, so that reading the file back gives the same config (and the same hash, which covers every setting);
one the user changed stays, as they wrote it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pcevolve.catalog.decoders import DECODER_TRAITS
from pcevolve.catalog.modalities import MODALITY_PACKAGES, MODALITY_SPECS

if TYPE_CHECKING:
    from pcevolve.config.schema import RunConfig

#: The sections only a run with a public pool reads (it encodes, searches and decodes), and the one only a run
#: without a pool reads (its samples are made from a release, :mod:`pcevolve.synthesis`).
POOL_SECTIONS = ("representation", "augment", "decoder", "search")
MADE_SECTIONS = ("synthesis",)


def unread_settings(config: "RunConfig") -> frozenset[str]:
    """The dotted keys (a section's name stands for all of it) that no part of ``config``'s run reads."""
    modality = config.data.modality
    declared = {name: set(MODALITY_SPECS[name].settings) for name in MODALITY_PACKAGES}
    own = declared.get(modality, set())
    unread = {key for keys in declared.values() for key in keys} - own
    decoder_keys = {key for traits in DECODER_TRAITS.values() for key in traits.settings}
    traits = DECODER_TRAITS.get(config.decoder.name)
    unread |= {f"decoder.{key}" for key in decoder_keys - set(traits.settings if traits else decoder_keys)}
    unread |= set(POOL_SECTIONS if config.makes_samples else MADE_SECTIONS)
    return frozenset(unread)


def file_mapping(config: "RunConfig") -> dict[str, Any]:
    """``config`` as plain data for its file: every setting, less those :func:`unread_settings` names that are at
    their defaults (a section left empty goes too)."""
    from pcevolve.config.schema import RunConfig

    mapping = config.model_dump(mode="json")
    defaults = RunConfig.model_construct().model_dump(mode="json")
    for key in sorted(unread_settings(config)):
        *parents, leaf = key.split(".")
        node, default = mapping, defaults
        for part in parents:
            node, default = node.get(part, {}), default.get(part, {})
        if leaf in node:
            node[leaf] = _without_defaults(node[leaf], default.get(leaf))
            if node[leaf] is _DEFAULT:
                del node[leaf]
    return mapping


_DEFAULT = object()


def _without_defaults(value: Any, default: Any) -> Any:
    """``value`` less what equals ``default`` (recursively for sections); :data:`_DEFAULT` when nothing is left."""
    if isinstance(value, dict) and isinstance(default, dict):
        kept = {key: _without_defaults(item, default.get(key, _DEFAULT)) for key, item in value.items()}
        kept = {key: item for key, item in kept.items() if item is not _DEFAULT}
        return kept if kept else _DEFAULT
    return _DEFAULT if value == default else value
