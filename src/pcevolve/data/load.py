"""One entry point for labelled data: a class-folder image dataset or a CSV file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pcevolve.data.dataset import LabeledDataset
from pcevolve.data.errors import DataError, DataProblem
from pcevolve.data.image_files import ImageMode
from pcevolve.data.image_folder import read_image_folder
from pcevolve.data.tabular import read_labeled_csv


def read_labeled(
    path: str | Path,
    *,
    size: int | None = None,
    mode: ImageMode | None = None,
    label_column: str = "label",
    class_names: Sequence[str] | None = None,
    min_per_class: int = 2,
) -> LabeledDataset:
    """Read labelled data, choosing the reader by what ``path`` is.

    A folder is read with :func:`~pcevolve.data.image_folder.read_image_folder` (``size``
    and ``mode`` apply); a ``.csv`` file with :func:`~pcevolve.data.tabular.read_labeled_csv`
    (``label_column`` applies).

    Raises:
        DataError: ``path`` is missing or of an unsupported kind, or the reader found problems.
    """
    path = Path(path)
    if path.is_dir():
        return read_image_folder(path, size=size, mode=mode, class_names=class_names, min_per_class=min_per_class)
    if path.is_file() and path.suffix.lower() == ".csv":
        return read_labeled_csv(path, label_column=label_column, class_names=class_names, min_per_class=min_per_class)
    if not path.exists():
        raise DataError([DataProblem(str(path), "does not exist")])
    raise DataError([DataProblem(str(path), "unsupported input; expected a folder of class folders or a .csv file")])
