"""Property tests: whatever bytes or mappings a user feeds in, readers answer with a named error, never a crash."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcevolve.config import ConfigError, RunConfig, parse_config
from pcevolve.data import DataError, read_labeled_csv

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
