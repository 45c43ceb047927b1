"""Writers of a synthetic set in the input's own format, built under a temporary name so a crash leaves nothing
half-written. Each refuses a path that already holds something unless told ``overwrite=True`` (then the old set
is replaced only once the new one is complete), and never puts a folder where a file is or a file where a folder
is."""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from pcevolve.data.table_schema import TableSchema
from pcevolve.io import TargetExistsError, atomic_directory, atomic_write_bytes, refuse_existing


#: Suffixes of a file name: a folder of images is never made under one (``save("out.csv")`` on an image run).
FILE_SUFFIXES = (".csv", ".jsonl", ".json", ".txt", ".png", ".jpg", ".jpeg", ".npz", ".npy", ".zip", ".tar", ".gz",
                 ".parquet", ".xlsx", ".yaml", ".yml")


def write_image_folder(path: str | os.PathLike[str], samples: np.ndarray, labels: np.ndarray,
                       class_names: Sequence[str], *, overwrite: bool = False) -> Path:
    """``path/<class name>/<class name>_<index>.png`` for every sample, built under a temporary name.

    Grey samples are (N, H, W) uint8, colour ones (N, H, W, 3). An existing empty folder is filled; a non-empty
    one is replaced (once the new one is complete) only with ``overwrite``; a file is never replaced.

    Raises:
        pcevolve.io.TargetExistsError: ``path`` holds something and may not be replaced, or names a file
            (``out.csv``).
    """
    samples = np.asarray(samples)
    labels = np.asarray(labels)
    if samples.dtype != np.uint8 or samples.ndim not in (3, 4) or len(samples) != len(labels):
        raise ValueError(f"expected uint8 samples (N, H, W[, 3]) with N labels, got {samples.dtype} "
                         f"{samples.shape} and {labels.shape}")
    refuse_existing(path, overwrite=overwrite, folder=True)
    suffix = Path(path).suffix.lower()
    if suffix in FILE_SUFFIXES:
        raise TargetExistsError(f"{path} names a {suffix} file; an image set is a folder (one folder of PNGs per "
                                "class): give a folder path")
    with atomic_directory(path, overwrite=True) as staging:
        for k, name in enumerate(class_names):
            folder = staging / name
            folder.mkdir()
            for index, sample in enumerate(samples[labels == k]):
                Image.fromarray(sample).save(folder / f"{name}_{index:05d}.png", optimize=False)
    return Path(path)


def write_table_csv(path: str | os.PathLike[str], samples: np.ndarray, labels: np.ndarray,
                    class_names: Sequence[str], schema: TableSchema, *, overwrite: bool = False) -> Path:
    """A CSV with the schema's columns, in order, then the label column; each value written as its column says
    (categories by name, integers without decimals, numbers clipped to the column's public bounds).

    Written to a temporary file and renamed, so a crash leaves no half-written table. An existing file is
    replaced only with ``overwrite``; a folder never.

    Raises:
        pcevolve.io.TargetExistsError: ``path`` holds something and may not be replaced.
    """
    refuse_existing(path, overwrite=overwrite, folder=False)
    samples = np.asarray(samples, dtype=np.float64)
    labels = np.asarray(labels)
    if samples.ndim != 2 or samples.shape[1] != len(schema.columns) or len(samples) != len(labels):
        raise ValueError(f"expected ({len(labels)}, {len(schema.columns)}) rows for the schema's columns, got "
                         f"{samples.shape}")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*schema.names, schema.label_column])
    for row, label in zip(samples, labels, strict=True):
        writer.writerow([column.format(value) for column, value in zip(schema.columns, row, strict=True)]
                        + [class_names[int(label)]])
    return atomic_write_bytes(Path(path), buffer.getvalue().encode("utf-8"))


def write_texts_jsonl(path: str | os.PathLike[str], samples: np.ndarray, labels: np.ndarray,
                      class_names: Sequence[str | int | bool], *, text_field: str = "text",
                      label_field: str = "label", overwrite: bool = False) -> Path:
    """JSON Lines, one ``{text_field: text, label_field: class}`` object per text, written atomically; an
    existing file is replaced only with ``overwrite``, a folder never (:class:`pcevolve.io.TargetExistsError`).

    Each class is written with its own JSON type — ``0`` a number, ``"0"`` text, ``True`` ``true`` — so pass the
    classes as the input's labels have them (``dataset.class_labels``, or the declared ``data.classes``), not their
    text forms, for a delivered file whose labels read back exactly as the input's."""
    refuse_existing(path, overwrite=overwrite, folder=False)
    texts = np.asarray(samples)
    labels = np.asarray(labels)
    if texts.ndim != 1 or len(texts) != len(labels):
        raise ValueError(f"expected a 1-D array of texts with one label each, got {texts.shape} and {labels.shape}")
    lines = [_one_line(json.dumps({text_field: str(text), label_field: class_names[int(label)]}, ensure_ascii=False))
             for text, label in zip(texts, labels, strict=True)]
    return atomic_write_bytes(Path(path), ("\n".join(lines) + ("\n" if lines else "")).encode("utf-8"))


# Characters JSON leaves unescaped that some line readers (Python's str.splitlines, many editors) take for a line
# break: escaped, so that every tool sees one record per line.
_LINE_BREAKERS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _one_line(record: str) -> str:
    """``record`` (one JSON object) with no character any line reader could split it at."""
    return record.translate(_LINE_BREAKERS)
