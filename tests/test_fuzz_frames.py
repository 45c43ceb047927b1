"""Property tests of the Python API's way in and out: whatever DataFrame, list of dicts or image array a user holds,
``fit`` either refuses it with problems that name the argument (one line per kind of problem), or the synthetic set
comes back under the same column names, with the types the declarations give (the schema's, the classes').

Each example runs the in-memory layer as ``fit`` and ``sample`` do — the plan, the written copy, the run's own reader
and :func:`~pcevolve.in_memory.as_given` — with the private rows themselves standing for the synthetic ones, so what
comes back must be what was given.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pcevolve.config import parse_config
from pcevolve.data import DataError
from pcevolve.data.errors import problem_lines
from pcevolve.in_memory import as_given, plan_inputs

pd = pytest.importorskip("pandas")

#: How each kind of feature column is made from a row count and a generator; the kinds after "ok" are refused.
COLUMN_KINDS = ("int", "float", "bool", "text", "category", "string", "nullable-int", "date", "complex", "list",
                "missing")
REFUSED_KINDS = {"date", "complex", "list", "missing"}
#: Column names: text and whole numbers are kept; anything else is refused.
GOOD_NAMES = st.one_of(st.text(alphabet="abcxyz_ ", min_size=1, max_size=5), st.integers(-3, 99))
BAD_NAMES = st.one_of(st.tuples(st.text(alphabet="ab", min_size=1, max_size=2), st.integers(0, 3)),
                      st.floats(0.5, 9.5).filter(lambda v: not float(v).is_integer()), st.booleans())
#: The label's kind: its values and the classes declared for it (as a table declares them: text).
LABELS = {"text": (["fraud", "ok"], ["fraud", "ok"]), "int": ([0, 1], ["0", "1"]),
          "bool": ([False, True], ["false", "true"])}


def _column(kind: str, n: int, rng: np.random.Generator):
    if kind == "int":
        return pd.Series(rng.integers(-5, 500, n), dtype="int64")
    if kind == "float":
        values = rng.integers(-400, 400, n) / 8.0
        values[0] = 0.125  # one fraction at least: a column of whole numbers is drafted as one
        return pd.Series(values, dtype="float64")
    if kind == "bool":
        return pd.Series([bool(v) for v in rng.integers(0, 2, n)], dtype=bool)
    if kind in ("text", "category", "string"):
        values = [["north", "south", "west"][v] for v in rng.integers(0, 3, n)]
        return pd.Series(values, dtype={"text": object, "category": "category", "string": "string"}[kind])
    if kind == "nullable-int":
        return pd.Series(rng.integers(0, 9, n), dtype="Int64")
    if kind == "date":
        return pd.Series(pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 90, n), unit="D"))
    if kind == "complex":
        return pd.Series(rng.normal(size=n) + 1j, dtype=complex)
    if kind == "list":
        return pd.Series([[1, 2]] * n, dtype=object)
    values = rng.normal(size=n)
    values[n // 2] = np.nan
    return pd.Series(values)


FRAMES = st.fixed_dictionaries({
    "label_kind": st.sampled_from(sorted(LABELS)),
    "label_name": st.sampled_from(["label", 7, "Status"]),
    "columns": st.lists(st.tuples(st.one_of(GOOD_NAMES, BAD_NAMES), st.sampled_from(COLUMN_KINDS)), min_size=1,
                        max_size=4),
    "seed": st.integers(0, 2**16),
    "as_records": st.booleans(),
})


def _text_form(name) -> str:
    """A column name as a file's header reads it."""
    return str(name).strip()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=FRAMES)
