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
(:func:`pcevolve.evaluation.table_privacy.exact_copies`), or one it cannot compare (another width).

:func:`check_no_private_texts` does the same for texts: it refuses a
:class:`~pcevolve.report.document.TextPreview` whose shown text or whole text is a private text or a near duplicate
of one (:func:`pcevolve.evaluation.text_duplicates.text_copies`: equal after normalisation, or TF-IDF cosine
similarity at least :data:`~pcevolve.evaluation.text_duplicates.NEAR_DUPLICATE_COSINE`), or shares a passage of
:data:`~pcevolve.evaluation.text_duplicates.SHARED_RUN_WORDS` or more consecutive words with one
(:func:`pcevolve.evaluation.text_duplicates.shared_runs`).
"""

from __future__ import annotations

import numpy as np

from pcevolve.evaluation.copies import (
    find_near_copies,
    near_copy_threshold,
    nearest_neighbours,
)
from pcevolve.evaluation.table_privacy import exact_copies
from pcevolve.evaluation.text_duplicates import (
    NEAR_DUPLICATE_COSINE,
    SHARED_RUN_WORDS,
    shared_runs,
    text_copies,
)
from pcevolve.report.document import Document


class PrivateSampleInReport(Exception):
    """An image, a table row or a text bound for the report is a private sample (or a near copy of a private image
    or text), or cannot be checked; nothing was written."""


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


def check_no_private_texts(document: Document, private: np.ndarray, *,
                           threshold: float = NEAR_DUPLICATE_COSINE, run_words: int = SHARED_RUN_WORDS) -> int:
    """Refuse a document whose text previews contain a private text, a near duplicate of one, or a passage of one.

    Both the whole text and what the preview shows of it are checked, so a shortened text that reproduces the start
    of a private text is refused too.

    Args:
        document: The report about to be written.
        private: (M,) private texts.
        threshold: TF-IDF cosine similarity at or above which a text is a near duplicate.
        run_words: Consecutive words shared with a private text at which a text is refused.

    Returns:
        How many previewed texts were checked.

    Raises:
        PrivateSampleInReport: Naming the preview, the text's source and how close it came.
    """
    private = np.asarray(private, dtype=str)
    if private.ndim != 1:
        raise PrivateSampleInReport(f"refusing to write the report: the private texts to check it against are not "
                                    f"a list of texts (shape {private.shape})")
    checked = 0
    for preview in document.text_previews():
        count = len(preview.texts)
        if count == 0:
            continue
        both = np.array([*preview.texts, *preview.shown], dtype=str)
        found = text_copies(both, private, threshold=threshold)
        passage = shared_runs(both, private, words=run_words)
        # A text is refused when its whole form or its shown form is an exact or near copy, or holds a passage.
        exact = found.exact[:count] | found.exact[count:]
        near = found.near[:count] | found.near[count:]
        quoted = passage[:count] | passage[count:]
        refused = near | quoted
        if refused.any():
            first = int(np.flatnonzero(refused)[0])
            source = preview.sources[first] if first < len(preview.sources) else f"text {first + 1}"
            how = ("equal to a private text" if exact[first] else
                   f"TF-IDF cosine similarity {max(found.cosine[first], found.cosine[count + first]):.3f} "
                   f"≥ {threshold:g} to a private text" if near[first] else
                   f"{run_words} or more consecutive words of a private text")
            raise PrivateSampleInReport(
                f"refusing to write the report: {int(refused.sum())} text(s) of preview {preview.name!r} are private "
                f"texts, near duplicates or passages of them (first: {source}, {how}); a report must not carry "
                "private data out of the secure zone")
        checked += count
    return checked
