"""Stage 1 input: reading, validating and preparing labelled datasets, with errors that name the file or row.

Modules, one concept each:

* :mod:`~pcevolve.data.dataset` — :class:`LabeledDataset`, and the unlabelled pools' common base
  (:class:`~pcevolve.data.dataset.UnlabeledSamples`, of which :class:`UnlabeledImages` is one)
* :mod:`~pcevolve.data.image_folder` — class-folder and flat image folders
* :mod:`~pcevolve.data.image_files` — decoding, size and mode rules for image files
* :mod:`~pcevolve.data.idx` — MNIST-style IDX files
* :mod:`~pcevolve.data.tabular` — CSV with a label column
* :mod:`~pcevolve.data.load` — :func:`read_labeled`, choosing the reader by path
* :mod:`~pcevolve.data.duplicates` — the same sample in two splits
* :mod:`~pcevolve.data.assumptions` — what the guarantee assumes of the data (a pool chosen without the private set,
  declared classes) and the console notes where the private data meets it
* :mod:`~pcevolve.data.sources` / :mod:`~pcevolve.data.prepare` — demo datasets from public benchmarks

Every reader collects all problems and raises one :class:`DataError` listing them,
each naming its file or ``file.csv:row N``.
"""

from pcevolve.data.assumptions import delta_note, pool_overlap, pool_overlap_warning, small_classes_note
from pcevolve.data.dataset import LabeledDataset, UnlabeledImages
from pcevolve.data.duplicates import check_disjoint, find_duplicates
from pcevolve.data.errors import DataError, DataProblem, DataWarning
from pcevolve.data.idx import read_idx, read_idx_dataset, write_idx
from pcevolve.data.image_files import IMAGE_EXTENSIONS, ImageInfo, describe_images
from pcevolve.data.image_folder import read_image_folder, read_unlabeled_images
from pcevolve.data.load import read_labeled
from pcevolve.data.prepare import prepare_demo
from pcevolve.data.sources import SOURCES, SourceNotFoundError, load_demo_source
from pcevolve.data.tabular import read_labeled_csv

__all__ = [
    "IMAGE_EXTENSIONS",
    "SOURCES",
    "DataError",
    "DataProblem",
    "DataWarning",
    "ImageInfo",
    "LabeledDataset",
    "SourceNotFoundError",
    "UnlabeledImages",
    "check_disjoint",
    "describe_images",
    "find_duplicates",
    "load_demo_source",
    "pool_overlap",
    "pool_overlap_warning",
    "delta_note",
    "prepare_demo",
    "read_idx",
    "read_idx_dataset",
    "read_image_folder",
    "read_labeled",
    "read_labeled_csv",
    "read_unlabeled_images",
    "small_classes_note",
    "write_idx",
]
