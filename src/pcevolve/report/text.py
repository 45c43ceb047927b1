"""A text run's evaluation → its report (``RUN/report/``): headline, per class, utility, distribution (with the texts'
lengths), privacy (with the attack's ROC curve), sample texts per class, synthetic texts beside their nearest public
texts, the ledger, the audit, the search's fitness, the settings; and the writer, :func:`write_text_report`.

Every number comes from :meth:`~pcevolve.evaluation.text_run.TextRunEvaluation.to_json` (the shareable figures), so
the report shows nothing that ``evaluation.json`` does not hold, and a figure computed on the private texts no finer
than it ships there (rates as whole percents, distances with three decimals); files are named by their names only.
Two figures
are drawn from the evaluation's samples instead, as the image report draws its own: the texts' lengths (synthetic
and test texts only) and the attack's ROC curve, at fixed false-positive rates with rounded rates
(:func:`~pcevolve.report.figures.shared_roc`), so that its steps do not show the member count. The sample texts are
synthetic (and public) texts that are neither a private text nor a near duplicate of one
(:func:`~pcevolve.evaluation.text_duplicates.text_copies`), and the writer checks every one of them again
(:func:`~pcevolve.report.safety.check_no_private_texts`) and refuses the report if one slipped through.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.evaluation.shipped import path_name
from pcevolve.evaluation.text_duplicates import (
    NEAR_DUPLICATE_COSINE,
    SHARED_RUN_WORDS,
    shared_runs,
    text_copies,
)
from pcevolve.evaluation.text_run import TextRunEvaluation
from pcevolve.evaluation.text_spaces import LSA_DIMS, NGRAMS
from pcevolve.evaluation.text_utility import LINES, MODELS
from pcevolve.io import atomic_write_json
from pcevolve.report import figures
from pcevolve.report.audit import audit_section
from pcevolve.report.build import attack_roc_plot, fitness_section, ledger_section, pct, shared_pct, sweep_note
from pcevolve.report.document import Document, Paragraph, Plot, Section, Table, TextPreview
from pcevolve.report.marginals import text_lengths
from pcevolve.report.neighbours import pairs_section, spread, text_pairs
from pcevolve.report.per_class import per_class_section
from pcevolve.report.wording import attack_warning
from pcevolve.report.write import write_document
from pcevolve.run_folder import RunFolder

#: Synthetic texts per class in the sample.
PREVIEW_PER_CLASS = 5
#: Longest text shown whole in the sample; a longer one is cut at a word boundary before this many characters.
PREVIEW_CHARS = 300
_DASH = "—"


def build_text_document(evaluation: TextRunEvaluation, *, preview_per_class: int = PREVIEW_PER_CLASS) -> Document:
    """The report of one text evaluation (no file is written here)."""
    data = evaluation.to_json()
    allowed = _showable(evaluation)
    sections = (_headline(evaluation, data), per_class_section(data, MODELS, unit="texts"), _utility(data),
                _distribution(evaluation, data), _privacy(evaluation, data),
                _preview(evaluation, allowed, preview_per_class), _pairs(evaluation, allowed), ledger_section(data),
                audit_section(data), fitness_section(evaluation.folder), _settings(data))
    judged = data["data"]["test"]
    return Document(title=f"pcevolve evaluation — text run {evaluation.config.name}", sections=sections,
                    subtitle=f"{path_name(evaluation.folder)} · synthetic texts judged on {sum(judged['per_class'])} "
                             f"real test texts ({judged['path']}) · (ε, δ) = ({evaluation.epsilon:.3f}, "
                             f"{evaluation.delta:g})")


def _mmd(value: float | None, digits: int = 4) -> str:
    """MMD² with four decimals (three for the private texts', shipped with no more), sign kept (the unbiased
    estimate can be slightly negative)."""
    return _DASH if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _real_mmd(value: float | None) -> str:
    """The private texts' MMD², as precise as it ships (:func:`~pcevolve.evaluation.shipped.shared_distance`)."""
    return _mmd(value, 3)


def _result(data: dict[str, Any], line: str, model: str) -> dict[str, Any] | None:
    return next((r for r in data["judgement"]["utility"] if r["line"] == line and r["model"] == model), None)


