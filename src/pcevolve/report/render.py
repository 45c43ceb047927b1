"""Render a :class:`~pcevolve.report.document.Document` as one self-contained HTML page or as Markdown.

HTML: inline CSS, every image a ``data:image/png;base64`` URI, no script and no external
reference, so the file opens offline and can be mailed alone. Markdown: the same content,
images as ``NAME.png`` files next to it.
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
    RowPreview,
    SampleGrid,
    Table,
    TextPreview,
)

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


def _text_table(block: TextPreview, *, markdown: bool) -> Table:
    """A text preview as a table; for Markdown, each text's active characters escaped (HTML escapes every cell)."""
    shown = (text.translate(_MD_ACTIVE) for text in block.shown) if markdown else block.shown
    return Table(block.columns, tuple(zip(block.labels, shown)), caption=block.caption)


def _html_block(block: Block, images: Mapping[str, bytes]) -> str:
    if isinstance(block, RowPreview):
        return _html_block(_preview_table(block), images)
    if isinstance(block, TextPreview):
        return _html_block(_text_table(block, markdown=False), images)
    if isinstance(block, Paragraph):
        tone = f' class="{block.tone}"' if block.tone != "text" else ""
        return f"<p{tone}>{html.escape(block.text)}</p>"
    if isinstance(block, Table):
        head = "".join(f"<th>{html.escape(c)}</th>" for c in block.columns)
        body = []
        for i, row in enumerate(block.rows):
            marker = ' class="highlight"' if i in block.highlight else ""
            body.append(f"<tr{marker}>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
        caption = f"<caption>{html.escape(block.caption)}</caption>" if block.caption else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
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
    if isinstance(block, TextPreview):
        return _md_block(_text_table(block, markdown=True))
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
