"""The judges of texts (evaluation/text_*.py) on texts whose answers are known, and `pcevolve evaluate` on a hand-made
text run folder.

The texts: two classes ("sport": 120, "cooking": 80) of 14–22 words drawn, each, from the class's own 30 words or
from 40 shared words (half and half), in random order. Two independent draws share no text by chance, and no
two texts come near the near-duplicate threshold; a classifier separates the classes easily.
"""

import json

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from pcevolve.cli import evaluate_commands
from pcevolve.config import dump_config, parse_config
from pcevolve.data import LabeledDataset
from pcevolve.evaluation import judge_text_files, judge_texts
from pcevolve.evaluation.shipped import shared_distance, shared_rate, shipped_violations
from pcevolve.evaluation.table_privacy import AUC_DECIMALS
from pcevolve.evaluation.text_distribution import text_mmd
from pcevolve.evaluation.text_duplicates import NEAR_DUPLICATE_COSINE, text_copies
from pcevolve.evaluation.text_spaces import LsaSpace, normalise
from pcevolve.io import atomic_write_json
from pcevolve.privacy import BudgetLedger, GaussianRelease
from pcevolve.report.judges import JUDGES

CLASSES = ("cooking", "sport")  # sorted: the order read_labeled_texts gives them
SHARED = tuple(f"common{i}" for i in range(40))
VOCABULARY = {0: tuple(f"recipe{i}" for i in range(30)), 1: tuple(f"match{i}" for i in range(30))}


def sentence(rng, label):
    words = [rng.choice(VOCABULARY[label]) if rng.random() < 0.5 else rng.choice(SHARED)
             for _ in range(int(rng.integers(14, 23)))]
    return " ".join(words).capitalize() + "."


def draw(rng, counts=(80, 120)):
    """(texts, labels): ``counts[k]`` texts of class k."""
    labels = np.repeat(np.arange(len(counts)), counts)
    return np.array([sentence(rng, int(k)) for k in labels], dtype=str), labels


def dataset(texts, labels, what="set"):
    return LabeledDataset(np.asarray(texts, dtype=str), np.asarray(labels), CLASSES, "text",
                          tuple(f"{what}.jsonl:line {i + 1}" for i in range(len(texts))))


@pytest.fixture(scope="module")
def sets():
    rng = np.random.default_rng(2024)
    return {name: dataset(*draw(rng), what=name) for name in ("private", "test", "fresh")}


@pytest.fixture(scope="module")
def public():
    return draw(np.random.default_rng(99), counts=(150, 150))[0]


def test_a_copy_of_the_private_texts_is_caught_by_the_attack_and_the_copy_counts(sets, public):
    private = sets["private"]
    judged = judge_texts(private, sets["test"], private=private, public=public, seed=0, resamples=50)
    assert judged.privacy is not None
    assert judged.privacy.attack.auc.value > 0.9
    assert judged.privacy.private_exact == judged.privacy.private_near == len(private)
    assert judged.privacy.test_exact == judged.privacy.test_near == 0
    shared = judged.to_json()["privacy"]
    assert shared["private_texts_copied"] is True and shared["private_texts_near_copied"] is True
    assert shared["auc"] == round(judged.privacy.attack.auc.value, AUC_DECIMALS)


def test_an_independent_draw_looks_like_chance_to_the_attack_and_copies_nothing(sets, public):
    judged = judge_texts(sets["fresh"], sets["test"], private=sets["private"], public=public, seed=0, resamples=50)
    assert abs(judged.privacy.attack.auc.value - 0.5) < 0.1
    assert judged.privacy.private_exact == judged.privacy.private_near == 0
    assert judged.privacy.test_exact == judged.privacy.test_near == 0
    shared = judged.to_json()["privacy"]
    assert shared["private_texts_copied"] is False and shared["private_texts_near_copied"] is False


def test_shuffled_labels_leave_no_utility_while_true_labels_score_high(sets):
    fresh = sets["fresh"]
    shuffled = dataset(fresh.samples, np.random.default_rng(5).permutation(fresh.labels))
    good = judge_texts(fresh, sets["test"], seed=0)
    bad = judge_texts(shuffled, sets["test"], seed=0)
    for model in ("tfidf", "lsa"):
        assert good.result("synthetic", model).scores.accuracy > 0.9, model
        assert abs(bad.result("synthetic", model).scores.accuracy - 0.5) < 0.15, model
    # Without private texts there is no real reference and no privacy judgement.
    assert good.result("real", "tfidf") is None and good.privacy is None and good.distribution.real is None


