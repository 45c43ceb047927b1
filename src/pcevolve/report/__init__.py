"""The evaluation report: ``RUN/report/report.html``, ``report.md`` with its PNGs, ``evaluation.json``.

Modules (one concept each):

* ``document`` — the report as data (sections of paragraphs, tables, plots, sample grids);
* ``build`` — an evaluation → a document;
* ``figures`` — the charts (matplotlib object API, no pyplot);
* ``render`` — a document → self-contained HTML, and → Markdown;
* ``safety`` — the refusal to write any private sample or near copy of one (images), or any private row (tables);
* ``write`` — check, render, write atomically;
* ``table`` — a tabular run's evaluation → its document, and its writer.
"""

from pcevolve.report.build import build_document
from pcevolve.report.document import Document, Paragraph, Plot, RowPreview, SampleGrid, Section, Table
from pcevolve.report.render import render_html, render_markdown
from pcevolve.report.safety import PrivateSampleInReport, check_no_private_rows, check_no_private_samples
from pcevolve.report.table import build_table_document, write_table_report
from pcevolve.report.write import write_document, write_report

__all__ = [
    "Document",
    "Paragraph",
    "Plot",
    "PrivateSampleInReport",
    "RowPreview",
    "SampleGrid",
    "Section",
    "Table",
    "build_document",
    "build_table_document",
    "check_no_private_rows",
    "check_no_private_samples",
    "render_html",
    "render_markdown",
    "write_document",
    "write_report",
    "write_table_report",
]