def _metric(result: dict[str, Any] | None, key: str) -> str:
    """A probe's score; for the real reference (trained on the private texts, shipped with two decimals) a whole
    percent."""
    if result is None or result.get(key) is None:
        return _DASH
    return shared_pct(result[key]) if result["reference_only"] else pct(result[key])


def _pair(result: dict[str, Any] | None) -> str:
    return f"{_metric(result, 'accuracy')} / {_metric(result, 'macro_f1')}"


def _copy_words(privacy: dict[str, Any]) -> tuple[str, str]:
    exact = "YES — at least one" if privacy["private_texts_copied"] else "none"
    near = "YES — at least one" if privacy["private_texts_near_copied"] else "none"
    return exact, near


def _headline(evaluation: TextRunEvaluation, data: dict[str, Any]) -> Section:
    judgement = data["judgement"]
    names = judgement["class_names"]
    per_class = judgement["synthetic_per_class"]
    claim = (f"released under (ε, δ) = ({evaluation.epsilon:.3f}, {evaluation.delta:g}) differential privacy, as the "
             "run's privacy ledger accounts it" if data["dp"] else
             f"NOT differentially private: the run used reproducible noise (ε {evaluation.epsilon:.3f} would hold "
             "only if nobody could regenerate the noise, and anyone with the run's config can)")
    delivered = ", ".join(f"{name}: {count}" for name, count in per_class.items())
    blocks: list[Any] = [Paragraph(f"Synthetic texts: {sum(per_class.values())} texts in {len(names)} classes "
                                   f"({delivered}), {claim}.", tone="text" if data["dp"] else "warning")]
    if (note := sweep_note(data)) is not None:
        blocks.append(note)
    distribution, privacy = judgement["distribution"], judgement["privacy"]
    real_mmd = distribution["real_reference"]
    rows = [(f"accuracy / macro-F1, {MODELS[model]}", _pair(_result(data, "synthetic", model)),
             _pair(_result(data, "real", model)), "higher is better") for model in MODELS]
    rows.append(("distribution distance to the real test texts (MMD², all classes)",
                 _mmd(distribution["synthetic"]["overall"]),
                 _DASH if real_mmd is None else _real_mmd(real_mmd["overall"]), "lower is closer; about 0: alike"))
    if privacy is not None:
        exact, near = _copy_words(privacy)
        rows.append(("membership attack AUC", f"{privacy['auc']:.2f}", _DASH, "0.5: the attacker cannot tell"))
        rows.append(("synthetic texts copied from a private text", exact, _DASH, "should be none"))
        similar = f"similarity ≥ {privacy['near_duplicate_cosine']:g}"
        rows.append((f"synthetic texts nearly equal to a private text ({similar})", near, _DASH, "should be none"))
    blocks.append(Table(("measure", "synthetic texts", "real reference (private texts, not DP)", "reading"),
                        tuple(rows),
                        caption="Classifiers trained on the synthetic texts, or on the private texts as a reference, "
                                "and tested on the real test texts; the distance between the synthetic and the test "
                                "texts. The reference shows what the private texts themselves would give — it "
                                "cannot be published."))
    blocks.append(Paragraph(f"{MODELS['tfidf']} classifies a text by the words and word pairs it uses; the "
                            f"{MODELS['lsa']} by the broad themes those words form (see Utility). Macro-F1 weighs "
                            "every class equally, so a neglected small class pulls it down.", tone="note"))
    if privacy is not None:
        if privacy["private_texts_copied"] or privacy["private_texts_near_copied"]:
            blocks.append(Paragraph("Some synthetic texts repeat a private text word for word or almost: they "
                                    "disclose what that person wrote. Remove them before sharing the synthetic texts "
                                    "(see Privacy).", tone="warning"))
        warning = attack_warning(privacy, "text")
        if warning:
            blocks.append(Paragraph(warning, tone="warning"))
        blocks.append(Paragraph(data["caveat"], tone="note"))
    return Section("Headline", tuple(blocks), anchor="headline")


