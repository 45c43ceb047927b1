"""Render a :class:`~pcevolve.report.document.Document` as one self-contained HTML page or as Markdown.

HTML: inline CSS, every image a ``data:image/png;base64`` URI, no script and no external
reference, so the file opens offline and can be mailed alone. Markdown: the same content,
images as ``NAME.png`` files next to it.

The HTML page is laid out for a window 1300 px wide (bench/screenshots.py checks it): a table wider than the page
scrolls inside its own box instead of widening the page, a row preview with more than :data:`TURN_COLUMNS` columns
is turned (one column per previewed row), and a synthetic sample beside its nearest public one is shown as a pair
of columns, the public cells that differ marked.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping

from pcevolve.report.document import (
    Block,
    Document,
    Paragraph,
    Plot,
    RowPairs,
    RowPreview,
    SampleGrid,
    Table,
    TextPairs,
    TextPreview,
)

#: A row preview with more columns than this is shown turned in HTML: one line per column, one column per row.
TURN_COLUMNS = 12

# Markdown would act on these inside a previewed text (emphasis, links, raw HTML); a backslash makes each literal.
_MD_ACTIVE = str.maketrans({c: "\\" + c for c in "\\`*_[]<>&~"})

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1200px;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { margin-bottom: 0.1em; } .subtitle { color: #666; margin-top: 0; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 1.8em; }
nav a { margin-right: 1em; font-size: 0.9em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
tr.highlight td { background: #fde2e1; font-weight: 600; }
caption { caption-side: bottom; text-align: left; color: #555; font-size: 0.9em; padding-top: 0.3em; }
p.note { color: #555; font-style: italic; }
p.warning { background: #fff4e5; border-left: 4px solid #e67e22; padding: 0.4em 0.8em; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
.wide { overflow-x: auto; max-width: 100%; }
table.dense { font-size: 0.78em; } table.dense th, table.dense td { padding: 0.2em 0.4em; overflow-wrap: anywhere; }
td.text { min-width: 18em; }
td.differs { background: #fff3c4; font-weight: 600; } td.same { color: #777; }
th.pair, td.pair { border-left: 2px solid #888; }
"""


def render_html(document: Document, images: Mapping[str, bytes]) -> str:
    """One HTML page; ``images`` maps every plot's and grid's name to its PNG bytes."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{html.escape(document.title)}</title>", f"<style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(document.title)}</h1>"]
    if document.subtitle:
        parts.append(f'<p class="subtitle">{html.escape(document.subtitle)}</p>')
    parts.append("<nav>" + "".join(f'<a href="#{html.escape(s.anchor)}">{html.escape(s.title)}</a>'
                                   for s in document.sections if s.anchor) + "</nav>")
    for section in document.sections:
        anchor = f' id="{html.escape(section.anchor)}"' if section.anchor else ""
        parts.append(f"<section{anchor}><h2>{html.escape(section.title)}</h2>")
        parts += [_html_block(block, images) for block in section.blocks]
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _preview_table(block: RowPreview) -> Table:
    return Table(block.columns, block.cells, caption=block.caption)


def _cell(tag: str, text: str, css: str = "") -> str:
    return f'<{tag} class="{css}">{html.escape(text)}</{tag}>' if css else f"<{tag}>{html.escape(text)}</{tag}>"


def _html_table(columns: list[str], rows: list[list[tuple[str, str]]], *, caption: str = "",
                highlight: tuple[int, ...] = (), head_classes: list[str] | None = None, dense: bool = False) -> str:
    """A table whose every cell is ``(text, css class)``, in a box that scrolls sideways if it must (the page
    itself never does). ``dense``: smaller type, and cells that may break inside a word, for many columns."""
    head = "".join(_cell("th", c, css) for c, css in zip(columns, head_classes or [""] * len(columns), strict=True))
    body = "".join(('<tr class="highlight">' if i in highlight else "<tr>")
                   + "".join(_cell("td", text, css) for text, css in row) + "</tr>" for i, row in enumerate(rows))
    caption_html = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    opening = '<table class="dense">' if dense else "<table>"
    return f'<div class="wide">{opening}{caption_html}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _html_preview(block: RowPreview) -> str:
    """A row preview; turned (a line per column, a column per row) when it has too many columns for the page."""
    if len(block.columns) <= TURN_COLUMNS:
        return _html_table(list(block.columns), [[(c, "") for c in row] for row in block.cells],
                           caption=block.caption)
    label = None if block.label_column is None else block.columns.index(block.label_column)
    heads = [block.columns[label] if label is not None else "column",
             *(row[label] if label is not None else f"row {i + 1}" for i, row in enumerate(block.cells))]
    lines = [[(name, "")] + [(row[j], "") for row in block.cells]
             for j, name in enumerate(block.columns) if j != label]
    return _html_table(heads, lines, caption=block.caption, dense=True)


def _html_row_pairs(block: RowPairs) -> str:
    """Each synthetic row beside its nearest public row: a pair of columns per row, a line per table column; a public
    cell that differs from the synthetic one is marked."""
    synthetic, neighbours = block.synthetic, block.neighbours
    label = None if synthetic.label_column is None else synthetic.columns.index(synthetic.label_column)
    heads, classes = ["column"], [""]
    for row in synthetic.cells:
        heads += [f"synthetic ({row[label]})" if label is not None else "synthetic", "nearest public"]
        classes += ["pair", ""]
    lines = []
    for j, name in enumerate(synthetic.columns):
        if j == label:
            continue
        line = [(name, "")]
        for own, public in zip(synthetic.cells, neighbours.cells, strict=True):
            line += [(own[j], "pair"), (public[j], "same" if public[j] == own[j] else "differs")]
        lines.append(line)
    lines.append([("distance", "")] + [cell for note in block.notes for cell in (("", "pair"), (note, ""))])
    return _html_table(heads, lines, caption=block.caption, head_classes=classes, dense=True)


def _html_text_pairs(block: TextPairs) -> str:
    rows = [[(label, ""), (own, "text"), (public, "text"), (note, "")]
            for label, own, public, note in zip(block.synthetic.labels, block.synthetic.shown, block.neighbours.shown,
                                                block.notes, strict=True)]
    return _html_table(list(block.columns), rows, caption=block.caption)


def _md_pair(own: str, public: str) -> str:
    """A synthetic cell and its public neighbour's in one Markdown cell: ``own / public``, ``own / =`` when equal."""
    return f"{own} / {'=' if public == own else public}"


