"""Write ``RUN/report/``: report.html, report.md, the PNGs next to it, and evaluation.json.

Order matters: the document is built and every sample image in it checked against the private
images *before* anything is written; the folder is then built under a temporary name and
renamed into place (``pcevolve.io.atomic_directory``), so a refused or crashed report leaves
the previous report, or nothing, never half a folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from pcevolve.evaluation.file_run import FileRunEvaluation
from pcevolve.evaluation.run_evaluation import RunEvaluation
from pcevolve.io import (
    atomic_directory,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    private_folder,
)
from pcevolve.report import figures
from pcevolve.report.build import GRID_PER_CLASS, build_document
from pcevolve.report.document import Document, SampleGrid
from pcevolve.report.render import render_html, render_markdown
from pcevolve.report.safety import (
    PrivateSampleInReport,
    check_no_private_rows,
    check_no_private_samples,
    check_no_private_texts,
)
from pcevolve.run_folder import RunFolder


def write_document(folder: str | os.PathLike[str], document: Document, *, private: np.ndarray | None = None,
                   private_rows: np.ndarray | None = None, private_texts: np.ndarray | None = None,
                   evaluation_json: dict | None = None, threshold: float | None = None) -> Path:
    """Check, render and write a document into ``folder`` (replaced as a whole).

    Args:
        folder: The report folder.
        document: What to write.
        private: The private images every sample grid is checked against (needed when the document has a grid).
        private_rows: The private table rows every row preview is checked against (needed when it has a preview).
        private_texts: The private texts every text preview is checked against (needed when it has one).
        evaluation_json: Written as ``evaluation.json`` when given.
        threshold: Near-copy pixel distance (default: ``near_copy_threshold`` of the private images).

    Raises:
        PrivateSampleInReport: A grid holds a private image or a near copy, a preview a private row, a text
            preview a private text or a near duplicate, or there is nothing to check them against; nothing was
            written.
    """
    if private is not None or document.grids():
        if private is None:
            raise PrivateSampleInReport("refusing to write the report: it shows sample images but no private images "
                                        "were given to check them against")
        check_no_private_samples(document, private, threshold=threshold)
    if document.previews():
        if private_rows is None:
            raise PrivateSampleInReport("refusing to write the report: it shows table rows but no private rows were "
                                        "given to check them against")
        check_no_private_rows(document, private_rows)
    if document.text_previews():
        if private_texts is None:
            raise PrivateSampleInReport("refusing to write the report: it shows texts but no private texts were "
                                        "given to check them against")
        check_no_private_texts(document, private_texts)
    images = {plot.name: plot.png for plot in document.plots()}
    for grid in document.grids():
        images[grid.name] = figures.sample_grid_png(grid)
    names = [block.name for block in document.blocks() if isinstance(block, SampleGrid) or hasattr(block, "png")]
    if len(set(names)) != len(names):
        raise ValueError(f"figure names must be unique in a report, got {names}")
    with atomic_directory(folder, overwrite=True) as staging:
        for name, png in images.items():
            atomic_write_bytes(staging / f"{name}.png", png)
        atomic_write_text(staging / "report.md", render_markdown(document))
        atomic_write_text(staging / "report.html", render_html(document, images))
        if evaluation_json is not None:
            atomic_write_json(staging / "evaluation.json", evaluation_json)
    return Path(folder)


def write_report(evaluation: RunEvaluation, *, folder: str | os.PathLike[str] | None = None,
                 grid_per_class: int = GRID_PER_CLASS) -> Path:
    """Build and write the report of an image evaluation (:func:`write_run_report`)."""
    document = build_document(evaluation, grid_per_class=grid_per_class)
    return write_run_report(evaluation, evaluation.inputs.folder, document, folder=folder,
                            private=evaluation.inputs.private.samples)


def write_run_report(evaluation: RunEvaluation | FileRunEvaluation, run: Path, document: Document, *,
                     folder: str | os.PathLike[str] | None = None, **private: np.ndarray) -> Path:
    """Write a run's ``document`` with its ``evaluation.json`` into ``folder`` (default ``RUN/report``; checked against
    the ``private`` samples, as :func:`write_document` names them), then the exact private figures the report leaves
    out into ``RUN/secure/evaluation.json``. With the default folder, the report's files get the run's start time, so
    their times do not reveal how long the evaluation on the private data took.

    Raises:
        PrivateSampleInReport: The document shows a private sample (or a near copy); nothing was written.
    """
    target = Path(folder) if folder is not None else run / "report"
    written = write_document(target, document, evaluation_json=evaluation.to_json(), **private)
    secure = RunFolder(run)
    private_folder(secure.secure_path)
    atomic_write_json(secure.secure_path / "evaluation.json", evaluation.to_secure_json())
    secure.seal_secure()
    if folder is None and (run / "manifest.json").is_file():
        secure.settle_times()
    return written
