"""The judges of a table (evaluation/table_*.py) on tables whose answers are known, and `pcevolve evaluate` on a
hand-made tabular run folder.

The table: two classes (140 "no", 60 "yes") that differ in two correlated Gaussian columns, a small count column
and a colour; values have three decimals, so two independent draws share no row by chance.
"""

import csv
import json

import numpy as np
import pytest
import typer
from sklearn.metrics import roc_auc_score
from typer.testing import CliRunner

from pcevolve.cli import evaluate_commands
from pcevolve.config import dump_config, parse_config
from pcevolve.data import LabeledDataset
from pcevolve.data.table_schema import Column, TableSchema
from pcevolve.evaluation import judge_table_files, judge_tables
from pcevolve.evaluation.line_scores import class_scores, minority_class
from pcevolve.evaluation.shipped import shared_distance, shared_rate, shipped_violations
from pcevolve.evaluation.table_fidelity import column_binning, column_fidelity, correlation_difference
from pcevolve.evaluation.members import membership_split
from pcevolve.evaluation.table_privacy import AUC_DECIMALS, exact_copies
from pcevolve.io import atomic_write_json
from pcevolve.privacy import BudgetLedger, GaussianRelease
from pcevolve.report.judges import JUDGES

CLASSES = ("no", "yes")
COLOURS = ("red", "green", "blue")
SCHEMA = TableSchema((Column("a", "numeric", low=-10.0, high=10.0, decimals=3),
                      Column("b", "numeric", low=-10.0, high=10.0, decimals=3),
                      Column("n", "numeric", low=0.0, high=5.0, integer=True),
                      Column("colour", "categorical", categories=COLOURS)), label_column="y")


def draw(rng, counts=(140, 60)):
    """(rows, labels): class 1 shifts a up and b down, raises n and prefers red."""
    y = np.repeat(np.arange(len(counts)), counts)
    a = rng.normal(1.5 * y, 1.0)
    b = rng.normal(-y, 1.0) + 0.5 * a
    n = rng.integers(0, 3, len(y)) + y
    colour = np.where(rng.random(len(y)) < 0.3 + 0.4 * y, 0, rng.integers(1, 3, len(y)))
    return np.c_[a.round(3), b.round(3), n, colour].astype(np.float64), y


def dataset(rows, labels, what="set"):
    return LabeledDataset(rows, labels, CLASSES, "tabular", tuple(f"{what}.csv:row {i + 2}" for i in range(len(rows))),
                          SCHEMA.names)


@pytest.fixture(scope="module")
def sets():
    rng = np.random.default_rng(2024)
    return {name: dataset(*draw(rng), what=name) for name in ("private", "test", "fresh")}


@pytest.fixture(scope="module")
def public():
    return draw(np.random.default_rng(99), counts=(300, 100))[0]


def test_a_copy_of_the_private_rows_is_caught_by_the_attack_and_the_copy_count(sets, public):
    private = sets["private"]
    judged = judge_tables(private, sets["test"], SCHEMA, private=private, public=public, seed=0, resamples=50)
    assert judged.privacy is not None
    assert judged.privacy.attack.auc.value > 0.9
    assert judged.privacy.private_copies == len(private) and judged.privacy.test_copies == 0
    shared = judged.to_json()["privacy"]
    assert shared["private_rows_copied"] is True and shared["auc"] == round(judged.privacy.attack.auc.value, 2)


def test_an_independent_draw_looks_like_chance_to_the_attack_and_copies_nothing(sets, public):
    judged = judge_tables(sets["fresh"], sets["test"], SCHEMA, private=sets["private"], public=public, seed=0,
                          resamples=50)
    assert abs(judged.privacy.attack.auc.value - 0.5) < 0.1
    assert judged.privacy.private_copies == 0 and judged.privacy.test_copies == 0
    assert judged.to_json()["privacy"]["private_rows_copied"] is False


def test_shuffled_labels_leave_no_utility_while_true_labels_score_high(sets):
    fresh = sets["fresh"]
    shuffled = dataset(fresh.samples, np.random.default_rng(5).permutation(fresh.labels))
    good = judge_tables(fresh, sets["test"], SCHEMA, seed=0)
    bad = judge_tables(shuffled, sets["test"], SCHEMA, seed=0)
    for model in ("gbdt", "logistic"):
        assert good.result("synthetic", model).scores.auc > 0.85, model
        assert abs(bad.result("synthetic", model).scores.auc - 0.5) < 0.15, model
    # Without private rows there is no real reference and no privacy judgement.
    assert good.result("real", "gbdt") is None and good.privacy is None


