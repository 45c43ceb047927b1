"""Labels keep their type and spelling through a run, and delivered numbers their every digit.

A JSON Lines label is text, a whole number or a boolean; one file has one type; the declared classes of a text run
(``data.classes``) carry the type the delivered file writes. A CSV label is text, written back as read. Delivered
CSV numbers are the public cells' numbers exactly.
"""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
import yaml

from pcevolve.config import DataConfig
from pcevolve.config.schema import _label_text, class_names_from
from pcevolve.data import DataError, LabeledDataset
from pcevolve.data.dataset import label_text
from pcevolve.data.table_schema import draft_schema
from pcevolve.data.tabular import read_labeled_table, read_unlabeled_table
from pcevolve.data.text import read_labeled_texts
from pcevolve.data.writers import write_table_csv, write_texts_jsonl
from pcevolve.modalities.text.parts import TEXT, text_fields

TEXTS = ["a warm film", "a dull film", "a funny film", "a slow film", "a clever film", "a stale film"]


def _jsonl(path, labels, *, field="label"):
    path.write_text("".join(json.dumps({"text": text, field: label}) + "\n" for text, label in zip(TEXTS, labels)),
                    encoding="utf-8")
    return path


def _delivered_labels(path):
    return [json.loads(line)["label"] for line in path.read_text(encoding="utf-8").splitlines()]


def _problems(excinfo):
    return [str(problem) for problem in excinfo.value.problems]


@pytest.mark.parametrize("classes", [[0, 1, 2], ["0", "1", "2"], ["bad", "good", "so-so"], [False, True]],
                         ids=["numbers", "numbers-as-text", "words", "booleans"])
def test_a_run_delivers_jsonl_labels_with_the_type_and_spelling_they_were_read_with(tmp_path, classes):
    labels = [classes[i % len(classes)] for i in range(len(TEXTS))]
    private = _jsonl(tmp_path / "private.jsonl", labels)
    # As a run does: the config declares the classes (YAML keeps 0 a number, "0" text), the layout comes from it.
    data = DataConfig(modality="text", private=str(private), public=None, classes=yaml.safe_load(json.dumps(classes)))
    fields = text_fields(data)
    read = TEXT.read_private(data, fields)
    out = tmp_path / "synthetic.jsonl"
    TEXT.write_synthetic(out, read.samples, read.labels, read.class_names, fields)  # names: text, as a run has them
    assert _delivered_labels(out) == labels and [type(v) for v in _delivered_labels(out)] == list(map(type, labels))
    again = TEXT.read_synthetic(out, fields, read.class_names)
    assert again.class_labels == tuple(classes) and again.labels.tolist() == read.labels.tolist()


@pytest.mark.parametrize("labels", [[3, 10, 3, 10, 3, 10], ["3", "10", "3", "10", "3", "10"], [True, False] * 3])
def test_a_file_read_without_declared_classes_gives_them_back_with_their_type(tmp_path, labels):
    read = read_labeled_texts(_jsonl(tmp_path / "in.jsonl", labels))
    assert set(read.class_labels) == set(labels) and read.label_type == {int: "number", str: "text",
                                                                         bool: "boolean"}[type(labels[0])]
    out = write_texts_jsonl(tmp_path / "out.jsonl", read.samples, read.labels, read.class_labels)
    assert _delivered_labels(out) == labels
    assert read_labeled_texts(out, class_names=read.class_labels).labels.tolist() == read.labels.tolist()


def test_csv_text_labels_are_text_and_the_delivered_file_writes_them_as_declared(tmp_path):
    private = tmp_path / "private.csv"
    private.write_text("text,label\n" + "".join(f"{t},{i % 2}\n" for i, t in enumerate(TEXTS)), encoding="utf-8")
    for declared, written in ((["0", "1"], ["0", "1"]), ([0, 1], [0, 1])):
        data = DataConfig(modality="text", private=str(private), public=None, classes=declared)
        fields = text_fields(data)
        read = TEXT.read_private(data, fields)
        out = tmp_path / f"synthetic-{written[0]!r}.jsonl"
        TEXT.write_synthetic(out, read.samples, read.labels, read.class_names, fields)
        assert _delivered_labels(out)[:2] == written


def test_one_and_quoted_one_in_one_file_is_one_error_naming_both_lines(tmp_path):
    path = _jsonl(tmp_path / "in.jsonl", [0, 1, "1", 0, 1, 0])
    with pytest.raises(DataError) as excinfo:
        read_labeled_texts(path, min_per_class=0)
    assert _problems(excinfo) == [f'{path}: the labels mix JSON types: line 1 has label 0 (a number), line 3 has '
                                  'label "1" (text); give every label one type (all quoted as text, or none) so that '
                                  'each class has one spelling']


@pytest.mark.parametrize("label, named", [([1], "is a list"), ({"a": 1}, "is an object"),
                                          (1.5, 'is 1.5, a decimal number'), (1.0, 'write it as 1 or as text ("1.0")'),
                                          (None, "is missing (null)"), ("  ", "is empty")])
def test_a_label_that_is_not_one_text_number_or_boolean_is_named_by_line(tmp_path, label, named):
    path = _jsonl(tmp_path / "in.jsonl", ["a", "b", label, "a", "b", "a"])
    with pytest.raises(DataError) as excinfo:
        read_labeled_texts(path, min_per_class=1)
    (problem,) = _problems(excinfo)
    assert problem.startswith(f"{path}:line 3: field 'label' (the label) ") and named in problem


