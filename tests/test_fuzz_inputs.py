"""Property tests: whatever bytes or mappings a user feeds in, readers answer with a named error, never a crash."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcevolve.config import ConfigError, RunConfig, parse_config
from pcevolve.data import DataError, read_labeled_csv
from pcevolve.data.text import read_labeled_texts, read_unlabeled_texts
from pcevolve.data.writers import write_texts_jsonl

CELLS = st.one_of(st.sampled_from(["1", "-2.5", "", " ", "nan", "inf", "x", "y", "1e400", '"q,uoted"', "label"]),
                  st.text(max_size=6))
ROWS = st.lists(st.lists(CELLS, min_size=0, max_size=5), min_size=0, max_size=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=ROWS, raw=st.binary(max_size=60), use_raw=st.booleans())
def test_csv_reader_returns_data_or_named_problems(rows, raw, use_raw) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "input.csv"
        if use_raw:
            path.write_bytes(raw)
        else:
            path.write_text("\n".join(",".join(row) for row in rows), encoding="utf-8")
        try:
            data = read_labeled_csv(path)
        except DataError as error:
            assert error.problems and all(problem.path.startswith(str(path)) for problem in error.problems)
        else:
            assert len(data) >= 4 and len(data.class_names) >= 2  # two classes of at least two rows


# JSON values of every kind, surrogate escapes, NaN and huge numbers included, under a few field names
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=6),
              st.sampled_from(["", "  ", "a", "b", "1", "true", "\ud800"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=5)
JSON_RECORDS = st.dictionaries(st.sampled_from(["text", "label", "body", "x"]), JSON_VALUES, max_size=4)
JSON_LINES = st.lists(st.one_of(JSON_RECORDS.map(json.dumps), JSON_VALUES.map(json.dumps),
                                st.sampled_from(["", "{", "{\"text\": 1e999}", "[1, 2]", "9" * 5000,
                                                 "[" * 2000 + "]" * 2000]),
                                st.text(max_size=12)),
                      max_size=10)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=JSON_LINES, raw=st.binary(max_size=60), use_raw=st.booleans(), labelled=st.booleans())
def test_jsonl_reader_returns_texts_or_problems_that_name_the_file(lines, raw, use_raw, labelled) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "input.jsonl"
        if use_raw:
            path.write_bytes(raw)
        else:
            path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
        try:
            data = read_labeled_texts(path, min_per_class=1) if labelled else read_unlabeled_texts(path)
        except DataError as error:
            assert error.problems and all(problem.path.startswith(str(path)) for problem in error.problems)
        else:
            assert len(data) >= 1 and all(text.strip() and text.encode("utf-8") for text in data.samples)


LABEL_SETS = st.one_of(st.lists(st.integers(-10**30, 10**30), min_size=2, max_size=8, unique=True),
                       st.lists(st.text(min_size=1, max_size=5).filter(lambda t: t.strip() == t != ""), min_size=2,
                                max_size=8, unique=True),
                       st.just([True, False]))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(classes=LABEL_SETS, draws=st.lists(st.integers(0, 7), min_size=1, max_size=12))
def test_jsonl_labels_round_trip_with_their_type(classes, draws) -> None:
    labels = [classes[i % len(classes)] for i in draws]
    with tempfile.TemporaryDirectory() as folder:
        path, out = Path(folder) / "in.jsonl", Path(folder) / "out.jsonl"
        path.write_text("".join(json.dumps({"text": f"t {i}", "label": label}) + "\n" for i, label in
                                enumerate(labels)), encoding="utf-8")
        read = read_labeled_texts(path, class_names=classes, min_per_class=0)
        write_texts_jsonl(out, read.samples, read.labels, read.class_labels)
        written = [json.loads(line)["label"] for line in out.read_text(encoding="utf-8").splitlines()]
        assert written == labels and [type(v) for v in written] == [type(v) for v in labels]


SECTIONS = ["name", "seed", "data", "augment", "representation", "search", "decoder", "privacy", "extra"]
KEYS = ["epsilon", "delta", "split", "name", "epochs", "batch_size", "image_size", "generations", "basis_dim",
        "synthetic_per_class", "synthetic_multiplier", "training", "backbone", "fitness", "private", "strength", "x"]
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=True), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)),
    max_leaves=6)
MAPPINGS = st.dictionaries(st.sampled_from(SECTIONS),
                           st.one_of(VALUES, st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=4)), max_size=5)


@settings(max_examples=300, deadline=None)
@given(mapping=st.one_of(MAPPINGS, VALUES))
def test_config_loader_returns_a_config_or_names_the_key(mapping) -> None:
    try:
        config = parse_config(mapping, source="fuzz.yaml")  # type: ignore[arg-type]
    except ConfigError as error:
        assert str(error).startswith("fuzz.yaml") and all(line.startswith("fuzz.yaml") for line in
                                                          str(error).splitlines())
    else:
        assert isinstance(config, RunConfig)