def test_the_real_reference_line_is_trained_on_the_private_rows_and_its_size_stays_secure(sets):
    judged = judge_tables(sets["fresh"], sets["test"], SCHEMA, private=sets["private"], seed=0, resamples=20)
    assert judged.result("real", "logistic").train_size == len(sets["private"])
    shared, secure = judged.to_json(), judged.to_secure_json()
    real = [r for r in shared["utility"] if r["line"] == "real"]
    assert len(real) == 2 and all(r["reference_only"] and r["train_size"] is None for r in real)
    text = json.dumps(shared)
    for key in ("members", "non_members", "private_copies", "private_rows", "seconds", "roc"):
        assert f'"{key}":' not in text, key
    assert secure["privacy"]["members"] == len(sets["private"]) and secure["privacy"]["private_copies"] == 0
    assert "roc" in secure["privacy"]["attack"]
    auc = shared["privacy"]["auc"]
    assert auc == round(auc, AUC_DECIMALS)
    # The real reference's scores and distances are computed on the private rows: rounded to ship, exact in secure.
    exact = {(r["line"], r["model"]): r for r in secure["utility"]}
    for entry in real:
        want = exact["real", entry["model"]]
        assert entry["accuracy"] == shared_rate(want["accuracy"]) and entry["auc"] == shared_rate(want["auc"])
        assert all(entry["per_class"][name]["f1"] == shared_rate(want["per_class"][name]["f1"]) for name in CLASSES)
    assert [c["tvd_real_reference"] for c in shared["fidelity"]["columns"]] == [
        shared_distance(v) for v in secure["fidelity_real_reference"]["tvd"].values()]
    mean = shared["fidelity"]["correlation_real_reference"]["mean_abs_difference"]
    assert mean == shared_distance(secure["fidelity_real_reference"]["correlation"]["mean_abs_difference"])


def test_the_distance_of_a_set_to_itself_is_zero(sets, public):
    test = sets["test"].samples
    for reference in (None, public):
        assert all(c.tvd == 0.0 for c in column_fidelity(test, test, SCHEMA, public=reference))
    same = correlation_difference(test, test, SCHEMA)
    assert same.mean == 0.0 and same.largest == 0.0
    # Pairs inside the colour's one-hot block are left out: 3 numeric + 3 one-hot columns, 3 colour pairs dropped.
    assert same.pairs == 6 * 5 // 2 - 3


def test_a_shifted_column_is_the_one_that_moves(sets):
    test = sets["test"].samples
    shifted = test.copy()
    shifted[:, 1] += 3.0
    tvd = {c.name: c.tvd for c in column_fidelity(shifted, test, SCHEMA)}
    assert tvd["b"] > 0.7 and tvd["a"] == tvd["n"] == tvd["colour"] == 0.0


def test_point_masses_are_compared_value_by_value_and_continuous_columns_on_quantiles(sets):
    test = sets["test"].samples
    counts = column_binning(SCHEMA.columns[2], test[:, 2])
    assert counts.values is not None and counts.cells == len(np.unique(test[:, 2])) + 1
    assert counts.codes(np.array([0.0, 0.5, 99.0])).tolist() == [0, counts.cells - 1, counts.cells - 1]
    quantiles = column_binning(SCHEMA.columns[0], test[:, 0], bins=20)
    assert quantiles.edges is not None and quantiles.cells == 20
    share = quantiles.histogram(test[:, 0])
    assert abs(share.sum() - 1.0) < 1e-12 and share.max() < 0.1  # about 1/20 each on its own data
    colours = column_binning(SCHEMA.columns[3], test[:, 3])
    assert colours.basis == "categories" and colours.cells == len(COLOURS) + 1


def test_binary_auc_ranks_the_minority_class_of_the_test_set():
    rng = np.random.default_rng(0)
    y = np.r_[np.ones(80, int), np.zeros(20, int)]  # class 0 is the minority here
    p0 = np.clip(0.3 + 0.4 * (y == 0) + rng.normal(0, 0.25, 100), 0, 1)
    scores = class_scores(y, np.c_[p0, 1 - p0], positive_class=minority_class(y, 2))
    assert scores.positive_class == 0 and scores.auc_kind == "binary"
    assert scores.auc == pytest.approx(roc_auc_score(y == 0, p0))
    assert scores.support == (20, 80) and 0 < scores.macro_f1 <= 1