def test_the_real_reference_is_trained_on_the_private_texts_and_its_size_stays_secure(sets, public):
    judged = judge_texts(sets["fresh"], sets["test"], private=sets["private"], public=public, seed=0, resamples=20)
    assert judged.result("real", "lsa").train_size == len(sets["private"])
    assert judged.result("real", "tfidf").scores.accuracy > 0.9
    shared, secure = judged.to_json(), judged.to_secure_json()
    real = [r for r in shared["utility"] if r["line"] == "real"]
    assert len(real) == 2 and all(r["reference_only"] and r["train_size"] is None for r in real)
    text = json.dumps(shared)
    for key in ("members", "non_members", "private_exact_copies", "private_near_copies", "private_texts", "seconds",
                "roc"):
        assert f'"{key}":' not in text, key
    assert secure["privacy"]["members"] == len(sets["private"]) and secure["privacy"]["private_near_copies"] == 0
    assert "roc" in secure["privacy"]["attack"]
    # The real reference's scores and its MMD² are computed on the private texts: rounded to ship, exact in secure.
    exact = {(r["line"], r["model"]): r for r in secure["utility"]}
    assert all(entry["accuracy"] == shared_rate(exact["real", entry["model"]]["accuracy"]) for entry in real)
    reference, exact_reference = shared["distribution"]["real_reference"], secure["distribution"]["real_reference"]
    assert reference["overall"] == shared_distance(exact_reference["overall"])
    assert reference["per_class"] == [shared_distance(v) for v in exact_reference["per_class"]]
    assert shared["distribution"]["real_bandwidth"] == shared_distance(secure["distribution"]["real_bandwidth"])
    assert "public texts" in shared["distribution"]["space"] and "public texts" in shared["probes"]["lsa"]


def test_the_mmd_of_a_set_with_itself_is_about_zero_and_a_swapped_class_is_far(sets, public):
    test = sets["test"]
    same = text_mmd(test, test, public=public, seed=0)
    assert abs(same.synthetic.overall) < 0.01 and all(abs(v) < 0.02 for v in same.synthetic.per_class)
    # Every text relabelled as the other class: overall alike, each class far from its real counterpart.
    swapped = dataset(test.samples, 1 - test.labels)
    for pool in (public, None):  # the LSA fitted on the public texts, or on each compared pair pooled
        far = text_mmd(swapped, test, private=sets["private"], public=pool, seed=0)
        assert min(far.synthetic.per_class) > 10 * max(abs(v) for v in far.real.per_class)
        assert abs(far.synthetic.overall) < 0.01
    assert "pooled" in far.space
    # An independent draw of the same texts is as close to the test texts as the private texts are: about 0.
    fresh = text_mmd(sets["fresh"], test, private=sets["private"], seed=0)
    assert abs(fresh.synthetic.overall) < 0.005 and max(abs(v) for v in fresh.synthetic.per_class) < 0.005


def test_exact_copies_ignore_case_and_spacing_and_near_copies_need_nearly_every_word():
    long = ("The quick brown fox jumps over the lazy dog near the quiet river bank today while two old fishermen "
            "watch from a small wooden boat")
    private = np.array([long, "Completely different words appear here"])
    words = long.split()
    one, two = words.copy(), words.copy()
    one[0] = two[5] = two[15] = "zebra"
    candidates = np.array(["  " + long.upper().replace(" ", "   ") + " ", " ".join(one), " ".join(two),
                           "A fast brown fox leapt over a sleepy dog by the calm river while fishermen watched",
                           "Completely different words appear here!"])
    found = text_copies(candidates, private)
    assert found.exact.tolist() == [True, False, False, False, False]
    # One word of 25 changed is still a near duplicate, two are not, a paraphrase is far; punctuation is no word.
    assert found.near.tolist() == [True, True, False, False, True]
    assert NEAR_DUPLICATE_COSINE <= found.cosine[1] < 1.0 and found.cosine[3] < 0.5
    assert found.nearest.tolist()[:4] == [0, 0, 0, 0] and found.nearest[4] == 1
    assert normalise(" Ａ\tB ") == "a b"  # NFKC turns the full-width A into A


def test_a_synthetic_set_of_one_class_is_reported_not_raised(sets):
    fresh = sets["fresh"]
    only_cooking = fresh.subset(fresh.labels == 0)
    judged = judge_texts(only_cooking, sets["test"], seed=0)
    for model in ("tfidf", "lsa"):
        result = judged.result("synthetic", model)
        assert result.scores is None and "at least two" in result.error
    assert judged.to_json()["synthetic_per_class"] == {"cooking": 80, "sport": 0}