def _utility(data: dict[str, Any]) -> Section:
    judgement = data["judgement"]
    private_size = sum(data["data"]["private"]["per_class_dp_estimate"] or [])
    rows = []
    for result in judgement["utility"]:
        size = (f"≈ {private_size} (noisy DP count)" if result["train_size"] is None else str(result["train_size"]))
        rows.append((result["label"], result["model_label"], _metric(result, "accuracy"),
                     _metric(result, "macro_f1"), size, result["error"] or ""))
    lines = Table(("trained on", "classifier", "accuracy", "macro-F1", "training texts", "note"), tuple(rows),
                  highlight=tuple(i for i, r in enumerate(judgement["utility"]) if r["line"] == "synthetic"),
                  caption="Every classifier on every training set, tested on the same real test texts. Rows trained "
                          "on the synthetic texts are highlighted. Macro-F1 is the F1 score averaged over the classes "
                          "with equal weight, so a neglected small class pulls it down.")
    low, high = NGRAMS
    return Section("Utility", (
        lines,
        Paragraph("Can a classifier learn the classes from the synthetic texts alone? Two simple classifiers, fixed "
                  "in advance and never tuned on the test texts, answer it. The first, "
                  f"{MODELS['tfidf']!r}, describes each text by which words and pairs of adjacent words "
                  f"({low}- to {high}-word sequences) it uses, weighted up when they are rare across texts (TF-IDF), "
                  "and fits a logistic regression on that. The second, the 'LSA probe', compresses the same "
                  f"description into at most {LSA_DIMS} broad themes (latent semantic analysis) learnt from "
                  f"{judgement['lsa_basis']}, and fits a logistic regression on the themes: it checks that the "
                  "synthetic texts carry each class's topics, not only some of its exact phrases. The real reference "
                  "is the same classifiers trained on the private texts: it shows what they would give, is not "
                  "differentially private, and its size is given by the run's noisy count.", tone="note"),
    ), anchor="utility")


def _distribution(evaluation: TextRunEvaluation, data: dict[str, Any]) -> Section:
    judgement = data["judgement"]
    distribution = judgement["distribution"]
    synthetic, real = distribution["synthetic"], distribution["real_reference"]
    names = judgement["class_names"]
    rows = [("all classes", _mmd(synthetic["overall"]), _DASH if real is None else _real_mmd(real["overall"]))]
    rows += [(name, _mmd(synthetic["per_class"][k]), _DASH if real is None else _real_mmd(real["per_class"][k]))
             for k, name in enumerate(names)]
    worst = synthetic["worst_class"]
    table = Table(("class", "MMD² synthetic → test", "MMD² private → test (reference)"), tuple(rows),
                  highlight=() if worst is None else (worst + 1,),
                  caption="How far the synthetic texts are, as a collection, from the real test texts, overall and "
                          "class by class; the class farthest away is highlighted. The reference is the private "
                          "texts' own distance to the test texts: sampling differences alone give about that much.")
    synthetic, test = evaluation.synthetic, evaluation.test
    lengths = Plot("text_lengths", figures.marginals(text_lengths(test.samples, test.labels, synthetic.samples,
                                                                  synthetic.labels, names)),
                   "Words per text: the real test texts (grey) against the synthetic texts (blue), all classes and "
                   "class by class; each panel spans the test texts' lengths, the rarest 0.5% at each end counted in "
                   "the end bins.")
    return Section("Distribution", (
        table, lengths,
        Paragraph("The distance is the maximum mean discrepancy (MMD²): it compares every synthetic text with every "
                  "test text, and each set with itself, and is 0 when the two collections could have been drawn "
                  "from the same source; larger values mean they differ in what they talk about or how. It can come "
                  "out slightly below 0 by chance. Texts are compared in a space of broad themes: "
                  f"{distribution['space']}. Two texts are similar there when they use related words, and the "
                  "kernel's width is the typical distance between the texts compared (the median heuristic), the "
                  "same for every row of the table."
                  + (f" At most {distribution['most_per_set']} texts of each set are compared (a seeded choice)."
                     if distribution["synthetic_used"] >= distribution["most_per_set"]
                     or distribution["test_used"] >= distribution["most_per_set"] else ""), tone="note"),
    ), anchor="distribution")