def test_multiclass_auc_is_the_macro_one_vs_rest_mean():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 150)
    proba = rng.dirichlet(np.ones(3), 150) + 0.5 * np.eye(3)[y]
    proba /= proba.sum(1, keepdims=True)
    scores = class_scores(y, proba, positive_class=minority_class(y, 3))
    assert scores.auc_kind == "macro one-vs-rest" and scores.positive_class is None
    assert scores.auc == pytest.approx(roc_auc_score(y, proba, multi_class="ovr", average="macro"))
    predicted = proba.argmax(1)
    assert scores.accuracy == pytest.approx((predicted == y).mean())
    assert scores.recall[2] == pytest.approx(((predicted == 2) & (y == 2)).sum() / (y == 2).sum())


def test_a_synthetic_set_of_one_class_is_reported_not_raised(sets):
    fresh = sets["fresh"]
    only_no = fresh.subset(fresh.labels == 0)
    judged = judge_tables(only_no, sets["test"], SCHEMA, seed=0)
    for model in ("gbdt", "logistic"):
        result = judged.result("synthetic", model)
        assert result.scores is None and "at least two" in result.error
    assert judged.to_json()["synthetic_per_class"] == {"no": 140, "yes": 0}


def test_the_attack_split_has_public_counts_per_class():
    rng = np.random.default_rng(3)
    private, test = np.r_[np.zeros(20, int), np.ones(10, int)], np.r_[np.zeros(50, int), np.ones(4, int)]
    split = membership_split(private, test, classes=2, rng=rng)
    assert len(split.members) == len(split.non_members) == 54 and len(set(split.non_members)) == 54
    assert (test[split.non_members] == 1).sum() == 4 and (private[split.members] == split.classes).all()
    split = membership_split(np.zeros(60, int), np.zeros(25, int), classes=2, rng=rng)
    assert len(split) == 25 and (split.classes == 0).all()


def test_exact_copies_compare_every_column_and_treat_minus_zero_as_zero():
    rows = np.array([[0.0, 1.0], [2.0, 3.0]])
    assert exact_copies(np.array([[-0.0, 1.0], [2.0, 3.0001], [2.0, 3.0]]), rows).tolist() == [0, 2]


# ------------------------------------------------------------------------------------------- files and the run


def write_csv(path, rows, labels=None, schema=SCHEMA):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([*schema.names, *([] if labels is None else [schema.label_column])])
        for i, row in enumerate(rows):
            cells = [column.format(value) for column, value in zip(schema.columns, row)]
            writer.writerow(cells + ([] if labels is None else [CLASSES[labels[i]]]))
    return path


def test_judge_table_files_reads_aligns_classes_and_returns_the_secure_figures_apart(sets, public, tmp_path):
    fresh = sets["fresh"]
    only_no = fresh.subset(fresh.labels == 0)  # a peer system's set may miss a class
    files = {name: write_csv(tmp_path / f"{name}.csv", d.samples, d.labels)
             for name, d in (("private", sets["private"]), ("test", sets["test"]), ("synthetic", only_no))}
    result = judge_table_files(files["synthetic"], files["test"], SCHEMA, private_csv=files["private"],
                               public_csv=write_csv(tmp_path / "public.csv", public), seed=0)
    assert result["class_names"] == list(CLASSES) and result["synthetic_per_class"] == {"no": 140, "yes": 0}
    assert result["secure"]["privacy"]["private_rows"] == len(sets["private"])
    assert result["fidelity"]["columns"][0]["basis"] == "public quantiles"
    json.dumps(result)  # JSON-ready


def make_table_run(root, *, leaky=False):
    """A finished-looking tabular run under ``root/run`` with its tables under ``root/data``."""
    rng = np.random.default_rng(11)
    data = root / "data"
    data.mkdir(parents=True)
    private, test, fresh = (draw(rng, counts=(60, 30)) for _ in range(3))
    write_csv(data / "private.csv", *private)
    write_csv(data / "test.csv", *test)
    write_csv(data / "public.csv", draw(rng, counts=(200, 100))[0])
    run = root / "run"
    run.mkdir()
    config = parse_config({"name": "tiny-table", "seed": 0,
                           "data": {"modality": "tabular", "private": str(data / "private.csv"),
                                    "public": str(data / "public.csv"), "test": str(data / "test.csv"),
                                    "full": None, "label_column": "y", "classes": list(CLASSES)},
                           "decoder": {"name": "nearest-public"},
                           "privacy": {"split": {"representation": 0.0, "release": 1.0}}},
                          source="<tiny table config>")
    dump_config(config, run / "config.yaml")
    atomic_write_json(run / "manifest.json", {"seed": 0})
    rows, labels = fresh
    if leaky:  # plant 10 private rows
        rows, labels = np.r_[rows, private[0][:10]], np.r_[labels, private[1][:10]]
    write_csv(run / "synthetic.csv", rows, labels)
    ledger = BudgetLedger(8.0, 1e-5, {"release": 8.0}, path=run / "ledger.json")
    ledger.charge("release", GaussianRelease(1.5), description="class statistics")
    np.savez(run / "release.npz", counts=np.array([61.3, 28.8]))
    return run