def test_a_table_comes_back_under_its_names_with_its_declared_types_or_is_refused_in_one_line_per_kind(case):
    from pcevolve.data.table_schema import draft_schema
    from pcevolve.data.tabular import read_labeled_table

    rng = np.random.default_rng(case["seed"])
    n = 8
    values, classes = LABELS[case["label_kind"]]
    # A feature column named like the label would be the label column itself: a frame holds one column per name.
    features = [(name, kind) for name, kind in case["columns"] if name != case["label_name"]]
    assume(features)
    columns = {name: _column(kind, n, rng) for name, kind in features}
    columns[case["label_name"]] = pd.Series([values[i % 2] for i in range(n)])
    frame = pd.DataFrame(columns)
    kinds = dict(features)  # a repeated name keeps its last column, as the dict does
    names = list(frame.columns)
    refused = (any(kind in REFUSED_KINDS for kind in kinds.values())
               or any(not isinstance(name, (str, int)) or isinstance(name, bool) or not _text_form(name)
                      for name in names)
               or len({_text_form(name) for name in names}) < len(names))
    given_value = frame.to_dict("records") if case["as_records"] else frame
    data = parse_config({"data": {"modality": "tabular", "private": "x", "public": "y", "classes": classes,
                                  "label_column": case["label_name"]}, "decoder": {"name": "nearest-public"}},
                        source="<test>").data
    with tempfile.TemporaryDirectory() as folder:
        run = Path(folder) / "run"
        try:
            plan = plan_inputs(data, run, given_value, None)
        except DataError as error:
            assert refused, problem_lines(error.problems)
            assert all(problem.path.startswith("private") for problem in error.problems)
            assert len(problem_lines(error.problems)) <= 11 * len({problem.group for problem in error.problems})
            assert len({problem.group for problem in error.problems}) <= len(names)  # one kind per column at most
            return
        assert not refused, names
        plan.write(run)
        written = Path(plan.settings["data.private"])
        schema = draft_schema(written, label_column=data.label_column)  # stands for the user's declared schema
        rows = read_labeled_table(written, schema, class_names=classes)
        back = as_given(rows, plan.form, schema)
    assert list(back.columns) == names  # the names as given: 7 stays the number 7
    for name in names:
        column, original = back[name], frame[name]
        if name == case["label_name"]:
            expected = {"text": object, "int": np.int64, "bool": bool}[case["label_kind"]]
            assert column.dtype == expected and column.tolist() == original.tolist()
        elif kinds[name] == "float":
            assert column.dtype == np.float64 and np.allclose(column.to_numpy(), original.to_numpy(float))
        elif kinds[name] in ("int", "nullable-int"):
            assert column.dtype == np.int64 and column.tolist() == [int(v) for v in original]
        elif kinds[name] == "bool":
            assert column.dtype == bool and column.tolist() == original.tolist()
        else:  # text, pandas' categories and strings: Python strings
            assert column.dtype == object and column.tolist() == [str(v) for v in original]


TEXT_LABELS = {"text": (["neg", "pos"], ["neg", "pos"]), "int": ([0, 1], [0, 1]),
               "bool": ([False, True], [False, True])}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(label_kind=st.sampled_from(sorted(TEXT_LABELS)), text_name=st.one_of(GOOD_NAMES, BAD_NAMES),
       label_name=st.sampled_from(["label", 3]), as_records=st.booleans(),
       texts=st.lists(st.one_of(st.text(min_size=1, max_size=12).filter(lambda t: t.strip() == t and t),
                                st.integers(), st.none(), st.just(dt.date(2020, 1, 2))), min_size=4, max_size=8))