def test_a_tiny_corpus_gets_a_smaller_lsa_space_not_an_error():
    space = LsaSpace(["red apples", "green apples", "red cars"], seed=0)
    points = space.transform(["red apples", "unknown"])
    assert space.dims == 2 and points.shape == (2, 2)
    assert np.isclose(np.linalg.norm(points[0]), 1.0) and not points[1].any()


def test_sets_with_different_classes_are_refused(sets):
    other = LabeledDataset(sets["test"].samples, sets["test"].labels, ("a", "b"), "text", sets["test"].sources)
    with pytest.raises(ValueError, match="differ"):
        judge_texts(sets["fresh"], other)


# ------------------------------------------------------------------------------------------- files and the run


def write_jsonl(path, texts, labels=None, *, text_field="text", label_field="label"):
    with open(path, "w", encoding="utf-8") as handle:
        for i, text in enumerate(texts):
            record = {text_field: str(text)}
            if labels is not None:
                record[label_field] = CLASSES[int(labels[i])]
            handle.write(json.dumps(record) + "\n")
    return path


def test_judge_text_files_reads_aligns_classes_and_returns_the_secure_figures_apart(sets, public, tmp_path):
    fresh = sets["fresh"]
    only_cooking = fresh.subset(fresh.labels == 0)  # a peer system's set may miss a class
    fields = {"text_field": "body", "label_field": "topic"}
    files = {name: write_jsonl(tmp_path / f"{name}.jsonl", d.samples, d.labels, **fields)
             for name, d in (("private", sets["private"]), ("test", sets["test"]), ("synthetic", only_cooking))}
    result = judge_text_files(files["synthetic"], files["test"], private_path=files["private"],
                              public_path=write_jsonl(tmp_path / "public.jsonl", public, **fields), seed=0, **fields)
    assert result["class_names"] == list(CLASSES) and result["synthetic_per_class"] == {"cooking": 80, "sport": 0}
    assert result["secure"]["privacy"]["private_texts"] == len(sets["private"])
    assert "public texts" in result["distribution"]["space"]
    json.dumps(result)  # JSON-ready


def read_field(path, name):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line)[name] for line in handle if line.strip()]


def text_config(data, *, text_field="text"):
    """The run config of a text run, or a skip while the config does not accept text runs yet."""
    try:
        return parse_config({"name": "tiny-text", "seed": 0,
                             "data": {"modality": "text", "private": str(data / "private.jsonl"),
                                      "public": str(data / "public.jsonl"), "test": str(data / "test.jsonl"),
                                      "full": None, "text_column": text_field, "label_column": "topic",
                                      "classes": list(CLASSES)},
                             "decoder": {"name": "nearest-public"},
                             "privacy": {"split": {"representation": 0.0, "release": 1.0}}},
                            source="<tiny text config>")
    except Exception as error:  # noqa: BLE001 — ConfigError or ValidationError, whichever the config raises
        pytest.skip(f"the run config does not accept a text run yet (data.modality 'text' with data.text_column): "
                    f"{str(error).splitlines()[0]}")


def make_text_run(root, *, leaky=False):
    """A finished-looking text run under ``root/run`` with its texts under ``root/data`` (field names body, topic)."""
    rng = np.random.default_rng(11)
    data = root / "data"
    data.mkdir(parents=True)
    private, test, fresh = (draw(rng, counts=(40, 60)) for _ in range(3))
    fields = {"text_field": "body", "label_field": "topic"}
    write_jsonl(data / "private.jsonl", *private, **fields)
    write_jsonl(data / "test.jsonl", *test, **fields)
    write_jsonl(data / "public.jsonl", draw(rng, counts=(100, 100))[0], **fields)
    config = text_config(data, text_field="body")
    run = root / "run"
    run.mkdir()
    dump_config(config, run / "config.yaml")
    atomic_write_json(run / "manifest.json", {"seed": 0})
    texts, labels = fresh
    if leaky:  # plant 10 private texts, five of them with another case and spacing
        planted = [t.upper() if i % 2 else "  " + t.replace(" ", "  ") for i, t in enumerate(private[0][:10])]
        texts, labels = np.r_[texts, planted], np.r_[labels, private[1][:10]]
    write_jsonl(run / "synthetic.jsonl", texts, labels, **fields)
    ledger = BudgetLedger(8.0, 1e-5, {"release": 8.0}, path=run / "ledger.json")
    ledger.charge("release", GaussianRelease(1.5), description="class statistics")
    np.savez(run / "release.npz", counts=np.array([41.3, 58.8]))
    return run