def _evaluate(*args):
    app = typer.Typer(pretty_exceptions_enable=False)
    app.command("evaluate")(evaluate_commands.evaluate)
    app.command("noop")(lambda: None)  # two commands, so `evaluate` is addressed by name as under pcevolve
    return CliRunner().invoke(app, ["evaluate", *map(str, args)])


def test_pcevolve_evaluate_judges_a_table_run_and_writes_its_report(tmp_path):
    run = make_table_run(tmp_path)
    result = _evaluate(run, "--quiet")  # no --test: the run's data.test
    assert result.exit_code == 0, result.output
    for text in ("gbdt", "logistic", "membership attack AUC", "copied from the private table: none", "report.html"):
        assert text in result.output, text
    report = run / "report"
    markdown = (report / "report.md").read_text(encoding="utf-8")
    for text in ("Headline", "Utility", "Fidelity", "Privacy", "Synthetic rows (preview)", "Privacy ledger",
                 "▶ yes", "cannot tell them apart", "not differentially private"):
        assert text in markdown, text
    assert "SPEC" not in markdown and (report / "column_tvd.png").is_file() and (report / "report.html").is_file()
    shared = json.loads((report / "evaluation.json").read_text(encoding="utf-8"))
    secure = json.loads((run / "secure" / "evaluation.json").read_text(encoding="utf-8"))
    assert shared["data"]["private"]["per_class_dp_estimate"] == [61, 29]
    assert "private_per_class" not in json.dumps(shared) and secure["private_per_class"] == [60, 30]
    assert secure["privacy"]["members"] == 90 and shared["judgement"]["privacy"]["private_rows_copied"] is False
    # Nothing outside secure/ carries an exact private-derived figure or an absolute path; the files by name only.
    assert [str(v) for v in shipped_violations(run, words=("attack", "member", "distance", "real"))] == []
    assert shared["run"]["folder"] == "run" and shared["data"]["private"]["path"] == "private.csv"
    assert secure["paths"]["private"] == str(tmp_path / "data" / "private.csv")
    assert str(tmp_path) not in markdown and str(tmp_path) not in (report / "report.html").read_text(encoding="utf-8")
    # The preview: 5 synthetic rows per class, in the schema's columns and the label.
    assert markdown.count("| red |") + markdown.count("| green |") + markdown.count("| blue |") == 10
    assert set(JUDGES) == {"image", "tabular", "text"}


def test_a_leaky_table_run_is_flagged_and_its_preview_shows_no_private_row(tmp_path):
    run = make_table_run(tmp_path, leaky=True)
    result = _evaluate(run, "--test", tmp_path / "data" / "test.csv", "--quiet")
    assert result.exit_code == 0, result.output
    markdown = (run / "report" / "report.md").read_text(encoding="utf-8")
    assert "disclose that person's record" in markdown and "were left out of this preview" in markdown
    secure = json.loads((run / "secure" / "evaluation.json").read_text(encoding="utf-8"))
    assert secure["privacy"]["private_copies"] == 10
    private = {tuple(r[:-1]) for r in csv.reader(open(tmp_path / "data" / "private.csv", encoding="utf-8"))}
    preview = markdown.split("## Synthetic rows (preview)")[1].split("##")[0]
    cells = [tuple(c.strip() for c in line.strip("|").split("|"))[:-1] for line in preview.splitlines()
             if line.startswith("| ") and "colour" not in line]
    assert len(cells) == 10 and not any(row in private for row in cells)


def test_table_run_errors_are_one_line_naming_the_problem(tmp_path):
    run = make_table_run(tmp_path)
    missing = _evaluate(run, "--test", tmp_path / "nope.csv")
    assert missing.exit_code == 1 and str(tmp_path / "nope.csv") in missing.output
    assert len(missing.output.strip().splitlines()) == 1
    full = _evaluate(run, "--full", tmp_path)
    assert full.exit_code == 1 and "--full is for image runs" in full.output
    (run / "synthetic.csv").unlink()
    gone = _evaluate(run)
    assert gone.exit_code == 1 and "synthetic.csv" in gone.output and not (run / "report").exists()
