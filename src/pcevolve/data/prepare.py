"""Demo datasets cut from a public benchmark, laid out the way a user's data would be.

``prepare_demo`` writes::

    out/
      private/<class folder>/NNNNNN.png   per_class images of each selected class (train split)
      test/<class folder>/NNNNNN.png      test_per_class images of each selected class (test split)
      full/<class folder>/NNNNNN.png      further labelled images of the selected classes (train split)
      public/NNNNNN.png                   unlabelled pool, shuffled: no label in any name or file
      classes.json                        label, name and folder of each selected class
      dataset.json                        source, seed, options, counts and content hashes (no pixels)

Rules that must hold:

* The four splits are disjoint by *content*: exact duplicate images in the benchmark
  are dropped (first occurrence kept) before anything is drawn, and the written
  splits are checked once more after resizing.
* ``public`` carries no labels: files are numbered after a shuffle and no label is written.
  ``in-domain`` draws it from all ten classes, ``disjoint`` only from classes not selected;
  either way evenly over its classes.
* Same source, options and seed give byte-identical files; the seed drives one
  ``np.random.Generator`` and nothing else is random.
* The folder appears complete or not at all (built via :func:`pcevolve.io.atomic_directory`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from PIL import Image

from pcevolve import __version__
from pcevolve.data.dataset import LabeledDataset, UnlabeledImages
from pcevolve.data.duplicates import check_disjoint
from pcevolve.data.errors import DataError, DataProblem
from pcevolve.data.image_files import RESAMPLE
from pcevolve.data.prepared_folder import check_prepare_target
from pcevolve.data.sources import (
    DEFAULT_SIZES,
    SOURCES,
    DemoSource,
    SplitSizes,
    class_folder_name,
    load_demo_source,
)
from pcevolve.io import atomic_directory, atomic_write_json
from pcevolve.progress import Progress, progress_bar

logger = logging.getLogger(__name__)

PublicKind = Literal["in-domain", "disjoint"]
PUBLIC_KINDS: tuple[str, ...] = ("in-domain", "disjoint")
FORMAT = "pcevolve.demo-dataset"
FORMAT_VERSION = 1


def _spread(total: int, parts: int) -> list[int]:
    """``total`` split into ``parts`` near-equal integers, the larger ones first."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _class_text(data: DemoSource, label: int) -> str:
    name = data.class_names[label]
    return f"class {label}" if name == str(label) else f"class {label} ({name})"


def _public_classes(public: str, chosen: list[int]) -> list[int]:
    return list(range(10)) if public == "in-domain" else [c for c in range(10) if c not in chosen]


def _first_occurrences(hashes: list[str], seen: set[str]) -> np.ndarray:
    keep = np.zeros(len(hashes), dtype=bool)
    for i, digest in enumerate(hashes):
        if digest not in seen:
            seen.add(digest)
            keep[i] = True
    return keep


def _resize(samples: np.ndarray, size: int | None) -> np.ndarray:
    if size is None or samples.shape[1:3] == (size, size):
        return samples
    resized = [np.asarray(Image.fromarray(image).resize((size, size), RESAMPLE)) for image in samples]
    return np.stack(resized) if resized else np.zeros((0, size, size, *samples.shape[3:]), dtype=np.uint8)


def _validate_options(
    classes: Sequence[int], public: str, sizes: SplitSizes, seed: int, size: int | None
) -> list[int]:
    if public not in PUBLIC_KINDS:
        raise ValueError(f"public must be one of {', '.join(PUBLIC_KINDS)}, got {public!r}")
    chosen = sorted({int(c) for c in classes})
    if not chosen or len(chosen) != len(list(classes)):
        raise ValueError(f"classes must be distinct labels, got {list(classes)}")
    if chosen[0] < 0 or chosen[-1] > 9:
        raise ValueError(f"classes must lie in 0..9, got {list(classes)}")
    if public == "disjoint" and len(chosen) == 10:
        raise ValueError("a disjoint public pool needs at least one class outside --classes")
    if sizes.per_class < 2 or sizes.test_per_class < 2:
        raise ValueError("per_class and test_per_class must be at least 2 (a class needs two samples)")
    if sizes.full_size != 0 and sizes.full_size < 2 * len(chosen):
        raise ValueError(f"full_size must be 0 or at least {2 * len(chosen)} (two per class)")
    if sizes.public_size < 0:
        raise ValueError("public_size must not be negative")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    if size is not None and not 8 <= size <= 1024:
        raise ValueError(f"size must lie in 8..1024, got {size}")
    return chosen


