"""The modalities by ``data.modality``: the one registry a new modality adds a line to, and what each is, as data.

A modality is a package (``pcevolve/modalities/<name>/``) whose ``__init__`` holds its :class:`ModalitySpec`: its
traits, the files it reads, and where its parts are, as ``"module:attribute"`` paths imported on first use. The
config's checks and every command that treats kinds of data differently read the spec without importing a reader,
an encoder or torch; the run, the judges, the console and the sweep load the part they need by name
(:class:`ByModality`). Nothing in pcevolve imports a modality's package directly, so adding a modality is its
package plus one line in :data:`MODALITY_PACKAGES` (docs/architecture.md, "How to add a modality").
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pcevolve.registry import UnknownKey

T = TypeVar("T")

#: The forms samples take in a :class:`pcevolve.data.LabeledDataset`, which checks them by this form:
#: ``images`` ``uint8 (N, H, W)`` or ``(N, H, W, 3)``; ``rows`` finite ``float64 (N, F)`` with feature names;
#: ``texts`` a 1-D unicode array; ``arrays`` any array with one entry per sample.
SampleForm = Literal["images", "rows", "texts", "arrays"]

#: The parts a modality's spec names: its run parts (a :class:`pcevolve.modalities.Modality`), its judge for
#: ``pcevolve evaluate`` (a :data:`pcevolve.report.judges.Judge`), the console summary of its evaluation
#: (``(evaluation, console) -> None``), its point on a sweep's curve (``(name, ε, evaluation JSON) -> point``) and,
#: if it has any, its own checks of a config (``(RunConfig) -> list of problems``, each a line starting with the
#: dotted key; run when a config is loaded, so their module must not import torch).
HOOKS = ("parts", "judge", "headline", "curve_point", "config_problems")


@dataclass(frozen=True)
class ModalityTraits:
    """What a modality is, as the parts that do not build it need to know.

    Attributes:
        noun: What one sample is called in messages to the user ("image", "row").
        encoder_trains_under_dp: Whether its encoder can be fine-tuned on the private samples under DP-SGD (else the
            representation stage takes no share of ε).
        sample_form: How its samples are held in memory (:data:`SampleForm`), which the dataset checks.
        classes_from_folders: Whether a class is a folder of samples (the folders of ``data.private`` may declare
            the classes, and a class name must be a folder name) rather than a label column or key, whose classes
            ``data.classes`` must list.
        pixels: Whether its samples are pixels: the pool may be labelled by a CNN on public pixels (the
            ``auto`` pool labeller), the search may add pixel frequencies, and a mirror test checks flipping.
        needs_schema: Whether a run needs column types, bounds and categories from public data (a public table or
            ``data.schema_file``).
        typed_classes: Whether each declared class keeps its YAML type (texts: JSON Lines labels are typed).
        full_real_reference: Whether the judges take a full real training set (``data.full``, ``--full``) as the
            upper reference line.
    """

    noun: str
    encoder_trains_under_dp: bool
    sample_form: SampleForm = "arrays"
    classes_from_folders: bool = False
    pixels: bool = False
    needs_schema: bool = False
    typed_classes: bool = False
    full_real_reference: bool = False


@dataclass(frozen=True)
class ModalityFiles:
    """The kinds of file (:data:`pcevolve.data.kinds.Kind`) a modality reads, and the words for a wrong one.

    Attributes:
        accepts: The kinds its public pool and its test (and full) sets may be.
        run: What its run is called in a message ("a table run").
        fixes: What to give instead of a split of the wrong kind, by the split's role (``public``, ``test``,
            ``full``, ``any``: data check's ``--against``).
        default_for: The kind of private data that makes a run of this modality when no config says which (a
            one-line ``pcevolve run``, ``pcevolve init``); None: only a config's ``data.modality`` chooses it.
    """

    accepts: tuple[str, ...]
    run: str
    fixes: Mapping[str, str] = field(default_factory=dict)
    default_for: str | None = None


#: The settings (dotted config keys) that train a pretrained encoder contrastively: read by the modalities whose
#: encoder is a pretrained network fine-tuned that way (images, texts), not by a table's own small encoder.
CONTRASTIVE_SETTINGS = tuple(f"representation.{key}" for key in (
    "queue_size", "momentum", "views_per_sample", "epochs", "batch_size", "base_lr", "weight_decay", "optimizer",
    "public_pool", "clip_norm", "noise_multiplier"))


@dataclass(frozen=True)
class ModalitySpec:
    """One modality: what it is, what it reads, and where its parts are (each ``"module:attribute"``, see
    :data:`HOOKS`), so that reading the spec imports none of them.

    ``settings``: the dotted config keys that only some modalities read, those this one reads. A run's
    ``config.yaml`` leaves out, at their defaults, the keys other modalities declare and this one does not
    (:mod:`pcevolve.config.sections`)."""

    name: str
    traits: ModalityTraits
    files: ModalityFiles
    parts: str
    judge: str
    headline: str
    curve_point: str
    config_problems: str | None = None
    settings: tuple[str, ...] = ()

    def load(self, hook: str) -> Any:
        """The part ``hook`` names (one of :data:`HOOKS`), imported now; None for ``config_problems`` when the
        modality has no checks of its own."""
        if hook not in HOOKS:
            raise ValueError(f"a modality has no part {hook!r}; its parts: {', '.join(HOOKS)}")
        path = getattr(self, hook)
        if path is None:
            return None
        module, _, attribute = path.partition(":")
        return getattr(importlib.import_module(module), attribute)


#: ``data.modality`` → the package that is the modality (its ``SPEC``): the one line a new modality adds.
MODALITY_PACKAGES: dict[str, str] = {
    "image": "pcevolve.modalities.image",
    "tabular": "pcevolve.modalities.tabular",
    "text": "pcevolve.modalities.text",
}


def modality_spec(name: str) -> ModalitySpec:
    """The spec of the modality ``name``.

    Raises:
        UnknownKey: No modality of that name; the message lists the known ones.
    """
    return _spec_in(_package_of(name, "modality"))


def _package_of(name: str, kind: str) -> str:
    """The package of the modality ``name``, or :class:`UnknownKey` naming ``kind`` and the known modalities."""
    if not isinstance(name, str) or name not in MODALITY_PACKAGES:
        raise UnknownKey(f"unknown {kind} {name!r}; known: {', '.join(sorted(MODALITY_PACKAGES))}")
    return MODALITY_PACKAGES[name]


@functools.cache
def _spec_in(package: str) -> ModalitySpec:
    spec = importlib.import_module(package).SPEC
    if not isinstance(spec, ModalitySpec):
        raise TypeError(f"{package}.SPEC is not a ModalitySpec")
    return spec


class ByModality(Mapping[str, T], Generic[T]):
    """One thing of every modality, by ``data.modality``, read from its spec when asked for (a registry whose
    entries are the modalities of :data:`MODALITY_PACKAGES`: a new one appears here without another line).

    Args:
        kind: What the entries are, for the message about an unknown name ("modality", "judge").
        read: What to take from a spec (its traits, or a part: ``lambda spec: spec.load("judge")``).
    """

    def __init__(self, kind: str, read: Callable[[ModalitySpec], T]) -> None:
        self.kind = kind
        self._read = read

    def __getitem__(self, name: str) -> T:
        return self._read(_spec_in(_package_of(name, self.kind)))

    def __iter__(self) -> Iterator[str]:
        return iter(MODALITY_PACKAGES)

    def __len__(self) -> int:
        return len(MODALITY_PACKAGES)

    def get_part(self, name: str) -> T:
        """The entry of ``name``, or :class:`~pcevolve.registry.UnknownKey` listing the known modalities."""
        return self[name]


#: Each modality's spec, by ``data.modality`` (``MODALITY_SPECS.get(name)``: None for an unknown one).
MODALITY_SPECS: ByModality[ModalitySpec] = ByModality("modality", lambda spec: spec)
#: What each modality is, by ``data.modality`` (read by the config's checks: no part is imported).
MODALITY_TRAITS: ByModality[ModalityTraits] = ByModality("modality", lambda spec: spec.traits)