def test_labels_of_another_type_than_the_declared_classes_say_exactly_what_to_change(tmp_path):
    # A config written before labels kept their type: classes ['0', '1'] for a file of number labels.
    path = _jsonl(tmp_path / "in.jsonl", [0, 1] * 3)
    with pytest.raises(DataError) as excinfo:
        read_labeled_texts(path, class_names=("0", "1"), min_per_class=0)
    assert _problems(excinfo) == [f'{path}: the labels are numbers (line 1: 0) but data.classes declares text (["0", '
                                  '"1"]): write data.classes: [0, 1] to keep the labels as they are, or write every '
                                  'label in the file as text']


def test_unquoted_yes_no_classes_are_booleans_and_the_message_says_so(tmp_path):
    declared = yaml.safe_load("classes: [yes, no]")["classes"]
    assert declared == [True, False]
    path = _jsonl(tmp_path / "in.jsonl", ["yes", "no"] * 3)
    with pytest.raises(DataError, match=r"YAML reads unquoted yes/no/on/off/true/false as booleans: quote each class"):
        read_labeled_texts(path, class_names=DataConfig(modality="text", classes=declared).classes)


def test_text_runs_keep_the_classes_types_other_runs_read_them_as_text():
    assert DataConfig(modality="text", classes=[0, 1]).classes == (0, 1)
    assert DataConfig(modality="text", classes=["0", "1"]).classes == ("0", "1")
    assert DataConfig(modality="text", classes=[True, False]).classes == (True, False)
    assert DataConfig(modality="tabular", classes=[0, 1]).classes == ("0", "1")
    with pytest.raises(ValueError, match="mix booleans and text"):
        DataConfig(modality="text", classes=[True, "maybe"])  # [yes, maybe] unquoted
    with pytest.raises(ValueError, match="repeated"):
        class_names_from([0, "0"], typed=True)  # one text form, two classes
    with pytest.raises(ValueError, match="not text or a whole number"):
        class_names_from([0.5, 1], typed=True)


@pytest.mark.parametrize("value", [0, -7, 10**20, True, False, "0", " x ", "true"])
def test_the_config_and_the_readers_spell_a_label_alike(value):
    assert _label_text(value) == label_text(value)


def test_a_dataset_refuses_class_names_that_are_no_labels_of_its_type():
    def dataset(names, kind):
        return LabeledDataset(samples=np.array(["a", "b"]), labels=np.array([0, 1]), class_names=names,
                              modality="text", sources=("1", "2"), label_type=kind)

    assert dataset(("-3", "12"), "number").class_labels == (-3, 12)
    assert dataset(("-3", "12"), "number").subset([1]).label_type == "number"
    for names, kind in ((("007", "1"), "number"), (("yes", "no"), "boolean")):
        with pytest.raises(ValueError):
            dataset(names, kind)


def _table(path, header, rows):
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([header, *rows])
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def test_csv_labels_are_written_back_with_the_exact_text_read(tmp_path):
    labels = ["0", "1.0", "true", "Yes"]
    private = _table(tmp_path / "private.csv", ["x", "label"], [[str(i), labels[i % 4]] for i in range(8)])
    schema = draft_schema(private, label_column="label")
    read = read_labeled_table(private, schema, class_names=labels, min_per_class=0)
    out = write_table_csv(tmp_path / "synthetic.csv", read.samples, read.labels, read.class_names, schema)
    with open(out, newline="", encoding="utf-8") as handle:
        assert [row[-1] for row in list(csv.reader(handle))[1:]] == [labels[i % 4] for i in range(8)]


def test_delivered_numbers_are_the_public_numbers_exactly(tmp_path):
    cells = ["0.1", "3.141592653589793", "1e-10", "-2.5", "12.50", "0.30000000000000004", "123456.789012345",
             "6.02214076e23"]
    public = _table(tmp_path / "public.csv", ["x", "n"], [[cell, str(i)] for i, cell in enumerate(cells)])
    schema = draft_schema(public)
    pool = read_unlabeled_table(public, schema)
    out = write_table_csv(tmp_path / "synthetic.csv", pool.samples, np.zeros(len(pool), dtype=np.int64), ["a", "b"],
                          schema)
    back = read_labeled_table(out, schema, class_names=["a", "b"], min_per_class=0)
    assert back.samples.tolist() == pool.samples.tolist()  # every float bit for bit, not to six digits
    with open(out, newline="", encoding="utf-8") as handle:
        written = [row[0] for row in list(csv.reader(handle))[1:]]
    assert [float(cell) for cell in written] == [float(cell) for cell in cells]


def test_a_column_whose_cells_show_two_decimals_is_written_with_two(tmp_path):
    public = _table(tmp_path / "public.csv", ["amount"], [["12.50"], ["3.25"], ["100.00"], ["0.10"]])
    schema = draft_schema(public)
    pool = read_unlabeled_table(public, schema)
    out = write_table_csv(tmp_path / "synthetic.csv", pool.samples, np.zeros(4, dtype=np.int64), ["a", "b"], schema)
    assert out.read_text(encoding="utf-8").splitlines()[1:] == ["12.50,a", "3.25,a", "100.00,a", "0.10,a"]