def _draw(
    data: DemoSource, chosen: list[int], public: str, sizes: SplitSizes, rng: np.random.Generator
) -> tuple[dict[str, dict[int, np.ndarray]], np.ndarray, dict[str, int], list[DataProblem]]:
    """Indices of every split into ``data.train`` (``test`` into ``data.test`` when it exists)."""
    seen: set[str] = set()
    train_ok = _first_occurrences(data.train.sample_hashes(), seen)
    test_ok = _first_occurrences(data.test.sample_hashes(), seen) if data.test is not None else None
    removed = {"train": int((~train_ok).sum())}
    if test_ok is not None:
        removed["test"] = int((~test_ok).sum())

    problems: list[DataProblem] = []
    picks: dict[str, dict[int, np.ndarray]] = {"private": {}, "test": {}, "full": {}}
    used = ~train_ok
    full_counts = dict(zip(chosen, _spread(sizes.full_size, len(chosen))))
    for label in chosen:
        name = _class_text(data, label)
        pool = rng.permutation(np.flatnonzero(train_ok & (data.train.labels == label)))
        own_test = data.test is None
        wanted = {"private": sizes.per_class, **({"test": sizes.test_per_class} if own_test else {})}
        wanted["full"] = full_counts[label]
        if sum(wanted.values()) > len(pool):
            asked = " + ".join(f"{n} {split}" for split, n in wanted.items())
            problems.append(
                DataProblem(
                    f"{data.name}:train",
                    f"{name}: asked for {asked} = {sum(wanted.values())} images, only {len(pool)} available",
                )
            )
            continue
        start = 0
        for split, count in wanted.items():
            picks[split][label] = pool[start : start + count]
            start += count
        used[pool[:start]] = True
    if data.test is not None:
        assert test_ok is not None
        for label in chosen:
            pool = rng.permutation(np.flatnonzero(test_ok & (data.test.labels == label)))
            if sizes.test_per_class > len(pool):
                problems.append(
                    DataProblem(
                        f"{data.name}:test",
                        f"{_class_text(data, label)}: asked for {sizes.test_per_class} test images, "
                        f"only {len(pool)} available",
                    )
                )
                continue
            picks["test"][label] = pool[: sizes.test_per_class]

    public_classes = _public_classes(public, chosen)
    public_parts: list[np.ndarray] = []
    for label, count in zip(public_classes, _spread(sizes.public_size, len(public_classes))):
        pool = rng.permutation(np.flatnonzero(~used & (data.train.labels == label)))
        if count > len(pool):
            problems.append(
                DataProblem(
                    f"{data.name}:train",
                    f"{_class_text(data, label)}: the public pool needs {count} images of it, "
                    f"only {len(pool)} remain after the labelled splits",
                )
            )
            continue
        public_parts.append(pool[:count])
    public_indices = rng.permutation(np.concatenate(public_parts)) if public_parts else np.zeros(0, dtype=np.int64)
    return picks, public_indices, removed, problems


def _labelled(
    pool: LabeledDataset, picks: dict[int, np.ndarray], chosen: list[int], folders: list[str], size: int | None
) -> LabeledDataset:
    indices = np.concatenate([picks[label] for label in chosen])
    labels = np.concatenate([np.full(len(picks[label]), i, dtype=np.int64) for i, label in enumerate(chosen)])
    return LabeledDataset(
        samples=_resize(pool.samples[indices], size),
        labels=labels,
        class_names=tuple(folders),
        modality="image",
        sources=tuple(pool.sources[i] for i in indices),
    )


def _write_png(path: Path, image: np.ndarray) -> None:
    Image.fromarray(image).save(path, format="PNG")


def _write_labelled(folder: Path, data: LabeledDataset, bar: Progress) -> None:
    width = max(6, len(str(len(data))))
    for label, name in enumerate(data.class_names):
        target = folder / name
        target.mkdir(parents=True)
        for number, index in enumerate(np.flatnonzero(data.labels == label)):
            _write_png(target / f"{number:0{width}d}.png", data.samples[index])
            bar.update()


def _write_unlabelled(folder: Path, data: UnlabeledImages, bar: Progress) -> None:
    folder.mkdir(parents=True)
    width = max(6, len(str(len(data))))
    for number, image in enumerate(data.samples):
        _write_png(folder / f"{number:0{width}d}.png", image)
        bar.update()


def _describe(
    data: DemoSource,
    splits: dict[str, LabeledDataset | UnlabeledImages],
    *,
    seed: int,
    public: str,
    chosen: list[int],
    sizes: SplitSizes,
    size: int | None,
    classes: list[dict[str, Any]],
    removed: dict[str, int],
) -> dict[str, Any]:
    """The content of dataset.json: provenance, options, counts and hashes — no pixels, no public labels."""
    private = splits["private"]
    assert isinstance(private, LabeledDataset) and private.image_size is not None
    description: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "pcevolve_version": __version__,
        "source": {"name": data.name, **data.origin},
        "seed": seed,
        "options": {
            "public": public,
            "classes": chosen,
            "per_class": sizes.per_class,
            "test_per_class": sizes.test_per_class,
            "full_size": sizes.full_size,
            "public_size": sizes.public_size,
            "size": size,
        },
        "image": {"height": private.image_size[0], "width": private.image_size[1], "mode": private.image_mode},
        "classes": classes,
        "duplicates_removed": removed,
        "splits": {},
    }
    public_classes = _public_classes(public, chosen)
    origins = {"private": "train", "test": "test" if data.test is not None else "train", "full": "train"}
    for name, split in splits.items():
        entry: dict[str, Any] = {"path": name, "labelled": isinstance(split, LabeledDataset)}
        entry["drawn_from"] = origins.get(name, "train")
        if name == "public":
            entry["source_classes"] = public_classes
        entry.update(split.fingerprint())
        description["splits"][name] = entry
    return description


