"""A text run's evaluation → its report (``RUN/report/``): headline, per class, utility, distribution (with the texts'
lengths), privacy (with the attack's ROC curve), sample texts per class, synthetic texts beside their nearest public
texts, the ledger, the audit, the search's fitness, the settings; and the writer, :func:`write_text_report`.

Every number comes from :meth:`~pcevolve.evaluation.text_run.TextRunEvaluation.to_json` (the shareable figures), so
the report shows nothing that ``evaluation.json`` does not hold, and a figure computed on the private texts no finer
than it ships there (rates as whole percents, distances with three decimals); files are named by their names only.
Two figures are drawn from the evaluation's samples instead, as the image report draws its own: the texts' lengths
(synthetic and test texts only) and the attack's ROC curve, at fixed false-positive rates with rounded rates
(:func:`~pcevolve.report.figures.shared_roc`), so that its steps do not show the member count. The sample texts are
synthetic (and public) texts that are neither a private text nor a near duplicate of one
(:func:`~pcevolve.evaluation.text_duplicates.text_copies`), and the writer checks every one of them again
(:func:`~pcevolve.report.safety.check_no_private_texts`) and refuses the report if one slipped through. The
document's frame and the sections it shares with the table report are :mod:`~pcevolve.report.file_report`'s.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.evaluation.text_duplicates import (
    NEAR_DUPLICATE_COSINE,
    SHARED_RUN_WORDS,
    shared_runs,
    text_copies,
)
from pcevolve.evaluation.text_run import TextRunEvaluation
from pcevolve.evaluation.text_spaces import LSA_DIMS, NGRAMS
from pcevolve.evaluation.text_utility import LINES, MODELS
from pcevolve.report import figures, file_report
from pcevolve.report.document import Document, Paragraph, Plot, Section, Table, TextPreview
from pcevolve.report.marginals import text_lengths
from pcevolve.report.neighbours import pairs_section, spread, text_pairs
from pcevolve.report.write import write_run_report

#: Synthetic texts per class in the sample.
PREVIEW_PER_CLASS = 5
#: Longest text shown whole in the sample; a longer one is cut at a word boundary before this many characters.
PREVIEW_CHARS = 300
#: How the report names a text run's samples.
WORDS = file_report.SampleWords(sample="text", synthetic="texts", private="private set", run="text")
_DASH = "—"


def build_text_document(evaluation: TextRunEvaluation, *, preview_per_class: int = PREVIEW_PER_CLASS) -> Document:
    """The report of one text evaluation (no file is written here)."""
    data = evaluation.to_json()
    allowed = _showable(evaluation)
    return file_report.file_run_document(
        evaluation, data, WORDS, MODELS, headline=_headline(evaluation, data), utility=_utility(data),
        distance=_distribution(evaluation, data), privacy=_privacy(evaluation, data),
        preview=_preview(evaluation, allowed, preview_per_class), pairs=_pairs(evaluation, allowed),
        settings=_settings(data))


def _mmd(value: float | None, digits: int = 4) -> str:
    """MMD² with four decimals (three for the private texts', shipped with no more), sign kept (the unbiased
    estimate can be slightly negative)."""
    return _DASH if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _real_mmd(value: float | None) -> str:
    """The private texts' MMD², as precise as it ships (:func:`~pcevolve.evaluation.shipped.shared_distance`)."""
    return _mmd(value, 3)


def _copy_words(privacy: dict[str, Any]) -> tuple[str, str]:
    exact = "YES — at least one" if privacy["private_texts_copied"] else "none"
    near = "YES — at least one" if privacy["private_texts_near_copied"] else "none"
    return exact, near


def _headline(evaluation: TextRunEvaluation, data: dict[str, Any]) -> Section:
    distribution, privacy = data["judgement"]["distribution"], data["judgement"]["privacy"]
    real_mmd = distribution["real_reference"]
    distances = (("distribution distance to the real test texts (MMD², all classes)",
                  _mmd(distribution["synthetic"]["overall"]),
                  _DASH if real_mmd is None else _real_mmd(real_mmd["overall"]), "lower is closer; about 0: alike"),)
    copies: tuple[tuple[str, str], ...] = ()
    if privacy is not None:
        exact, near = _copy_words(privacy)
        copies = (("synthetic texts copied from a private text", exact),
                  (f"synthetic texts nearly equal to a private text (similarity ≥ "
                   f"{privacy['near_duplicate_cosine']:g})", near))
    copied = privacy is not None and (privacy["private_texts_copied"] or privacy["private_texts_near_copied"])
    return file_report.headline_section(
        evaluation, data, WORDS, MODELS, scores=(("accuracy / macro-F1", ("accuracy", "macro_f1")),),
        distances=distances, copies=copies,
        caption="Classifiers trained on the synthetic texts, or on the private texts as a reference, and tested on "
                "the real test texts; the distance between the synthetic and the test texts. The reference shows what "
                "the private texts themselves would give — it cannot be published.",
        note=Paragraph(f"{MODELS['tfidf']} classifies a text by the words and word pairs it uses; the {MODELS['lsa']} "
                       "by the broad themes those words form (see Utility). Macro-F1 weighs every class equally, so a "
                       "neglected small class pulls it down.", tone="note"),
        copied="Some synthetic texts repeat a private text word for word or almost: they disclose what that person "
               "wrote. Remove them before sharing the synthetic texts (see Privacy)." if copied else None)