def _evaluate(*args):
    app = typer.Typer(pretty_exceptions_enable=False)
    app.command("evaluate")(evaluate_commands.evaluate)
    app.command("noop")(lambda: None)  # two commands, so `evaluate` is addressed by name as under pcevolve
    return CliRunner().invoke(app, ["evaluate", *map(str, args)])


def _sample_rows(markdown):
    sample = markdown.split("## Synthetic texts (sample)")[1].split("\n## ")[0]
    return [tuple(c.strip() for c in line.strip("|").split("|")) for line in sample.splitlines()
            if line.startswith("| ") and not line.startswith("| class |")]


def test_pcevolve_evaluate_judges_a_text_run_and_writes_its_report(tmp_path):
    run = make_text_run(tmp_path)
    result = _evaluate(run, "--quiet")  # no --test: the run's data.test
    assert result.exit_code == 0, result.output
    for text in ("tfidf", "lsa", "MMD²", "membership attack AUC", "copied from the private texts: none",
                 "report.html"):
        assert text in result.output, text
    report = run / "report"
    markdown = (report / "report.md").read_text(encoding="utf-8")
    for text in ("Headline", "Utility", "Distribution", "Privacy", "Synthetic texts (sample)", "Privacy ledger",
                 "LSA probe", "▶ cooking", "cannot tell them apart", "not differentially private"):
        assert text in markdown, text
    assert "SPEC" not in markdown and (report / "report.html").is_file()
    shared = json.loads((report / "evaluation.json").read_text(encoding="utf-8"))
    secure = json.loads((run / "secure" / "evaluation.json").read_text(encoding="utf-8"))
    assert shared["modality"] == "text" and shared["data"]["text_field"] == "body"
    assert shared["data"]["private"]["per_class_dp_estimate"] == [41, 59]
    assert "private_per_class" not in json.dumps(shared) and secure["private_per_class"] == [40, 60]
    assert secure["privacy"]["members"] == 100 and shared["judgement"]["privacy"]["private_texts_copied"] is False
    # Nothing outside secure/ carries an exact private-derived figure or an absolute path; the files by name only.
    assert [str(v) for v in shipped_violations(run, words=("attack", "member", "distance", "real"))] == []
    assert shared["run"]["folder"] == "run" and shared["data"]["test"]["path"] == "test.jsonl"
    assert secure["paths"]["test"] == str(tmp_path / "data" / "test.jsonl")
    assert str(tmp_path) not in markdown and str(tmp_path) not in (report / "report.html").read_text(encoding="utf-8")
    # The sample: 5 synthetic texts per class, none of them private.
    rows = _sample_rows(markdown)
    assert [label for label, _ in rows] == ["cooking"] * 5 + ["sport"] * 5
    synthetic = set(read_field(run / "synthetic.jsonl", "body"))
    assert all(text in synthetic for _, text in rows)
    assert set(JUDGES) == {"image", "tabular", "text"}


def test_a_leaky_text_run_is_flagged_and_its_sample_shows_no_private_text(tmp_path):
    run = make_text_run(tmp_path, leaky=True)
    result = _evaluate(run, "--test", tmp_path / "data" / "test.jsonl", "--quiet")
    assert result.exit_code == 0, result.output
    assert "copied from the private texts: YES" in result.output
    markdown = (run / "report" / "report.md").read_text(encoding="utf-8")
    assert "disclose what that person wrote" in markdown and "were left out of this sample" in markdown
    secure = json.loads((run / "secure" / "evaluation.json").read_text(encoding="utf-8"))
    assert secure["privacy"]["private_exact_copies"] == 10 and secure["privacy"]["private_near_copies"] == 10
    private = {normalise(text) for text in read_field(tmp_path / "data" / "private.jsonl", "body")}
    rows = _sample_rows(markdown)
    assert len(rows) == 10 and not any(normalise(text) in private for _, text in rows)


def test_text_run_errors_are_one_line_naming_the_problem(tmp_path):
    run = make_text_run(tmp_path)
    missing = _evaluate(run, "--test", tmp_path / "nope.jsonl")
    assert missing.exit_code == 1 and str(tmp_path / "nope.jsonl") in missing.output
    assert len(missing.output.strip().splitlines()) == 1
    full = _evaluate(run, "--full", tmp_path)
    assert full.exit_code == 1 and "--full is for image runs" in full.output
    with open(run / "synthetic.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"body": "a text of an unknown class", "topic": "weather"}) + "\n")
    unknown = _evaluate(run)
    assert unknown.exit_code == 1 and "synthetic.jsonl" in unknown.output and "weather" in unknown.output
    (run / "synthetic.jsonl").unlink()
    gone = _evaluate(run)
    assert gone.exit_code == 1 and "synthetic.jsonl" in gone.output and not (run / "report").exists()
