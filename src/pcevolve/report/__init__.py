"""The evaluation report: ``RUN/report/report.html``, ``report.md`` with its PNGs, ``evaluation.json``.

Modules (one concept each):

* ``document`` — the report as data (sections of paragraphs, tables, plots, sample grids, row and text previews);
* ``build`` — an evaluation → a document;
* ``figures`` — the charts (matplotlib object API, no pyplot);
* ``render`` — a document → self-contained HTML, and → Markdown;
* ``safety`` — the refusal to write any private sample or near copy of one (images), any private row (tables), or
  any private text or near duplicate of one (texts);
* ``write`` — check, render, write atomically, and a run's report with its secure figures;
* ``file_report`` — the report of a table or text run: its document and the sections both share (headline, per
  class, utility, privacy, settings), each given what its modality says differently;
* ``table`` — a tabular run's evaluation → its document, and its writer;
* ``text`` — a text run's evaluation → its document, and its writer;
* ``marginals``, ``neighbours`` — what the table and text reports draw: the distributions (columns, text lengths),
  and synthetic samples beside their nearest public ones;
* ``judges`` — :data:`~pcevolve.report.judges.JUDGES`, the judge of each modality (its evaluation, then its
  report), which ``pcevolve evaluate`` dispatches to.
"""

from pcevolve.lazy_exports import lazy_exports

# Imported on first use: the figures load matplotlib, and `pcevolve evaluate` checks its arguments before.
__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "build": ["build_document"],
    "document": ["Document", "Paragraph", "Plot", "RowPairs", "RowPreview", "SampleGrid", "Section", "Table",
                 "TextPairs", "TextPreview"],
    "judges": ["JUDGES", "JudgeRequest", "Verdict", "judge_run"],
    "render": ["render_html", "render_markdown"],
    "safety": ["PrivateSampleInReport", "check_no_private_rows", "check_no_private_samples",
               "check_no_private_texts"],
    "table": ["build_table_document", "write_table_report"],
    "text": ["build_text_document", "write_text_report"],
    "write": ["write_document", "write_report", "write_run_report"],
})