def _utility(data: dict[str, Any]) -> Section:
    low, high = NGRAMS
    return file_report.utility_section(
        data, WORDS, model="classifier", scores=(("accuracy", "accuracy"), ("macro-F1", "macro_f1")),
        caption="Every classifier on every training set, tested on the same real test texts. Rows trained on the "
                "synthetic texts are highlighted. Macro-F1 is the F1 score averaged over the classes with equal "
                "weight, so a neglected small class pulls it down.",
        notes=(Paragraph(
            "Can a classifier learn the classes from the synthetic texts alone? Two simple classifiers, fixed in "
            f"advance and never tuned on the test texts, answer it. The first, {MODELS['tfidf']!r}, describes each "
            f"text by which words and pairs of adjacent words ({low}- to {high}-word sequences) it uses, weighted up "
            "when they are rare across texts (TF-IDF), and fits a logistic regression on that. The second, the 'LSA "
            f"probe', compresses the same description into at most {LSA_DIMS} broad themes (latent semantic "
            f"analysis) learnt from {data['judgement']['lsa_basis']}, and fits a logistic regression on the themes: "
            "it checks that the synthetic texts carry each class's topics, not only some of its exact phrases. The "
            "real reference is the same classifiers trained on the private texts: it shows what they would give, is "
            "not differentially private, and its size is given by the run's noisy count.", tone="note"),))


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
        return file_report.no_attack_section(WORDS)
    exact, near = _copy_words(privacy)
    threshold = privacy["near_duplicate_cosine"]
    copies = (
        ("synthetic texts equal to a private text", exact, privacy["private_texts_copied"]),
        (f"synthetic texts nearly equal to a private text (similarity ≥ {threshold:g})", near,
         privacy["private_texts_near_copied"]),
        ("synthetic texts equal to a test text (what chance gives)", str(privacy["test_texts_copied"]), False),
        ("synthetic texts nearly equal to a test text (what chance gives)", str(privacy["test_texts_near_copied"]),
         False),
    )
    attack = Paragraph(
        "The membership attack plays the part of someone who holds the synthetic texts and wants to know whether a "
        "given person's text was among the private texts. It scores each real text by how similar it is to the most "
        "similar synthetic text (more similar: more likely a member), and is tried on private texts and on as many "
        "real test texts that were never used. Its AUC is the chance that it ranks a random private text above a "
        "random unused one: 0.5 means it cannot tell them apart — what private synthetic texts should show — and 1.0 "
        "means it always can. Similarity is the cosine similarity of the texts' word and word-pair weights (TF-IDF, "
        "with weights learnt from the synthetic texts: what the attacker holds); 1 means the same words in the same "
        "proportions.")
    note = Paragraph(
        "A text counts as equal to another when the two are the same after ignoring upper and lower case and "
        f"spacing; as nearly equal when their similarity is at least {threshold:g} — they share nearly all their "
        "words and word pairs: a sentence of 25 words with one word changed scores about 0.9, with two words changed "
        "about 0.8, the same idea in other words far less (equal texts are counted as nearly equal too). Texts equal "
        "to a test text show how often the same text occurs by chance in this kind of data: short stock phrases "
        "recur and are harmless. The AUC is rounded to two decimals and copies of private texts are reported only as "
        "present or not, because exact values would reveal the number of private texts; they are in the run's "
        "secure/evaluation.json.", tone="note")
    return file_report.privacy_section(evaluation, privacy, copies, attack=attack, scored_by="closest synthetic text",
                                       note=note)


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
    described, judgement = data["data"], data["judgement"]
    return file_report.settings_section(
        data, WORDS,
        Table(("setting", "value"), (("seed", str(judgement["seed"])),
                                     ("text field / label field",
                                      f"{described['text_field']} / {described['label_field']}"),
                                     ("classifiers", ", ".join(MODELS.values())),
                                     ("TF-IDF + logistic regression", judgement["probes"]["tfidf"]),
                                     ("LSA probe", judgement["probes"]["lsa"]),
                                     ("training sets", ", ".join(LINES.values())),
                                     ("distribution space", judgement["distribution"]["space"]),
                                     ("near-duplicate similarity", f"≥ {NEAR_DUPLICATE_COSINE:g} (TF-IDF cosine)"))))


def write_text_report(evaluation: TextRunEvaluation, *, folder: str | os.PathLike[str] | None = None,
                      preview_per_class: int = PREVIEW_PER_CLASS) -> Path:
    """Build and write the report of a text evaluation into ``folder`` (default ``RUN/report``), and its exact
    private figures into ``RUN/secure/evaluation.json`` (:func:`~pcevolve.report.write.write_run_report`).

    Raises:
        PrivateSampleInReport: A previewed text is a private text or a near duplicate of one; nothing was written.
    """
    document = build_text_document(evaluation, preview_per_class=preview_per_class)
    return write_run_report(evaluation, evaluation.folder, document, folder=folder,
                            private_texts=evaluation.private.samples)
