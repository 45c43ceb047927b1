"""A row preview (tabular reports) is checked against the private rows before anything is written."""

import numpy as np
import pytest

from pcevolve.report import (
    Document,
    Paragraph,
    PrivateSampleInReport,
    RowPreview,
    Section,
    check_no_private_rows,
    render_html,
    render_markdown,
)
from pcevolve.report.write import write_document

PRIVATE = np.array([[1.0, 0.0, 2.5], [3.0, 1.0, -0.5]])


def _document(values):
    cells = tuple(tuple(f"{v:g}" for v in row) for row in values)
    preview = RowPreview("rows", columns=("x", "colour", "z"), cells=cells, values=np.asarray(values, np.float64),
                         sources=tuple(f"synthetic.csv:row {i + 2}" for i in range(len(values))), caption="rows")
    return Document("t", (Section("s", (Paragraph("p"), preview)),))


def test_a_preview_without_private_rows_passes_and_renders_as_a_table():
    document = _document([[1.0, 0.0, 2.4], [-0.0, 1.0, 7.0]])
    assert check_no_private_rows(document, PRIVATE) == 2
    assert "| x | colour | z |" in render_markdown(document) and "<td>2.4</td>" in render_html(document, {})


def test_a_private_row_in_a_preview_is_refused_naming_its_source(tmp_path):
    document = _document([[5.0, 0.0, 0.0], [3.0, 1.0, -0.5]])
    with pytest.raises(PrivateSampleInReport, match="synthetic.csv:row 3"):
        check_no_private_rows(document, PRIVATE)
    with pytest.raises(PrivateSampleInReport):
        write_document(tmp_path / "report", document, private_rows=PRIVATE, evaluation_json={"ok": 1})
    assert not (tmp_path / "report").exists()


def test_a_preview_with_nothing_to_check_it_against_is_refused(tmp_path):
    with pytest.raises(PrivateSampleInReport, match="no private rows"):
        write_document(tmp_path / "report", _document([[5.0, 0.0, 0.0]]))
    with pytest.raises(PrivateSampleInReport, match="cannot be compared"):
        check_no_private_rows(_document([[5.0, 0.0, 0.0]]), PRIVATE[:, :2])
    assert not (tmp_path / "report").exists()


def test_a_preview_needs_one_row_of_cells_per_row_of_values():
    with pytest.raises(ValueError):
        RowPreview("rows", columns=("x",), cells=(("1",),), values=np.zeros((2, 1)))