def _md_row_pairs(block: RowPairs) -> Table:
    """Markdown: the pairs turned like the HTML, one Markdown column per pair (``synthetic / public``)."""
    synthetic, neighbours = block.synthetic, block.neighbours
    label = None if synthetic.label_column is None else synthetic.columns.index(synthetic.label_column)
    heads = ("column", *(f"synthetic {f'({row[label]}) ' if label is not None else ''}/ nearest public"
                         for row in synthetic.cells))
    lines = [(name, *(_md_pair(own[j], public[j]) for own, public in zip(synthetic.cells, neighbours.cells)))
             for j, name in enumerate(synthetic.columns) if j != label]
    lines.append(("distance", *block.notes))
    return Table(heads, tuple(lines), caption=block.caption)


def _md_text_pairs(block: TextPairs) -> Table:
    rows = tuple((label, own.translate(_MD_ACTIVE), public.translate(_MD_ACTIVE), note)
                 for label, own, public, note in zip(block.synthetic.labels, block.synthetic.shown,
                                                     block.neighbours.shown, block.notes, strict=True))
    return Table(block.columns, rows, caption=block.caption)


def _md_text_table(block: TextPreview) -> Table:
    """A text preview as a Markdown table, each text's active characters escaped (HTML escapes every cell)."""
    return Table(block.columns, tuple(zip(block.labels, (text.translate(_MD_ACTIVE) for text in block.shown))),
                 caption=block.caption)


def _html_block(block: Block, images: Mapping[str, bytes]) -> str:
    if isinstance(block, RowPreview):
        return _html_preview(block)
    if isinstance(block, RowPairs):
        return _html_row_pairs(block)
    if isinstance(block, TextPairs):
        return _html_text_pairs(block)
    if isinstance(block, TextPreview):
        rows = [[(label, ""), (text, "text")] for label, text in zip(block.labels, block.shown, strict=True)]
        return _html_table(list(block.columns), rows, caption=block.caption)
    if isinstance(block, Paragraph):
        tone = f' class="{block.tone}"' if block.tone != "text" else ""
        return f"<p{tone}>{html.escape(block.text)}</p>"
    if isinstance(block, Table):
        return _html_table(list(block.columns), [[(c, "") for c in row] for row in block.rows],
                           caption=block.caption, highlight=block.highlight, dense=len(block.columns) > TURN_COLUMNS)
    if isinstance(block, (Plot, SampleGrid)):
        data = base64.b64encode(images[block.name]).decode("ascii")
        caption = f"<figcaption>{html.escape(block.caption)}</figcaption>" if block.caption else ""
        return (f'<figure><img alt="{html.escape(block.caption or block.name)}" '
                f'src="data:image/png;base64,{data}">{caption}</figure>')
    raise TypeError(f"unknown block {type(block).__name__}")


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(document: Document) -> str:
    """Markdown; plots and grids are referenced as ``NAME.png`` next to the file."""
    parts = [f"# {document.title}", ""]
    if document.subtitle:
        parts += [f"_{document.subtitle}_", ""]
    for section in document.sections:
        parts += [f"## {section.title}", ""]
        for block in section.blocks:
            parts += [_md_block(block), ""]
    return "\n".join(parts).rstrip() + "\n"


def _md_block(block: Block) -> str:
    if isinstance(block, RowPreview):
        return _md_block(_preview_table(block))
    if isinstance(block, RowPairs):
        return _md_block(_md_row_pairs(block))
    if isinstance(block, TextPairs):
        return _md_block(_md_text_pairs(block))
    if isinstance(block, TextPreview):
        return _md_block(_md_text_table(block))
    if isinstance(block, Paragraph):
        prefix = {"text": "", "note": "> ", "warning": "> **⚠** "}[block.tone]
        return prefix + block.text
    if isinstance(block, Table):
        lines = ["| " + " | ".join(_md_cell(c) for c in block.columns) + " |",
                 "|" + "|".join("---" for _ in block.columns) + "|"]
        for i, row in enumerate(block.rows):
            cells = [_md_cell(c) for c in row]
            if i in block.highlight:
                cells = [f"**{c}**" if c else c for c in cells]
            lines.append("| " + " | ".join(cells) + " |")
        if block.caption:
            lines += ["", f"_{block.caption}_"]
        return "\n".join(lines)
    if isinstance(block, (Plot, SampleGrid)):
        text = f"![{block.name}]({block.name}.png)"
        return text + (f"\n\n_{block.caption}_" if block.caption else "")
    raise TypeError(f"unknown block {type(block).__name__}")
