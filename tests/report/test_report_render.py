"""HTML and Markdown rendering: escaping, highlighting, inline images."""

import base64

import pytest

from pcevolve.report import Document, Paragraph, Plot, Section, Table, render_html, render_markdown

PNG = b"\x89PNG\r\n\x1a\nfake"


def _document():
    table = Table(("class", "a|b"), (("x<y>", "1"), ("z", "2")), highlight=(1,), caption="cap & co")
    return Document("Title <1>", (
        Section("One", (Paragraph("<script>alert(1)</script>", tone="warning"), table), anchor="one"),
        Section("Two", (Plot("chart", PNG, "a chart"),), anchor="two"),
    ), subtitle="sub")


def test_html_escapes_text_marks_highlight_and_inlines_images():
    html = render_html(_document(), {"chart": PNG})
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<title>Title &lt;1&gt;</title>" in html
    assert '<tr class="highlight"><td>z</td><td>2</td></tr>' in html
    assert '<p class="warning">' in html
    assert f'src="data:image/png;base64,{base64.b64encode(PNG).decode()}"' in html
    assert '<a href="#one">One</a>' in html and 'id="two"' in html


def test_markdown_tables_escape_pipes_bold_highlight_and_reference_pngs():
    markdown = render_markdown(_document())
    assert "| class | a\\|b |" in markdown
    assert "| **z** | **2** |" in markdown and "| x<y> | 1 |" in markdown
    assert "![chart](chart.png)" in markdown
    assert markdown.startswith("# Title <1>\n")


def test_a_table_row_must_fit_its_columns():
    with pytest.raises(ValueError, match="2 cells for 3 columns"):
        Table(("a", "b", "c"), (("1", "2"),))
