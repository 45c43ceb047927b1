"""A text preview (text reports) is checked against the private texts — whole and as shown, exact and near
duplicates — before anything is written; and it renders as a table whose texts cannot turn into Markdown."""

import numpy as np
import pytest

from pcevolve.report import (
    Document,
    Paragraph,
    PrivateSampleInReport,
    Section,
    TextPreview,
    check_no_private_texts,
    render_html,
    render_markdown,
)
from pcevolve.report.text import shorten
from pcevolve.report.write import write_document

LONG = ("the quick brown fox jumps over the lazy dog near the quiet river bank today while two old fishermen watch "
        "from a small wooden boat")
PRIVATE = np.array([LONG, "my neighbour's phone number is in this private note"])


def _document(texts, shown=None):
    shown = tuple(texts) if shown is None else tuple(shown)
    labels = tuple("ab"[i % 2] for i in range(len(texts)))
    preview = TextPreview("texts", texts=tuple(texts), shown=shown, labels=labels,
                          sources=tuple(f"synthetic.jsonl:line {i + 1}" for i in range(len(texts))), caption="texts")
    return Document("t", (Section("s", (Paragraph("p"), preview)),))


def test_a_preview_without_private_texts_passes_and_renders_as_a_table():
    document = _document(["a review of a *great* [film](javascript:x) <b>bold</b> | piped", "another synthetic text"])
    assert check_no_private_texts(document, PRIVATE) == 2
    markdown = render_markdown(document)
    assert "| class | text |" in markdown
    # Markdown would turn these into emphasis, a link and HTML: they are escaped, the pipe too.
    assert r"\*great\* \[film\](javascript:x) \<b\>bold\</b\> \| piped" in markdown
    assert "&lt;b&gt;bold&lt;/b&gt;" in render_html(document, {}) and "<b>bold" not in render_html(document, {})


@pytest.mark.parametrize("text", [
    "  My NEIGHBOUR'S phone   number is in this private note ",  # exact after case and spacing
    LONG.replace("quick", "fast"),  # one word of 25 changed: a near duplicate
])
def test_a_private_text_or_a_near_duplicate_in_a_preview_is_refused_naming_its_source(text, tmp_path):
    document = _document(["an unrelated synthetic text", text])
    with pytest.raises(PrivateSampleInReport, match="synthetic.jsonl:line 2"):
        check_no_private_texts(document, PRIVATE)
    with pytest.raises(PrivateSampleInReport):
        write_document(tmp_path / "report", document, private_texts=PRIVATE, evaluation_json={"ok": 1})
    assert not (tmp_path / "report").exists()


def test_a_shortened_text_is_checked_as_shown_too():
    # The whole text is far from every private text, but what the preview shows of it is a private text.
    filler = " ".join(f"filler{i}" for i in range(80))
    with pytest.raises(PrivateSampleInReport, match="equal to a private text"):
        check_no_private_texts(_document([filler], shown=[PRIVATE[1]]), PRIVATE)
    assert check_no_private_texts(_document([filler], shown=[shorten(filler, 40)]), PRIVATE) == 1


def test_a_passage_of_a_private_text_inside_a_longer_text_is_refused():
    # Far from the private text as a whole (cosine well under 0.9), but it quotes eight of its words in a row.
    quoting = "filler words first " + " ".join(LONG.split()[3:11]) + " " + " ".join(f"more{i}" for i in range(30))
    with pytest.raises(PrivateSampleInReport, match="8 or more consecutive words"):
        check_no_private_texts(_document([quoting]), PRIVATE)
    seven = "filler words first " + " ".join(LONG.split()[3:10]) + " " + " ".join(f"more{i}" for i in range(30))
    assert check_no_private_texts(_document([seven]), PRIVATE) == 1


def test_a_text_preview_with_nothing_to_check_it_against_is_refused(tmp_path):
    with pytest.raises(PrivateSampleInReport, match="no private texts"):
        write_document(tmp_path / "report", _document(["a synthetic text"]))
    assert not (tmp_path / "report").exists()


def test_shorten_cuts_long_texts_at_a_word_and_flattens_whitespace():
    assert shorten("two\n  lines") == "two lines"
    cut = shorten(LONG, 40)
    assert cut.endswith(" …") and len(cut) <= 40 and LONG.startswith(cut[:-2])


def test_a_text_preview_needs_one_label_and_one_shown_form_per_text():
    with pytest.raises(ValueError):
        TextPreview("texts", texts=("a", "b"), shown=("a",), labels=("x", "y"))