def _privacy(evaluation: TextRunEvaluation, data: dict[str, Any]) -> Section:
    privacy = data["judgement"]["privacy"]
    if privacy is None:
        return Section("Privacy", (Paragraph("No private texts were given, so no attack was run."),),
                       anchor="privacy")
    low, high = privacy["auc_interval"]
    bound = {True: "yes — stronger than the guarantee allows", False: "no", None: _DASH}[privacy["exceeds_dp_bound"]]
    exact, near = _copy_words(privacy)
    threshold = privacy["near_duplicate_cosine"]
    table = Table(("check", "result"), (
        ("membership attack AUC", f"{privacy['auc']:.2f} ({privacy['confidence']:.0%} interval {low:.2f}–{high:.2f})"),
        ("best-threshold success (share of right guesses)", f"{privacy['success']:.0%}"),
        ("attack beats the ε-DP bound at a low false-positive rate", bound),
        ("synthetic texts equal to a private text", exact),
        (f"synthetic texts nearly equal to a private text (similarity ≥ {threshold:g})", near),
        ("synthetic texts equal to a test text (what chance gives)", str(privacy["test_texts_copied"])),
        ("synthetic texts nearly equal to a test text (what chance gives)", str(privacy["test_texts_near_copied"])),
    ), highlight=tuple(i for i, hit in ((3, privacy["private_texts_copied"]),
                                        (4, privacy["private_texts_near_copied"])) if hit))
    return Section("Privacy", (
        Paragraph("The membership attack plays the part of someone who holds the synthetic texts and wants to know "
                  "whether a given person's text was among the private texts. It scores each real text by how "
                  "similar it is to the most similar synthetic text (more similar: more likely a member), and is "
                  "tried on private texts and on as many real test texts that were never used. Its AUC is the chance "
                  "that it ranks a random private text above a random unused one: 0.5 means it cannot tell them "
                  "apart — what private synthetic texts should show — and 1.0 means it always can. Similarity is "
                  "the cosine similarity of the texts' word and word-pair weights (TF-IDF, with weights learnt from "
                  "the synthetic texts: what the attacker holds); 1 means the same words in the same proportions."),
        table,
        attack_roc_plot("closest synthetic text", evaluation.judgement.privacy.attack, epsilon=evaluation.epsilon,
                        delta=evaluation.delta),
        Paragraph("A text counts as equal to another when the two are the same after ignoring upper and lower case "
                  f"and spacing; as nearly equal when their similarity is at least {threshold:g} — they share nearly "
                  "all their words and word pairs: a sentence of 25 words with one word changed scores about 0.9, "
                  "with two words changed about 0.8, the same idea in other words far less (equal texts are "
                  "counted as nearly equal too). Texts equal to a test text show how often the same text occurs by "
                  "chance in this kind of data: short stock phrases recur and are harmless. The AUC is rounded to two "
                  "decimals and copies of private texts are reported only as present or not, because exact values "
                  "would reveal the number of private texts; they are in the run's secure/evaluation.json.",
                  tone="note"),
        Paragraph(privacy["caveat"], tone="note"),
    ), anchor="privacy")


