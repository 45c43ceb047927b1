"""The table and text reports hold what the image report holds — a headline table, per-class bars, the attack's ROC
curve, the ledger, samples beside their nearest public ones, and for tables the distributions of a few columns —
render as one page no wider than 1300 px (checked in headless Chromium when it is installed), and show no private
row even when the public pool holds one.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from pcevolve.config import dump_config, parse_config
from pcevolve.data import LabeledDataset
from pcevolve.data.table_schema import Column, TableSchema
from pcevolve.evaluation.table_run import evaluate_table_run
from pcevolve.evaluation.text_run import evaluate_text_run
from pcevolve.io import atomic_write_json
from pcevolve.privacy import BudgetLedger, GaussianRelease
from pcevolve.report import (
    Document,
    RowPairs,
    RowPreview,
    Section,
    render_html,
    render_markdown,
    write_table_report,
    write_text_report,
)
from pcevolve.report.neighbours import text_pairs

REPO = Path(__file__).resolve().parents[2]
CLASSES = ("no", "yes")
COLOURS = ("red", "green", "blue")
SCHEMA = TableSchema((Column("a", "numeric", low=-10.0, high=10.0, decimals=3),
                      Column("n", "numeric", low=0.0, high=5.0, integer=True),
                      Column("colour", "categorical", categories=COLOURS)), label_column="y")
TOPICS = ("cooking", "sport")
WORDS = {0: tuple(f"recipe{i}" for i in range(20)), 1: tuple(f"match{i}" for i in range(20))}
SHARED = tuple(f"common{i}" for i in range(30))


def _rows(rng, counts):
    y = np.repeat(np.arange(len(counts)), counts)
    a = rng.normal(1.5 * y, 1.0).round(3)
    n = rng.integers(0, 3, len(y)) + y
    colour = np.where(rng.random(len(y)) < 0.3 + 0.4 * y, 0, rng.integers(1, 3, len(y)))
    return np.c_[a, n, colour].astype(np.float64), y


def _write_csv(path, rows, labels=None):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([*SCHEMA.names, *([] if labels is None else [SCHEMA.label_column])])
        for i, row in enumerate(rows):
            cells = [column.format(value) for column, value in zip(SCHEMA.columns, row)]
            writer.writerow(cells + ([] if labels is None else [CLASSES[labels[i]]]))


def _texts(rng, counts):
    labels = np.repeat(np.arange(len(counts)), counts)
    texts = [" ".join(rng.choice(WORDS[k]) if rng.random() < 0.5 else rng.choice(SHARED)
                      for _ in range(int(rng.integers(12, 20)))).capitalize() + "." for k in labels]
    return texts, labels


def _write_jsonl(path, texts, labels=None):
    with open(path, "w", encoding="utf-8") as handle:
        for i, text in enumerate(texts):
            handle.write(json.dumps({"text": text, **({} if labels is None else {"label": TOPICS[labels[i]]})}) + "\n")


#: What a retrieval run's delivery stage says of its pool (pcevolve.search.in_task), as the report shows it.
POOL_LINE = ("public pool: about 40% of it looks like your classes; 120 public rows set aside as outside the task "
             "(estimated from the DP release, free)")


def _finish(run, config, counts):
    dump_config(config, run / "config.yaml")
    atomic_write_json(run / "manifest.json", {"seed": 0})
    ledger = BudgetLedger(8.0, 1e-5, {"release": 8.0}, path=run / "ledger.json")
    ledger.charge("release", GaussianRelease(1.5), description="class statistics")
    np.savez(run / "release.npz", counts=np.array(counts))
    (run / "stages").mkdir()
    atomic_write_json(run / "stages" / "delivery.json", {"pool": POOL_LINE})
    return run


def make_table_run(root, *, public_holds_private=False):
    """A finished-looking table run; ``public_holds_private``: the public table is the private rows themselves, and
    the synthetic rows lie next to them (so each one's nearest public row is a private row)."""
    rng = np.random.default_rng(5)
    data, run = root / "data", root / "run"
    data.mkdir(parents=True)
    run.mkdir()
    (private, private_labels), test, fresh = (_rows(rng, (40, 20)) for _ in range(3))
    _write_csv(data / "private.csv", private, private_labels)
    _write_csv(data / "test.csv", *test)
    _write_csv(data / "public.csv", private if public_holds_private else _rows(rng, (150, 50))[0])
    synthetic = fresh
    if public_holds_private:
        synthetic = (private + np.array([0.5, 0.0, 0.0]), private_labels)
    _write_csv(run / "synthetic.csv", *synthetic)
    config = parse_config({"name": "tiny-table", "seed": 0,
                           "data": {"modality": "tabular", "private": str(data / "private.csv"),
                                    "public": str(data / "public.csv"), "test": str(data / "test.csv"),
                                    "full": None, "label_column": "y", "classes": list(CLASSES)},
                           "decoder": {"name": "nearest-public"},
                           "privacy": {"split": {"representation": 0.0, "release": 1.0}}}, source="<tiny table>")
    return _finish(run, config, [40.6, 19.2])


def make_text_run(root):
    rng = np.random.default_rng(7)
    data, run = root / "data", root / "run"
    data.mkdir(parents=True)
    run.mkdir()
    private, test, fresh = (_texts(rng, (30, 30)) for _ in range(3))
    _write_jsonl(data / "private.jsonl", *private)
    _write_jsonl(data / "test.jsonl", *test)
    public = _texts(rng, (60, 60))[0]
    _write_jsonl(data / "public.jsonl", public)
    # Half the synthetic texts are public texts (what a retrieval decoder delivers), half new ones.
    _write_jsonl(run / "synthetic.jsonl", [*public[:15], *fresh[0][:15], *public[60:75], *fresh[0][30:45]],
                 [0] * 30 + [1] * 30)
    config = parse_config({"name": "tiny-text", "seed": 0,
                           "data": {"modality": "text", "private": str(data / "private.jsonl"),
                                    "public": str(data / "public.jsonl"), "test": str(data / "test.jsonl"),
                                    "full": None, "label_column": "label", "classes": list(TOPICS)},
                           "decoder": {"name": "nearest-public"},
                           "privacy": {"split": {"representation": 0.0, "release": 1.0}}}, source="<tiny text>")
    return _finish(run, config, [29.4, 31.1])


@pytest.fixture(scope="module")
def table_report(tmp_path_factory):
    run = make_table_run(tmp_path_factory.mktemp("table"))
    return write_table_report(evaluate_table_run(run))


@pytest.fixture(scope="module")
def text_report(tmp_path_factory):
    run = make_text_run(tmp_path_factory.mktemp("text"))
    return write_text_report(evaluate_text_run(run))


def _sections(markdown):
    return re.findall(r"^## (.+)$", markdown, flags=re.MULTILINE)


def _section(markdown, title):
    return markdown.split(f"## {title}\n")[1].split("\n## ")[0]


def test_the_table_report_holds_every_part_of_the_image_report(table_report):
    markdown = (table_report / "report.md").read_text(encoding="utf-8")
    assert _sections(markdown) == ["Headline", "Per class", "Utility", "Fidelity", "Privacy",
                                   "Synthetic rows (preview)", "Synthetic rows beside their nearest public rows",
                                   "Privacy ledger", "Privacy audit", "Search: fitness curves", "Settings and data"]
    assert "| measure | synthetic rows |" in _section(markdown, "Headline")
    assert "Public pool: about 40% of it looks like your classes; 120 public rows set aside" in _section(markdown,
                                                                                                       "Headline")
    for name, section in (("per_class_f1", "Per class"), ("column_distributions", "Fidelity"),
                          ("roc_curve", "Privacy"), ("ledger", "Privacy ledger")):
        assert f"![{name}]({name}.png)" in _section(markdown, section), name
        assert (table_report / f"{name}.png").stat().st_size > 1000, name
    # The pairs: each synthetic row's value / its nearest public row's (" / =" where equal), and the distance.
    pairs = _section(markdown, "Synthetic rows beside their nearest public rows")
    assert "| column | synthetic (no) / nearest public |" in pairs and "| distance |" in pairs
    assert re.search(r"\| colour \| (red|green|blue) / ", pairs)
    html = (table_report / "report.html").read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") == 5  # per class, TVD bars, columns, ROC, ledger (no records)
    assert 'class="differs"' in html and 'class="pair"' in html


def test_the_text_report_holds_every_part_of_the_image_report(text_report):
    markdown = (text_report / "report.md").read_text(encoding="utf-8")
    assert _sections(markdown) == ["Headline", "Per class", "Utility", "Distribution", "Privacy",
                                   "Synthetic texts (sample)", "Synthetic texts beside their nearest public texts",
                                   "Privacy ledger", "Privacy audit", "Search: fitness curves", "Settings and data"]
    assert "| measure | synthetic texts |" in _section(markdown, "Headline")
    for name, section in (("per_class_f1", "Per class"), ("text_lengths", "Distribution"),
                          ("roc_curve", "Privacy"), ("ledger", "Privacy ledger")):
        assert f"![{name}]({name}.png)" in _section(markdown, section), name
        assert (text_report / f"{name}.png").stat().st_size > 1000, name
    pairs = _section(markdown, "Synthetic texts beside their nearest public texts")
    assert "| class | synthetic text | nearest public text | similarity |" in pairs
    # Public texts delivered as they are read as the same text; new ones are shown beside a different public text.
    assert "= the same text" in pairs and "1.00 (same text)" in pairs
    assert re.search(r"\| (cooking|sport) \| [^|]+ \| [A-Z][^=|]+ \| 0\.\d\d \|", pairs)


def test_a_public_row_equal_to_a_private_row_is_left_out_of_the_pairs(tmp_path):
    run = make_table_run(tmp_path, public_holds_private=True)
    report = write_table_report(evaluate_table_run(run))  # the safety check would refuse a private row
    pairs = _section((report / "report.md").read_text(encoding="utf-8"),
                     "Synthetic rows beside their nearest public rows")
    assert "equals a private row were left out" in pairs and "| distance |" not in pairs


def test_a_public_text_holding_a_private_text_is_left_out_of_the_pairs():
    private = np.array(["the quiet harbour town wakes before dawn and the boats go out to sea again"])
    synthetic = LabeledDataset(np.array(["the quiet harbour town wakes late and the boats stay in"]), np.array([0]),
                               ("a",), "text", ("synthetic.jsonl:line 1",))
    public = np.array([private[0], "a recipe for bread with flour water and salt"])
    pairs, skipped = text_pairs(synthetic, np.ones(1, bool), public, private, show=str)
    assert pairs is None and skipped
    pairs, skipped = text_pairs(synthetic, np.ones(1, bool), public[1:], private, show=str)
    assert pairs is not None and not skipped and pairs.neighbours.texts == (public[1],)


def test_a_wide_preview_is_turned_and_pairs_mark_what_differs():
    columns = tuple(f"column_{i}" for i in range(15)) + ("label",)
    cells = (tuple(str(i) for i in range(15)) + ("yes",), tuple(str(i) for i in range(15)) + ("no",))
    preview = RowPreview("rows", columns, cells, values=np.zeros((2, 15)), label_column="label")
    public = RowPreview("public", columns, (cells[0][:-1] + ("—",), ("9",) + cells[1][1:-1] + ("—",)),
                        values=np.ones((2, 15)), label_column="label")
    document = Document("t", (Section("s", (preview, RowPairs("pairs", preview, public, ("0", "1.2")))),))
    html = render_html(document, {})
    assert '<table class="dense">' in html and "<th>label</th><th>yes</th><th>no</th>" in html
    assert html.count('class="differs"') == 1 and '<td class="differs">9</td>' in html
    markdown = render_markdown(document)
    assert "| column_0 | 0 / = | 0 / 9 |" in markdown and "| distance | 0 | 1.2 |" in markdown
    assert len(document.previews()) == 3  # the pair's two previews are checked like the preview


def _screenshots():
    spec = importlib.util.spec_from_file_location("screenshots", REPO / "bench" / "screenshots.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(REPO / "bench"))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(REPO / "bench"))
    return module


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs headless Chromium (Debian's chromium)")
def test_both_reports_fit_a_1300_px_window_with_every_figure_loaded(table_report, text_report):
    screenshots = _screenshots()
    with screenshots.Chromium() as browser:
        for report in (table_report, text_report):
            page = browser.shoot(report / "report.html")
            assert page["width"] <= 1300 and page["wide"] == [] and page["broken"] == [], (report, page)
            assert page["height"] > 3000