def prepare_demo(
    source: str,
    out: str | os.PathLike[str],
    *,
    public: PublicKind = "in-domain",
    classes: Sequence[int] = (0, 1, 2, 3, 4),
    per_class: int | None = None,
    public_size: int | None = None,
    test_per_class: int | None = None,
    full_size: int | None = None,
    seed: int = 0,
    size: int | None = None,
    source_dir: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
    progress: bool | None = None,
) -> dict[str, Any]:
    """Write a demo dataset (private / test / full / public) cut from a public benchmark.

    Args:
        source: ``"fashion-mnist"``, ``"mnist"`` or ``"digits"`` (see :mod:`pcevolve.data.sources`).
        out: The folder to create.
        public: ``"in-domain"`` (all ten classes) or ``"disjoint"`` (only classes not in ``classes``).
        classes: Labels (0..9) of the private/test/full classes.
        per_class: Private images per class. ``None``: the source's default (100; digits 30).
        public_size: Unlabelled public images; 0 writes none. ``None``: 20000 (digits 500).
        test_per_class: Test images per class. ``None``: the source's default (fashion-mnist 1000, mnist 200,
            digits 40).
        full_size: Further labelled images over all selected classes; 0 writes none.
            ``None``: 10000 (digits 250).
        seed: Seed of the one generator that draws every split.
        size: Resize images to ``size x size`` (LANCZOS); ``None`` keeps the native size.
        source_dir: Folder of the benchmark's IDX files (see :func:`~pcevolve.data.sources.load_demo_source`).
        overwrite: Replace a dataset prepared at ``out`` before (only once the new one is complete; nothing
            pcevolve did not write is ever replaced).
        progress: Report progress on stderr (a bar on a terminal, lines otherwise); ``None`` as ``True``.

    Returns:
        What was written to ``out/dataset.json``.

    Raises:
        pcevolve.io.TargetExistsError: ``out`` cannot be written (checked before any work:
            :func:`~pcevolve.data.prepared_folder.check_prepare_target`).
        SourceNotFoundError: The benchmark's files are absent; says how to install them.
        DataError: More images requested than a class has (naming the class and the numbers).
        ValueError: An invalid option.
    """
    started = time.perf_counter()
    out = Path(out)
    defaults = DEFAULT_SIZES.get(source)
    if defaults is None:
        raise ValueError(f"unknown source {source!r}; choose one of {', '.join(SOURCES)}")
    sizes = SplitSizes(
        per_class=defaults.per_class if per_class is None else per_class,
        test_per_class=defaults.test_per_class if test_per_class is None else test_per_class,
        full_size=defaults.full_size if full_size is None else full_size,
        public_size=defaults.public_size if public_size is None else public_size,
    )
    chosen = _validate_options(classes, public, sizes, seed, size)
    out = check_prepare_target(out, overwrite=overwrite)

    data = load_demo_source(source, source_dir=source_dir)
    rng = np.random.default_rng(seed)
    picks, public_indices, removed, problems = _draw(data, chosen, public, sizes, rng)
    if problems:
        raise DataError(problems)

    folders = [class_folder_name(label, data.class_names[label]) for label in chosen]
    test_pool = data.test if data.test is not None else data.train
    splits: dict[str, LabeledDataset | UnlabeledImages] = {
        "private": _labelled(data.train, picks["private"], chosen, folders, size),
        "test": _labelled(test_pool, picks["test"], chosen, folders, size),
    }
    if sizes.full_size:
        splits["full"] = _labelled(data.train, picks["full"], chosen, folders, size)
    if sizes.public_size:
        splits["public"] = UnlabeledImages(
            samples=_resize(data.train.samples[public_indices], size),
            sources=tuple(data.train.sources[i] for i in public_indices),
        )
    # Resizing can in principle map two different images to the same pixels; never ship that.
    check_disjoint(splits)

    class_table = [
        {"label": label, "name": data.class_names[label], "folder": folder} for label, folder in zip(chosen, folders)
    ]
    description = _describe(
        data, splits, seed=seed, public=public, chosen=chosen, sizes=sizes, size=size, classes=class_table,
        removed=removed,
    )

    total = sum(len(split) for split in splits.values())
    with atomic_directory(out, overwrite=overwrite) as staging:
        bar = progress_bar(total, f"writing {out.name}", "img", enabled=progress is not False)
        try:
            for name, split in splits.items():
                if isinstance(split, LabeledDataset):
                    _write_labelled(staging / name, split, bar)
                else:
                    _write_unlabelled(staging / name, split, bar)
        finally:
            bar.close()
        atomic_write_json(staging / "classes.json", {"classes": class_table})
        atomic_write_json(staging / "dataset.json", description)
        # Individual PNGs are not fsynced one by one (tens of thousands); flush them all
        # before the rename makes the folder visible, so a crash cannot expose empty files.
        os.sync()
    logger.info("wrote %d images to %s in %.1f s", total, out, time.perf_counter() - started)
    return description

