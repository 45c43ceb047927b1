"""In-memory datasets: labelled private/test data and the unlabelled public pool.

Invariants (checked on construction, relied on everywhere downstream):

* ``samples``, ``labels`` and ``sources`` have one entry per sample, in the same order.
* The samples have their modality's form (its ``sample_form``, :mod:`pcevolve.catalog.modalities`): images are
  ``uint8`` — ``(N, H, W)`` for mode ``"L"``, ``(N, H, W, 3)`` for ``"RGB"``; rows are ``float64`` ``(N, F)`` and
  finite, with one feature name per column; texts are a 1-D unicode array.
* ``labels`` are ``int64`` indices into ``class_names``; a class name is text. A JSON Lines file's labels have a
  JSON type, kept as ``label_type`` (``class_labels`` gives each class back with it), so that a delivered file
  writes ``0`` where the input had ``0`` and ``"0"`` where it had ``"0"``.
* The arrays are read-only views: a dataset never changes after construction.
* :meth:`LabeledDataset.fingerprint` holds counts and hashes only, never content,
  so it may go into a run manifest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from pcevolve.catalog.modalities import MODALITY_TRAITS, SampleForm
from pcevolve.data.hashing import combined_hash, sample_hashes

IndexLike = Sequence[int] | np.ndarray

#: The JSON type every label of one file has: text (every CSV label, folder name, JSON string), a whole number or
#: a boolean. JSON Lines labels are never fractional numbers, lists or objects (see pcevolve.data.text).
LabelType = Literal["text", "number", "boolean"]
LABEL_TYPES: tuple[str, ...] = ("text", "number", "boolean")
ClassLabel = str | int | bool


def label_type(value: ClassLabel) -> LabelType:
    """The JSON type of one label value (``True`` is a boolean, not the number 1)."""
    return "boolean" if isinstance(value, bool) else "number" if isinstance(value, int) else "text"


def label_text(value: ClassLabel) -> str:
    """A label's text form, by which its class is found: ``0`` → ``"0"``, ``True`` → ``"true"`` (JSON's spelling),
    text as it is."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def typed_label(name: str, kind: str) -> ClassLabel:
    """The label value whose :func:`label_text` is ``name``, with the JSON type ``kind`` (``ValueError`` if none)."""
    if kind == "number":
        try:
            number = int(name)
        except ValueError:
            number = None
        if number is None or str(number) != name:  # the canonical spelling only, so that the text form round-trips
            raise ValueError(f"class name {name!r} is not a whole number, but the labels are numbers")
        return number
    if kind == "boolean":
        if name not in ("true", "false"):
            raise ValueError(f"class name {name!r} is not true or false, but the labels are booleans")
        return name == "true"
    return name