def shorten(text: str, most: int = PREVIEW_CHARS) -> str:
    """``text`` with its whitespace made single spaces, cut before ``most`` characters at a word boundary (+ " …")."""
    flat = " ".join(str(text).split())
    if len(flat) <= most:
        return flat
    cut = flat[: most - 2]
    space = cut.rfind(" ")
    return (cut[:space] if space > most // 2 else cut).rstrip() + " …"


def _showable(evaluation: TextRunEvaluation) -> np.ndarray:
    """(N,) bool: the synthetic texts a report may show. Texts that are (or whose shown start is) a private text, a
    near duplicate or hold a passage of one are left out: the safety check would refuse the whole report otherwise.
    The tests are the safety check's own, so the two always agree."""
    private = evaluation.private.samples
    texts = np.asarray(evaluation.synthetic.samples, dtype=str)
    if not len(texts):
        return np.zeros(0, dtype=bool)
    shown = np.array([shorten(t) for t in texts], dtype=str)
    blocked = text_copies(texts, private).near | shared_runs(texts, private)
    cut = np.flatnonzero(shown != np.array([" ".join(t.split()) for t in texts], dtype=str))
    if cut.size:
        blocked[cut] |= text_copies(shown[cut], private).near | shared_runs(shown[cut], private)
    return ~blocked


def _preview(evaluation: TextRunEvaluation, allowed: np.ndarray, per_class: int) -> Section:
    synthetic = evaluation.synthetic
    texts = np.asarray(synthetic.samples, dtype=str)
    index = spread(synthetic.labels, len(synthetic.class_names), allowed, per_class)
    preview = TextPreview("synthetic_texts", texts=tuple(texts[index].tolist()),
                          shown=tuple(shorten(t) for t in texts[index]),
                          labels=tuple(synthetic.class_names[synthetic.labels[i]] for i in index),
                          sources=tuple(synthetic.sources[i] for i in index),
                          caption=f"Synthetic texts, up to {per_class} per class, evenly spaced through "
                                  f"synthetic.jsonl; a text longer than {PREVIEW_CHARS} characters is shortened (…).")
    missing = [name for k, name in enumerate(synthetic.class_names) if not np.any(synthetic.labels[index] == k)]
    note = ("Before the report was written every text above — as shown and whole — was compared with every private "
            "text, and the report would have been refused had one been equal or nearly equal (similarity ≥ "
            f"{NEAR_DUPLICATE_COSINE:g}) to a private text, or repeated {SHARED_RUN_WORDS} or more consecutive words "
            "of one. The report holds no private text."
            + (" Synthetic texts equal or close to a private text were left out of this sample."
               if not allowed.all() else "")
            + (f" No synthetic text can be shown for: {', '.join(missing)}." if missing else ""))
    return Section("Synthetic texts (sample)", (preview, Paragraph(note, tone="note")), anchor="sample")


def _pairs(evaluation: TextRunEvaluation, allowed: np.ndarray) -> Section:
    pairs, skipped = (None, False) if evaluation.public is None else text_pairs(
        evaluation.synthetic, allowed, evaluation.public, evaluation.private.samples, show=shorten)
    return pairs_section(pairs, skipped, noun="text", decoder=evaluation.config.decoder.name, same="similarity 1",
                         matches="is or holds", has_public=evaluation.public is not None)


def _settings(data: dict[str, Any]) -> Section:
    described = data["data"]
    judgement = data["judgement"]
    private = described["private"]["per_class_dp_estimate"]
    fields = f"{described['text_field']} / {described['label_field']}"
    sets = [("synthetic", described["synthetic"]["path"], str(sum(described["synthetic"]["per_class"]))),
            ("private", str(described["private"]["path"]), _DASH if private is None else
             f"≈ {sum(private)} (noisy DP count)"),
            ("test", described["test"]["path"], str(sum(described["test"]["per_class"])))]
    if described["public"] is not None:
        sets.append(("public", str(described["public"]["path"]), str(described["public"]["texts"])))
    return Section("Settings and data", (
        Table(("set", "path", "texts"), tuple(sets),
              caption="The private set's exact size and the evaluation's timings stay in the run's "
                      "secure/evaluation.json."),
        Table(("setting", "value"), (("seed", str(judgement["seed"])),
                                     ("text field / label field", fields),
                                     ("classifiers", ", ".join(MODELS.values())),
                                     ("TF-IDF + logistic regression", judgement["probes"]["tfidf"]),
                                     ("LSA probe", judgement["probes"]["lsa"]),
                                     ("training sets", ", ".join(LINES.values())),
                                     ("distribution space", judgement["distribution"]["space"]),
                                     ("near-duplicate similarity", f"≥ {NEAR_DUPLICATE_COSINE:g} (TF-IDF cosine)"))),
    ), anchor="settings")


def write_text_report(evaluation: TextRunEvaluation, *, folder: str | os.PathLike[str] | None = None,
                      preview_per_class: int = PREVIEW_PER_CLASS) -> Path:
    """Build and write the report of a text evaluation into ``folder`` (default ``RUN/report``).

    The exact private figures the report leaves out go to ``RUN/secure/evaluation.json``; with the default folder,
    the report's files get the run's start time, so their times do not reveal how long the evaluation took.

    Raises:
        PrivateSampleInReport: A previewed text is a private text or a near duplicate of one; nothing was written.
    """
    run = evaluation.folder
    target = Path(folder) if folder is not None else run / "report"
    document = build_text_document(evaluation, preview_per_class=preview_per_class)
    written = write_document(target, document, private_texts=evaluation.private.samples,
                             evaluation_json=evaluation.to_json())
    (run / "secure").mkdir(exist_ok=True)
    atomic_write_json(run / "secure" / "evaluation.json", evaluation.to_secure_json())
    if folder is None and (run / "manifest.json").is_file():
        RunFolder(run).settle_times()
    return written
