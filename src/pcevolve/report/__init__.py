"""The evaluation report: ``RUN/report/report.html``, ``report.md`` with its PNGs, ``evaluation.json``.

Modules (one concept each):

* ``document`` — the report as data (sections of paragraphs, tables, plots, sample grids, row and text previews);
* ``build`` — an evaluation → a document;
* ``figures`` — the charts (matplotlib object API, no pyplot);
* ``render`` — a document → self-contained HTML, and → Markdown;
* ``safety`` — the refusal to write any private sample or near copy of one (images), any private row (tables), or
  any private text or near duplicate of one (texts);
* ``write`` — check, render, write atomically;
* ``table`` — a tabular run's evaluation → its document, and its writer;
* ``text`` — a text run's evaluation → its document, and its writer;
* ``per_class``, ``marginals``, ``neighbours`` — what the table and text reports share: the per-class section, the
  distributions they draw (columns, text lengths), and synthetic samples beside their nearest public ones.
"""

from pcevolve.report.build import build_document
from pcevolve.report.document import (
    Document,
    Paragraph,
    Plot,
    RowPairs,
    RowPreview,
    SampleGrid,
    Section,
    Table,
    TextPairs,
    TextPreview,
)
from pcevolve.report.render import render_html, render_markdown
from pcevolve.report.safety import (
    PrivateSampleInReport,
    check_no_private_rows,
    check_no_private_samples,
    check_no_private_texts,
)
from pcevolve.report.table import build_table_document, write_table_report
from pcevolve.report.text import build_text_document, write_text_report
from pcevolve.report.write import write_document, write_report

__all__ = [
    "Document",
    "Paragraph",
    "Plot",
    "PrivateSampleInReport",
    "RowPairs",
    "RowPreview",
    "SampleGrid",
    "Section",
    "Table",
    "TextPairs",
    "TextPreview",
    "build_document",
    "build_table_document",
    "build_text_document",
    "check_no_private_rows",
    "check_no_private_samples",
    "check_no_private_texts",
    "render_html",
    "render_markdown",
    "write_document",
    "write_report",
    "write_table_report",
    "write_text_report",
]