def _readonly(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.setflags(write=False)
    return view


def _check_images(samples: np.ndarray, what: str) -> None:
    if samples.dtype != np.uint8:
        raise ValueError(f"{what}: images must be uint8, got {samples.dtype}")
    if not (samples.ndim == 3 or (samples.ndim == 4 and samples.shape[-1] == 3)):
        raise ValueError(f"{what}: images must be (N, H, W) or (N, H, W, 3), got shape {samples.shape}")


def _image_mode(samples: np.ndarray) -> str:
    return "L" if samples.ndim == 3 else "RGB"


def _as_indices(indices: IndexLike, length: int) -> np.ndarray:
    array = np.asarray(indices)
    if array.dtype == bool:
        if array.shape != (length,):
            raise ValueError(f"boolean mask has shape {array.shape}, expected ({length},)")
        return np.flatnonzero(array)
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    if array.dtype.kind not in "iu" or array.ndim != 1:
        raise ValueError(f"indices must be a 1-D integer array or boolean mask, got {array.dtype} {array.shape}")
    if array.min() < -length or array.max() >= length:
        raise IndexError(f"index out of range for a dataset of {length} samples")
    return array.astype(np.int64)


@dataclass(frozen=True, eq=False)
class LabeledDataset:
    """Labelled samples of one modality.

    Attributes:
        samples: Images ``uint8 (N, H, W)`` / ``(N, H, W, 3)``, tabular ``float64 (N, F)``,
            or text ``str (N,)``.
        labels: ``int64 (N,)`` indices into ``class_names``.
        class_names: One name per class; a class may have zero samples (e.g. after ``subset``).
        modality: A ``data.modality`` (``"image"``, ``"tabular"``, ``"text"`` …); its samples' form is checked.
        sources: Where each sample came from (``path`` or ``file.csv:row 17``), for error messages.
        feature_names: Column names of samples that are rows (empty for other forms).
        label_type: The labels' JSON type — the declared classes', else the file's (``"text"`` for anything but
            JSON Lines): each class name is the text form of a label of that type (see :attr:`class_labels`).
    """

    samples: np.ndarray
    labels: np.ndarray
    class_names: tuple[str, ...]
    modality: str
    sources: tuple[str, ...]
    feature_names: tuple[str, ...] = field(default=())
    label_type: LabelType = "text"

    def __post_init__(self) -> None:
        samples = np.asarray(self.samples)
        labels = np.asarray(self.labels)
        class_names = tuple(str(name) for name in self.class_names)
        sources = tuple(str(source) for source in self.sources)
        feature_names = tuple(str(name) for name in self.feature_names)
        if self.modality not in MODALITY_TRAITS:
            raise ValueError(f"modality must be one of {tuple(MODALITY_TRAITS)}, got {self.modality!r}")
        if not class_names:
            raise ValueError("class_names must not be empty")
        if len(set(class_names)) != len(class_names):
            raise ValueError(f"class_names must be unique, got {class_names}")
        if labels.ndim != 1 or (labels.size and labels.dtype.kind not in "iu"):
            raise ValueError(f"labels must be a 1-D integer array, got {labels.dtype} {labels.shape}")
        labels = labels.astype(np.int64)
        if not (len(samples) == len(labels) == len(sources)):
            raise ValueError(
                f"samples ({len(samples)}), labels ({len(labels)}) and sources ({len(sources)}) differ in length"
            )
        if labels.size and (labels.min() < 0 or labels.max() >= len(class_names)):
            raise ValueError(f"labels must lie in 0..{len(class_names) - 1}")
        form = self.sample_form
        if form == "images":
            _check_images(samples, "LabeledDataset")
        elif form == "rows":
            if samples.ndim != 2 or samples.dtype.kind != "f":
                raise ValueError(f"tabular samples must be a float (N, F) array, got {samples.dtype} {samples.shape}")
            samples = samples.astype(np.float64, copy=False)
            if not np.isfinite(samples).all():
                raise ValueError("tabular samples must be finite (no NaN or inf)")
            if not feature_names:
                feature_names = tuple(f"feature_{i}" for i in range(samples.shape[1]))
            if len(feature_names) != samples.shape[1]:
                raise ValueError(f"{len(feature_names)} feature_names for {samples.shape[1]} features")
        elif form == "texts" and (samples.ndim != 1 or samples.dtype.kind != "U"):
            raise ValueError(f"text samples must be a 1-D unicode array, got {samples.dtype} {samples.shape}")
        if form != "rows" and feature_names:
            raise ValueError("feature_names are only meaningful for tabular data")
        if self.label_type not in LABEL_TYPES:
            raise ValueError(f"label_type must be one of {LABEL_TYPES}, got {self.label_type!r}")
        for name in class_names:
            typed_label(name, self.label_type)  # every class name must be a label of that type
        object.__setattr__(self, "samples", _readonly(samples))
        object.__setattr__(self, "labels", _readonly(labels))
        object.__setattr__(self, "class_names", class_names)
        object.__setattr__(self, "sources", sources)
        object.__setattr__(self, "feature_names", feature_names)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def sample_form(self) -> SampleForm:
        """How this modality's samples are held (its traits' ``sample_form``)."""
        return MODALITY_TRAITS[self.modality].sample_form

    @property
    def class_labels(self) -> tuple[ClassLabel, ...]:
        """Each class as the file writes its label: ``class_names`` with their JSON type (``label_type``)."""
        return tuple(typed_label(name, self.label_type) for name in self.class_names)

    @property
    def image_mode(self) -> str | None:
        """``"L"`` or ``"RGB"`` for images, ``None`` otherwise."""
        return _image_mode(self.samples) if self.sample_form == "images" else None

    @property
    def image_size(self) -> tuple[int, int] | None:
        """``(height, width)`` for images, ``None`` otherwise."""
        return (int(self.samples.shape[1]), int(self.samples.shape[2])) if self.sample_form == "images" else None

    def class_counts(self) -> dict[str, int]:
        """Samples per class, in class order, including classes with zero samples."""
        counts = np.bincount(self.labels, minlength=len(self.class_names))
        return {name: int(count) for name, count in zip(self.class_names, counts)}

    def sample_hashes(self) -> list[str]:
        """Content hash of each sample (see :mod:`pcevolve.data.hashing`)."""
        return sample_hashes(self.samples)

    def subset(self, indices: IndexLike) -> LabeledDataset:
        """A new dataset of the given samples (integer indices or a boolean mask), same classes."""
        chosen = _as_indices(indices, len(self))
        return LabeledDataset(
            samples=self.samples[chosen],
            labels=self.labels[chosen],
            class_names=self.class_names,
            modality=self.modality,
            sources=tuple(self.sources[i] for i in chosen),
            feature_names=self.feature_names,
            label_type=self.label_type,
        )

    def split(self, fraction: float, *, seed: int | np.random.Generator) -> tuple[LabeledDataset, LabeledDataset]:
        """Stratified random split into ``(first, rest)``.

        Per class with ``n`` samples, ``first`` gets ``floor(fraction * n + 0.5)`` of them,
        clipped to ``1..n-1`` when ``n >= 2`` so that both parts see every class that can
        be split. Samples keep their original order within each part.

        Args:
            fraction: Share of each class that goes to ``first``; strictly between 0 and 1.
            seed: Seed or generator; the same seed on the same dataset gives the same split.

        Returns:
            The two disjoint parts; together they hold every sample exactly once.
        """
        if not 0.0 < fraction < 1.0:
            raise ValueError(f"fraction must be strictly between 0 and 1, got {fraction}")
        rng = np.random.default_rng(seed)
        first: list[np.ndarray] = []
        for label in range(len(self.class_names)):
            members = np.flatnonzero(self.labels == label)
            count = len(members)
            take = int(np.floor(fraction * count + 0.5))
            if count >= 2:
                take = min(max(take, 1), count - 1)
            first.append(rng.permutation(members)[:take])
        mask = np.zeros(len(self), dtype=bool)
        if first:
            mask[np.concatenate(first)] = True
        return self.subset(mask), self.subset(~mask)

    def fingerprint(self) -> dict[str, Any]:
        """Counts and a content hash for the run manifest — never the content itself.

        The hash covers each sample's content with its class name, the class names and
        feature names; it does not depend on sample order or on file names.
        """
        pairs = sorted(
            f"{self.class_names[label]}\t{digest}" for label, digest in zip(self.labels.tolist(), self.sample_hashes())
        )
        header = [self.modality, *self.class_names, "\0", *self.feature_names, "\0"]
        result: dict[str, Any] = {
            "modality": self.modality,
            "n_samples": len(self),
            "class_counts": self.class_counts(),
            "sha256": combined_hash(header + pairs),
        }
        if self.sample_form == "images":
            result["image_size"] = list(self.image_size or ())
            result["image_mode"] = self.image_mode
        if self.sample_form == "rows":
            result["n_features"] = len(self.feature_names)
        return result


@dataclass(frozen=True, eq=False)
class UnlabeledSamples:
    """A public pool: samples without labels, and where each came from (``sources``).

    A subclass names its ``modality``, checks (and may normalise) the samples and sources in ``_checked`` — a
    ``ValueError`` says what is wrong — and gives the samples' shape for the fingerprint in ``_layout``. The samples
    are kept as a read-only view.
    """

    samples: np.ndarray
    sources: tuple[str, ...]
    modality: ClassVar[str]

    def __post_init__(self) -> None:
        samples, sources = self._checked(self.samples, self.sources)
        object.__setattr__(self, "samples", _readonly(samples))
        object.__setattr__(self, "sources", sources)

    def _checked(self, samples: Any, sources: Any) -> tuple[np.ndarray, tuple[str, ...]]:
        raise NotImplementedError

    def _layout(self) -> dict[str, Any]:
        return {}

    def __len__(self) -> int:
        return len(self.sources)

    def sample_hashes(self) -> list[str]:
        """Content hash of each sample (see :mod:`pcevolve.data.hashing`)."""
        return sample_hashes(self.samples)

    def fingerprint(self) -> dict[str, Any]:
        """Modality, count, shape and an order-independent content hash (no content)."""
        return {"modality": self.modality, "n_samples": len(self), **self._layout(),
                "sha256": combined_hash(["unlabeled", *sorted(self.sample_hashes())])}


class UnlabeledImages(UnlabeledSamples):
    """The public pool: images without labels.

    Attributes:
        samples: ``uint8 (N, H, W)`` or ``(N, H, W, 3)``.
        sources: The file of each image.
    """

    modality = "image"

    def _checked(self, samples: Any, sources: Any) -> tuple[np.ndarray, tuple[str, ...]]:
        samples = np.asarray(samples)
        sources = tuple(str(source) for source in sources)
        _check_images(samples, "UnlabeledImages")
        if len(samples) != len(sources):
            raise ValueError(f"samples ({len(samples)}) and sources ({len(sources)}) differ in length")
        return samples, sources

    @property
    def image_mode(self) -> str:
        """``"L"`` or ``"RGB"``."""
        return _image_mode(self.samples)

    @property
    def image_size(self) -> tuple[int, int]:
        """``(height, width)``."""
        return int(self.samples.shape[1]), int(self.samples.shape[2])

    def subset(self, indices: IndexLike) -> UnlabeledImages:
        """A new pool of the given images (integer indices or a boolean mask)."""
        chosen = _as_indices(indices, len(self))
        return UnlabeledImages(samples=self.samples[chosen], sources=tuple(self.sources[i] for i in chosen))

    def _layout(self) -> dict[str, Any]:
        return {"image_size": list(self.image_size), "image_mode": self.image_mode}
