"""Image datasets on disk: a folder per class (labelled) or one flat folder (the public pool).

Labelled layout::

    root/
      <class_name>/*.png|jpg|jpeg
      ...

Class order is the natural order of folder names (``2_x`` before ``10_x``) unless
``class_names`` declares it. Files directly inside ``root`` that are not images
(a ``README``, ``classes.json``) are ignored; an image directly inside ``root`` is a
problem, since its class is unknown. Inside a class folder, hidden files are
ignored and everything else that is not a supported image is a problem, as is a
nested folder. See :mod:`pcevolve.data.image_files` for the per-file rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pcevolve.data.dataset import LabeledDataset, UnlabeledImages
from pcevolve.data.errors import DataProblem, raise_if_problems
from pcevolve.data.image_files import ImageMode, is_image_name, list_folder, load_images
from pcevolve.data.ordering import natural_key


def _folder_problem(folder: Path) -> DataProblem | None:
    if not folder.exists():
        return DataProblem(str(folder), "folder does not exist")
    if not folder.is_dir():
        return DataProblem(str(folder), "not a folder")
    return None


def read_image_folder(
    root: str | Path,
    *,
    size: int | None = None,
    mode: ImageMode | None = None,
    class_names: Sequence[str] | None = None,
    min_per_class: int = 2,
) -> LabeledDataset:
    """Read a labelled image dataset laid out as ``root/<class_name>/<image>``.

    Args:
        root: The dataset folder.
        size: Resize all images to ``size x size``; ``None`` requires one common size.
        mode: ``"L"`` or ``"RGB"``; ``None`` uses the mode most images have.
        class_names: The expected classes, in label order. A folder not in the list is a problem; a
            listed class without a folder is one too unless ``min_per_class`` is 0 (it is read as an empty
            class). ``None``: every subfolder is a class.
        min_per_class: Fewest images a class may have; 0 accepts empty classes (a run reads its private data
            so: the classes are declared, and a class's size must never decide whether it proceeds).

    Returns:
        The dataset; ``sources`` are the image paths.

    Raises:
        DataError: Every problem found (missing/empty folders, small classes, unreadable,
            truncated or unsupported files, mixed sizes without ``size``, ...), each naming its path.

    Warns:
        DataWarning: images had mixed modes and were converted; names the files.
    """
    root = Path(root)
    problem = _folder_problem(root)
    raise_if_problems([problem] if problem else [])

    problems: list[DataProblem] = []
    stray_images, folders, _ = list_folder(root)
    stray = "image outside a class folder; move it into root/<class_name>/"
    problems += [DataProblem(str(p), stray) for p in stray_images]
    found = {folder.name: folder for folder in folders}
    if class_names is None:
        names = sorted(found, key=natural_key)
    else:
        names = [str(name) for name in class_names]
        if len(set(names)) != len(names):
            raise ValueError(f"class_names must be unique, got {names}")
        for unknown in sorted(set(found) - set(names), key=natural_key):
            problems.append(DataProblem(str(found[unknown]), f"unknown class {unknown!r}; expected one of {names}"))
        for missing in names:
            if missing not in found and min_per_class > 0:
                problems.append(DataProblem(str(root / missing), f"declared class {missing!r} has no folder"))
    if not names:
        problems.append(DataProblem(str(root), "no class folders found; expected root/<class_name>/*.png"))

    paths: list[Path] = []
    labels: list[int] = []
    for label, name in enumerate(names):
        if name not in found:
            continue
        images, nested, unsupported = list_folder(found[name])
        problems += unsupported
        problems += [DataProblem(str(p), "nested folder inside a class folder is not supported") for p in nested]
        if not images and min_per_class > 0:
            problems.append(DataProblem(str(found[name]), f"class {name!r} has no images (empty class folder)"))
        elif len(images) < min_per_class:
            problems.append(
                DataProblem(
                    str(found[name]),
                    f"class {name!r} has only {len(images)} image(s); at least {min_per_class} are needed",
                )
            )
        paths += images
        labels += [label] * len(images)

    samples, image_problems = load_images(paths, size=size, mode=mode)
    raise_if_problems(problems + image_problems)
    assert samples is not None
    return LabeledDataset(
        samples=samples,
        labels=np.asarray(labels, dtype=np.int64),
        class_names=tuple(names),
        modality="image",
        sources=tuple(str(p) for p in paths),
    )


def read_unlabeled_images(
    folder: str | Path,
    *,
    size: int | None = None,
    mode: ImageMode | None = None,
) -> UnlabeledImages:
    """Read a flat folder of images (the public pool); no labels are read or inferred.

    Args:
        folder: The folder; subfolders and non-image files are problems, hidden files are ignored.
        size: Resize all images to ``size x size``; ``None`` requires one common size.
        mode: ``"L"`` or ``"RGB"``; ``None`` uses the mode most images have.

    Raises:
        DataError: Every problem found, each naming its path.

    Warns:
        DataWarning: images had mixed modes and were converted; names the files.
    """
    folder = Path(folder)
    problem = _folder_problem(folder)
    raise_if_problems([problem] if problem else [])
    images, nested, problems = list_folder(folder)
    problems += [DataProblem(str(p), "subfolder in an unlabelled image folder; it must be flat") for p in nested]
    if not images:
        problems.append(DataProblem(str(folder), "no images found"))
    samples, image_problems = load_images(images, size=size, mode=mode)
    raise_if_problems(problems + image_problems)
    assert samples is not None
    return UnlabeledImages(samples=samples, sources=tuple(str(p) for p in images))


def looks_like_class_folders(path: str | Path) -> bool:
    """Whether ``path`` holds class subfolders (labelled) rather than images only (unlabelled)."""
    _, folders, _ = list_folder(Path(path))
    return bool(folders) or not any(is_image_name(p.name) for p in Path(path).iterdir())
