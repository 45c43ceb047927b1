"""The report leaves the secure zone with the synthetic set, so it must hold no private sample.

:func:`check_no_private_samples` compares every image of every :class:`~pcevolve.report.document.SampleGrid`
with every private image (Euclidean distance on raw pixels,
:func:`pcevolve.evaluation.copies.find_near_copies`) and refuses — raises
:class:`PrivateSampleInReport` — if any is a private image or a near copy of one: within
:func:`~pcevolve.evaluation.copies.near_copy_threshold` (RMS difference ≤
:data:`~pcevolve.evaluation.copies.NEAR_COPY_RMS` = 10 grey levels per pixel). It also refuses
images it cannot compare (another shape than the private images). The writer calls it before
it creates anything, so a refused report leaves no file behind.

:func:`check_no_private_rows` does the same for tables: it refuses a
:class:`~pcevolve.report.document.RowPreview` row equal in every column to a private row
(:func:`pcevolve.evaluation.tabular.exact_copies`), or one it cannot compare (another width).
"""

from __future__ import annotations

import numpy as np

from pcevolve.evaluation.copies import find_near_copies, near_copy_threshold, nearest_neighbours
from pcevolve.evaluation.tabular import exact_copies
from pcevolve.report.document import Document


class PrivateSampleInReport(Exception):
    """An image or a table row bound for the report is a private sample (or a near copy of a private image), or
    cannot be checked; nothing was written."""


def check_no_private_samples(document: Document, private: np.ndarray, *, threshold: float | None = None) -> int:
    """Refuse a document whose sample grids contain a private image or a near copy of one.

    Args:
        document: The report about to be written.
        private: uint8 (M, H, W[, C]) private images.
        threshold: Euclidean pixel distance at or under which an image counts as a near copy;
            default :func:`~pcevolve.evaluation.copies.near_copy_threshold` of the private images' shape.

    Returns:
        How many images were checked.

    Raises:
        PrivateSampleInReport: Naming the grid and image, its source and its distance.
    """
    private = np.asarray(private)
    limit = near_copy_threshold(private.shape[1:]) if threshold is None else float(threshold)
    checked = 0
    for grid in document.grids():
        images = np.asarray(grid.images)
        if len(images) == 0:
            continue
        if images.shape[1:] != private.shape[1:]:
            raise PrivateSampleInReport(f"refusing to write the report: grid {grid.name!r} holds images of shape "
                                        f"{images.shape[1:]}, which cannot be compared with the private images "
                                        f"{private.shape[1:]}")
        hits = find_near_copies(images, private, limit)
        if hits.size:
            first = int(hits[0])
            _, distance = nearest_neighbours(images[first : first + 1], private)
            source = grid.sources[first] if first < len(grid.sources) else f"image {first}"
            raise PrivateSampleInReport(
                f"refusing to write the report: {hits.size} image(s) of grid {grid.name!r} are private samples or "
                f"near copies (first: {source}, pixel distance {distance[0]:.1f} ≤ {limit:.1f}); a report must "
                "not carry private data out of the secure zone")
        checked += len(images)
    return checked


def check_no_private_rows(document: Document, private: np.ndarray) -> int:
    """Refuse a document whose row previews contain a private row.

    Args:
        document: The report about to be written.
        private: float64 (M, F) private rows, in the schema order of the previews' values.

    Returns:
        How many rows were checked.

    Raises:
        PrivateSampleInReport: Naming the preview and the row's source.
    """
    private = np.asarray(private, dtype=np.float64)
    checked = 0
    for preview in document.previews():
        values = np.asarray(preview.values, dtype=np.float64)
        if len(values) == 0:
            continue
        if private.ndim != 2 or values.shape[1] != private.shape[1]:
            raise PrivateSampleInReport(f"refusing to write the report: preview {preview.name!r} holds rows of "
                                        f"{values.shape[1]} columns, which cannot be compared with the private rows "
                                        f"{private.shape[1:]}")
        hits = exact_copies(values, private) if len(private) else np.zeros(0, np.int64)
        if hits.size:
            first = int(hits[0])
            source = preview.sources[first] if first < len(preview.sources) else f"row {first}"
            raise PrivateSampleInReport(
                f"refusing to write the report: {hits.size} row(s) of preview {preview.name!r} equal a private row "
                f"(first: {source}); a report must not carry private data out of the secure zone")
        checked += len(values)
    return checked