def test_texts_come_back_under_their_names_with_their_declared_label_types_or_are_refused(label_kind, text_name,
                                                                                         label_name, as_records,
                                                                                         texts):
    from pcevolve.modalities.text.parts import text_fields
    from pcevolve.data.text import read_labeled_texts

    values, classes = TEXT_LABELS[label_kind]
    if _text_form(text_name) == _text_form(label_name):
        return
    frame = pd.DataFrame({text_name: pd.Series(texts, dtype=object),
                          label_name: [values[i % 2] for i in range(len(texts))]})
    refused = (not isinstance(text_name, (str, int)) or isinstance(text_name, bool) or not _text_form(text_name)
               or any(not isinstance(text, str) for text in texts))
    good_name = isinstance(text_name, (str, int)) and not isinstance(text_name, bool)
    data = parse_config({"data": {"modality": "text", "private": "x", "public": "y", "classes": classes,
                                  "label_column": label_name, "text_column": text_name if good_name else "text"},
                         "decoder": {"name": "nearest-public"}}, source="<test>").data
    with tempfile.TemporaryDirectory() as folder:
        run = Path(folder) / "run"
        try:
            plan = plan_inputs(data, run, frame.to_dict("records") if as_records else frame, None)
            plan.write(run)
            fields = text_fields(data)
            back_rows = read_labeled_texts(Path(plan.settings["data.private"]), text_field=fields.text,
                                           label_field=fields.label, class_names=data.classes, min_per_class=0)
        except DataError as error:
            assert refused, problem_lines(error.problems)
            assert len(problem_lines(error.problems)) <= 11 * len({problem.group for problem in error.problems})
            return
        assert not refused, texts
        back = as_given(back_rows, plan.form, text_fields(data))
    assert list(back.columns) == [text_name, label_name]
    assert back[text_name].tolist() == [text.strip() for text in texts]
    expected = {"text": object, "int": np.int64, "bool": bool}[label_kind]
    assert back[label_name].dtype == expected and back[label_name].tolist() == frame[label_name].tolist()


IMAGE_DTYPES = st.sampled_from(["uint8", "float32", "float64", "int64", "int16", "bool", "object", "complex128"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dtype=IMAGE_DTYPES, scale=st.sampled_from([1.0, 16.0, 255.0, 300.0]), channels=st.sampled_from([0, 1, 3, 2]),
       side=st.sampled_from([8, 9]), public_side=st.sampled_from([8, 4]), seed=st.integers(0, 2**16))
def test_image_arrays_come_back_as_uint8_in_their_layout_or_are_refused(dtype, scale, channels, side, public_side,
                                                                       seed):
    from pcevolve.data.image_folder import read_image_folder

    rng = np.random.default_rng(seed)
    shape = (6, side, side) + ((channels,) if channels else ())
    raw = rng.random(shape) * scale
    X = raw.astype(dtype) if dtype != "float32" and dtype != "float64" else raw.astype(dtype) / max(scale, 1.0)
    if dtype in ("float32", "float64") and scale == 300.0:
        X = raw.astype(dtype)  # floats beyond 1: refused
    public = (rng.random((10, public_side, public_side) + ((channels,) if channels else ())) * 255).astype(np.uint8)
    y = np.array(["a", "b"] * 3)
    ok_dtype = dtype == "uint8" or (dtype.startswith("float") and float(np.max(X)) <= 1.0)
    ok_shape = channels in (0, 1, 3)
    accepted = ok_dtype and ok_shape and public_side == side
    data = parse_config({"data": {"modality": "image", "private": "x", "public": "y", "classes": ["a", "b"],
                                  "image_size": side}}, source="<test>").data
    with tempfile.TemporaryDirectory() as folder:
        run = Path(folder) / "run"
        try:
            plan = plan_inputs(data, run, (X, y), public)
        except DataError as error:
            assert not accepted, problem_lines(error.problems)
            assert len(error.problems) <= 2 and all(p.path.startswith(("private", "public")) for p in error.problems)
            return
        assert accepted, (dtype, scale, channels, public_side)
        plan.write(run)
        rows = read_image_folder(Path(plan.settings["data.private"]), size=side, mode="RGB" if channels == 3 else "L",
                                 class_names=["a", "b"])
        back_X, back_y = as_given(rows, plan.form, None)
    expected = np.rint(X * 255).astype(np.uint8) if dtype.startswith("float") else X
    assert back_X.dtype == np.uint8 and back_X.shape[1:] == X.shape[1:] and back_y.dtype.kind == "U"

    def pairs(images, labels):
        return sorted((bytes(image), str(label)) for image, label in zip(images.reshape(len(images), -1), labels))

    assert pairs(back_X, back_y) == pairs(expected, y)
