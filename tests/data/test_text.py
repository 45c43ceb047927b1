"""Text files' fields: a field no record has is one problem naming the fields there are and the setting to change;
the public pool's text field is its own setting (``data.public_text_column``), used wherever the pool is read."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from pcevolve.config import DataConfig, config_hash, parse_config
from pcevolve.data import DataError
from pcevolve.data.text import read_labeled_texts, read_unlabeled_texts
from pcevolve.data.writers import write_texts_jsonl
from pcevolve.modalities.text.parts import TEXT, text_fields
from pcevolve.starters import choose_config

GOOD = ["a warm and funny film", "a joy from start to finish", "brilliant acting, clever script"]
BAD = ["a dull and tedious mess", "clumsy writing, wooden acting", "badly shot and slow"]


def _jsonl(path, records):
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def _problems(excinfo):
    return [str(problem) for problem in excinfo.value.problems]


def test_a_text_field_no_record_has_is_one_problem_listing_the_fields_and_the_setting(tmp_path):
    path = _jsonl(tmp_path / "private.jsonl", [{"body": t, "label": "good", "id": i} for i, t in enumerate(GOOD)])
    with pytest.raises(DataError) as excinfo:
        read_labeled_texts(path)
    assert _problems(excinfo) == [
        f"{path}: no record has field 'text' (the text); its records have fields 'body', 'label', 'id': set "
        "data.text_column: body (pcevolve init: --set data.text_column=body)"]
    assert len(read_labeled_texts(path, text_field="body", class_names=["good", "bad"], min_per_class=0)) == 3


def test_with_several_candidate_fields_the_message_names_the_setting_not_a_guess(tmp_path):
    path = _jsonl(tmp_path / "private.jsonl", [{"title": t, "body": t, "label": "good"} for t in GOOD])
    with pytest.raises(DataError) as excinfo:
        read_labeled_texts(path)
    (problem,) = _problems(excinfo)
    assert "fields 'title', 'body', 'label'" in problem and problem.endswith(
        "set data.text_column to the field that holds the text")


def test_a_label_field_no_record_has_is_one_problem_too(tmp_path):
    path = _jsonl(tmp_path / "private.jsonl", [{"text": t, "topic": "good"} for t in GOOD])
    with pytest.raises(DataError) as excinfo:
        read_labeled_texts(path)
    assert _problems(excinfo) == [f"{path}: no record has field 'label' (the label); its records have fields 'text', "
                                  "'topic': set data.label_column: topic (pcevolve init: --set "
                                  "data.label_column=topic)"]


def test_a_csv_without_the_text_column_names_its_columns(tmp_path):
    path = tmp_path / "private.csv"
    path.write_text("review,label\n" + "".join(f"{t.replace(',', '')},good\n" for t in GOOD), encoding="utf-8")
    with pytest.raises(DataError) as excinfo:
        read_labeled_texts(path)
    assert _problems(excinfo) == [f"{path}: no column 'text' (the text); its columns are 'review', 'label': set "
                                  "data.text_column: review (pcevolve init: --set data.text_column=review)"]


def test_a_few_bad_lines_in_a_good_file_are_named_line_by_line(tmp_path):
    records = [{"text": t, "label": "good"} for t in GOOD + BAD]
    records[1] = {"body": "oops", "label": "good"}
    records[4] = {"text": "  ", "label": "bad"}
    path = _jsonl(tmp_path / "private.jsonl", records)
    with pytest.raises(DataError) as excinfo:
        read_labeled_texts(path, min_per_class=1)
    assert _problems(excinfo) == [f"{path}:line 2: field 'text' (the text) is missing",
                                  f"{path}:line 5: field 'text' (the text) is empty"]


def test_the_pool_names_its_own_setting_and_reads_with_it(tmp_path):
    pool = _jsonl(tmp_path / "public.jsonl", [{"content": t} for t in GOOD + BAD])
    with pytest.raises(DataError) as excinfo:
        read_unlabeled_texts(pool)
    assert _problems(excinfo) == [
        f"{pool}: no record has field 'text' (the text); its records have fields 'content': set "
        "data.public_text_column: content (pcevolve init: --set data.public_text_column=content)"]
    assert list(read_unlabeled_texts(pool, text_field="content").samples) == GOOD + BAD


def test_a_run_reads_the_pool_with_public_text_column_and_the_private_file_with_text_column(tmp_path):
    private = _jsonl(tmp_path / "private.jsonl", [{"text": t, "label": "good"} for t in GOOD])
    pool = _jsonl(tmp_path / "public.jsonl", [{"content": t} for t in BAD])
    data = DataConfig(modality="text", private=str(private), public=str(pool), classes=["good", "bad"],
                      public_text_column="content")
    fields = text_fields(data)
    assert list(TEXT.read_public(data, fields).samples) == BAD
    assert list(TEXT.read_private(data, fields).samples) == GOOD
    same = data.model_copy(update={"public_text_column": None})
    with pytest.raises(DataError, match="set data.public_text_column: content"):
        TEXT.read_public(same, text_fields(same))


def test_public_text_column_left_null_leaves_the_config_hash_as_before():
    base = {"data": {"modality": "text", "private": "p.jsonl", "public": "q.jsonl", "classes": ["bad", "good"]},
            "decoder": {"name": "nearest-public"}, "privacy": {"split": {"representation": 0.0, "release": 1.0}}}
    config = parse_config(base)
    assert config.data.public_text_column is None
    # A config written before the setting existed has no such key: its hash must not see the new one.
    resolved = config.model_dump(mode="json", exclude={"executor"})
    del resolved["data"]["public_text_column"]
    for key in ("evolve", "in_task", "in_task_fraction"):  # left out at their defaults (tests/test_config.py)
        del resolved["search"][key]
    canonical = json.dumps(resolved, sort_keys=True, separators=(",", ":"))
    assert config_hash(config) == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    named = parse_config({**base, "data": {**base["data"], "public_text_column": "content"}})
    assert config_hash(named) != config_hash(config)


def _files_for_init(tmp_path, pool_records):
    private = _jsonl(tmp_path / "private.jsonl", [{"text": f"{t} {i}", "label": label}
                                                  for i in range(4) for t, label in
                                                  [(GOOD[i % 3], 1), (BAD[i % 3], 0)]])
    pool = _jsonl(tmp_path / "public.jsonl", pool_records)
    return private, pool


def test_init_proposes_the_pools_only_text_field_and_typed_classes(tmp_path):
    private, pool = _files_for_init(tmp_path, [{"content": f"{t} number {i}", "n": i}
                                               for i in range(20) for t in (GOOD[i % 3], BAD[i % 3])])
    starter = choose_config(private, public=pool)
    assert starter.config.data.public_text_column == "content"
    assert starter.config.data.classes == (0, 1)  # the labels' JSON type: numbers
    text = starter.yaml_text()
    assert "public_text_column: content" in text and "classes: [0, 1]" in text
    assert all(len(line) <= 120 for line in text.splitlines())


def test_init_takes_public_text_column_from_set_and_leaves_it_null_when_the_pool_has_the_field(tmp_path):
    private, pool = _files_for_init(tmp_path, [{"content": f"{t} number {i}", "title": "x"}
                                               for i in range(20) for t in (GOOD[i % 3], BAD[i % 3])])
    with pytest.raises(DataError, match="set data.public_text_column to the field that holds the text"):
        choose_config(private, public=pool)  # two text fields: no guess
    starter = choose_config(private, public=pool, overrides={"data.public_text_column": "content"})
    assert starter.config.data.public_text_column == "content"
    same = _jsonl(tmp_path / "same.jsonl", [{"text": f"{t} number {i}"} for i in range(20) for t in GOOD + BAD])
    assert choose_config(private, public=same).config.data.public_text_column is None


def test_a_delivered_jsonl_has_one_record_per_line_for_every_line_reader(tmp_path) -> None:
    """NEL and the Unicode line separators are escaped: str.splitlines and editors split at them (a fuzzer found a
    label '0\\x850' written across two lines), although JSON allows them raw."""
    texts = np.array(["one\x85two", "three\u2028four\u2029five"])
    out = write_texts_jsonl(tmp_path / "s.jsonl", texts, np.array([0, 1]), ["0\x850", "b"])
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["text"] for line in lines] == list(texts)
    assert [json.loads(line)["label"] for line in lines] == ["0\x850", "b"]
