"""The report of a file run (a tabular or text run, :mod:`~pcevolve.evaluation.file_run`): its document
(:func:`file_run_document`) and the sections the table and text reports share, each given what its modality
(:mod:`~pcevolve.report.table`, :mod:`~pcevolve.report.text`) says differently. Every section reads the evaluation
JSON (``to_json()``) and shows a figure computed on the private samples no finer than it ships there (whole percents,
AUCs with two decimals).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pcevolve.evaluation.file_run import FileRunEvaluation
from pcevolve.evaluation.shipped import path_name
from pcevolve.report import figures
from pcevolve.report.audit import audit_section
from pcevolve.report.build import attack_roc_plot, fitness_section, ledger_section, pct, shared_pct, sweep_note
from pcevolve.report.document import Document, Paragraph, Plot, Section, Table
from pcevolve.report.wording import attack_warning, pool_sentence

_DASH = "—"
_MARK = "▶ "


@dataclass(frozen=True)
class SampleWords:
    """How a file run's report names one ``sample`` ("row"; :attr:`samples` "rows", as the evaluation JSON's
    :attr:`~pcevolve.evaluation.file_run.FileRunKind.unit`), the ``synthetic`` set after "synthetic" ("table"), the
    ``private`` set where its exact size is meant ("private table") and the ``run`` in the title ("table")."""

    sample: str
    synthetic: str
    private: str
    run: str

    @property
    def samples(self) -> str:
        return f"{self.sample}s"


def utility_line(data: dict[str, Any], line: str, model: str) -> dict[str, Any] | None:
    """The result of ``model`` trained on ``line`` (``"synthetic"``, ``"real"``) in the JSON's judgement, or None."""
    return next((r for r in data["judgement"]["utility"] if r["line"] == line and r["model"] == model), None)


def line_score(result: dict[str, Any] | None, key: str) -> str:
    """A utility line's score ``key``: an ``"auc"`` with three decimals, any other score as a percent; for the real
    reference (trained on the private samples, its scores shipped with two decimals) an AUC with two decimals or a
    whole percent. A dash when there is none."""
    if result is None or result.get(key) is None:
        return _DASH
    value = result[key]
    if key == "auc":
        return f"{value:.2f}" if result["reference_only"] else f"{value:.3f}"
    return shared_pct(value) if result["reference_only"] else pct(value)


def file_run_document(evaluation: FileRunEvaluation, data: dict[str, Any], words: SampleWords,
                      models: Mapping[str, str], *, headline: Section, utility: Section, distance: Section,
                      privacy: Section, preview: Section, pairs: Section, settings: Section) -> Document:
    """The report of a file run (``data``: its evaluation's JSON): the modality's sections and the shared ones (per
    class of the ``models``, ledger, audit, fitness) in their order, under the run's title and what it was judged on.
    """
    sections = (headline, per_class_section(data, models, unit=words.samples), utility, distance, privacy, preview,
                pairs, ledger_section(data), audit_section(data), fitness_section(evaluation.folder), settings)
    judged = data["data"]["test"]
    return Document(title=f"pcevolve evaluation — {words.run} run {evaluation.config.name}", sections=sections,
                    subtitle=f"{path_name(evaluation.folder)} · synthetic {words.synthetic} judged on "
                             f"{sum(judged['per_class'])} real test {words.samples} ({judged['path']}) · (ε, δ) = "
                             f"({evaluation.epsilon:.3f}, {evaluation.delta:g})")


def headline_section(evaluation: FileRunEvaluation, data: dict[str, Any], words: SampleWords,
                     models: Mapping[str, str], *, scores: Sequence[tuple[str, tuple[str, ...]]],
                     distances: Sequence[tuple[str, str, str, str]], copies: Sequence[tuple[str, str]],
                     caption: str, note: Paragraph, copied: str | None) -> Section:
    """The headline: what was delivered under which guarantee; the key figures — each of the ``models``' ``scores``
    (measure, :func:`line_score` keys shown " / "-joined) trained on the synthetic and on the private samples, the
    modality's ``distances`` (measure, synthetic, real reference, reading), the attack's AUC and its ``copies``
    (measure, result) —, their ``caption`` and a ``note``; then the privacy warnings: ``copied``, that synthetic
    samples copy private ones (None: they do not, or no attack was run), and the attack's."""
    judgement = data["judgement"]
    names = judgement["class_names"]
    per_class = judgement["synthetic_per_class"]
    claim = (f"released under (ε, δ) = ({evaluation.epsilon:.3f}, {evaluation.delta:g}) differential privacy, as the "
             "run's privacy ledger accounts it" if data["dp"] else
             f"NOT differentially private: the run used reproducible noise (ε {evaluation.epsilon:.3f} would hold "
             "only if nobody could regenerate the noise, and anyone with the run's config can)")
    delivered = ", ".join(f"{name}: {count}" for name, count in per_class.items())
    blocks: list[Any] = [Paragraph(f"Synthetic {words.synthetic}: {sum(per_class.values())} {words.samples} in "
                                   f"{len(names)} classes ({delivered}), {claim}.",
                                   tone="text" if data["dp"] else "warning")]
    if (sweep := sweep_note(data)) is not None:
        blocks.append(sweep)
    if data.get("made_by"):
        blocks.append(Paragraph(f"Made without a public pool: {data['made_by']}.", tone="note"))
    if (pool := pool_sentence(data)) is not None:
        blocks.append(Paragraph(pool, tone="note"))
    rows = [(f"{measure}, {label}", *(" / ".join(line_score(utility_line(data, line, model), key) for key in keys)
                                      for line in ("synthetic", "real")), "higher is better")
            for measure, keys in scores for model, label in models.items()]
    rows += distances
    privacy = judgement["privacy"]
    if privacy is not None:
        rows.append(("membership attack AUC", f"{privacy['auc']:.2f}", _DASH, "0.5: the attacker cannot tell"))
        rows += [(measure, result, _DASH, "should be none") for measure, result in copies]
    blocks.append(Table(("measure", f"synthetic {words.samples}", f"real reference (private {words.samples}, not DP)",
                         "reading"), tuple(rows), caption=caption))
    blocks.append(note)
    if privacy is not None:
        if copied is not None:
            blocks.append(Paragraph(copied, tone="warning"))
        warning = attack_warning(privacy, words.sample)
        if warning:
            blocks.append(Paragraph(warning, tone="warning"))
        blocks.append(Paragraph(data["caveat"], tone="note"))
    return Section("Headline", tuple(blocks), anchor="headline")


def per_class_section(data: dict[str, Any], models: Mapping[str, str], *, unit: str) -> Section:
    """Precision, recall and F1 of every model per class (``models``: key → name in the report, in report order;
    ``unit``: the samples, "rows"): a table (the test set's smallest class marked) and the F1 as grouped bars, the
    real reference's as rounded as it ships."""
    judgement = data["judgement"]
    names, minority = judgement["class_names"], judgement["minority_class"]
    columns = ["class", f"test {unit}", f"synthetic {unit}"]
    for label in models.values():
        columns += [f"{label}: precision", f"{label}: recall", f"{label}: F1", f"{label}: F1 (real reference)"]
    rows = []
    for name in names:
        cells = [(_MARK if name == minority else "") + name, str(judgement["test_per_class"][name]),
                 str(judgement["synthetic_per_class"][name])]
        for model in models:
            ours, real = _class_scores(utility_line(data, "synthetic", model), name), _class_scores(
                utility_line(data, "real", model), name)
            cells += [_DASH if ours is None else pct(ours[key]) for key in ("precision", "recall", "f1")]
            cells.append(_DASH if real is None else shared_pct(real["f1"]))
        rows.append(tuple(cells))
    table = Table(tuple(columns), tuple(rows), highlight=(names.index(minority),),
                  caption=f"Per class, models trained on the synthetic {unit} unless marked; ▶ {minority}: the "
                          f"smallest class of the test set, where a synthetic set most often falls short.")
    # Bars: every (line, model) with scores; the real reference as rounded as it ships.
    lines: dict[str, list[float | None]] = {}
    for line, line_label in (("synthetic", "synthetic"), ("real", "private (reference, not DP)")):
        for model, label in models.items():
            result = utility_line(data, line, model)
            if result is not None and "per_class" in result:
                lines[f"{label} — {line_label}"] = [result["per_class"][name]["f1"] for name in names]
    blocks: list[Any] = [table]
    worst = _worst(data, models, names)
    if worst is not None:
        model, index, f1 = worst
        blocks.insert(0, Paragraph(f"Weakest class: {names[index]} (F1 {pct(f1)} with {models[model]} trained on "
                                   f"the synthetic {unit})."))
    if lines:
        blocks.append(Plot("per_class_f1", figures.per_class_accuracy(names, lines, worst=None if worst is None
                                                                      else worst[1], ylabel="test F1 score"),
                           f"F1 per class on the real test {unit}, each model trained on the synthetic {unit} and, as "
                           f"a reference, on the private {unit}; the weakest class of the synthetic {unit} in red."))
    return Section("Per class", tuple(blocks), anchor="per-class")


def _class_scores(result: dict[str, Any] | None, name: str) -> dict[str, float] | None:
    return result["per_class"][name] if result and "per_class" in result else None


def _worst(data: dict[str, Any], models: Mapping[str, str], names: list[str]) -> tuple[str, int, float] | None:
    """(model, class index, F1) of the lowest F1 of a model trained on the synthetic set, or None."""
    found = [(scores["f1"], model, k) for model in models for k, name in enumerate(names)
             if (scores := _class_scores(utility_line(data, "synthetic", model), name)) is not None]
    if not found:
        return None
    f1, model, index = min(found)
    return model, index, f1


def utility_section(data: dict[str, Any], words: SampleWords, *, model: str, scores: Sequence[tuple[str, str]],
                    caption: str, notes: Sequence[Paragraph]) -> Section:
    """Every ``model`` ("classifier") on every training line, tested on the same real test samples, by its
    ``scores`` (header, :func:`line_score` key); the synthetic lines highlighted; the table's ``caption``, then the
    ``notes``."""
    utility = data["judgement"]["utility"]
    private_size = sum(data["data"]["private"]["per_class_dp_estimate"] or [])
    rows = []
    for result in utility:
        size = (f"≈ {private_size} (noisy DP count)" if result["train_size"] is None else str(result["train_size"]))
        rows.append((result["label"], result["model_label"], *(line_score(result, key) for _, key in scores), size,
                     result["error"] or ""))
    lines = Table(("trained on", model, *(header for header, _ in scores), f"training {words.samples}", "note"),
                  tuple(rows), highlight=tuple(i for i, r in enumerate(utility) if r["line"] == "synthetic"),
                  caption=caption)
    return Section("Utility", (lines, *notes), anchor="utility")


def no_attack_section(words: SampleWords) -> Section:
    """The privacy section of a run judged without private samples."""
    return Section("Privacy", (Paragraph(f"No private {words.samples} were given, so no attack was run."),),
                   anchor="privacy")


def privacy_section(evaluation: FileRunEvaluation, privacy: dict[str, Any], copies: Sequence[tuple[str, str, bool]],
                    *, attack: Paragraph, scored_by: str, note: Paragraph) -> Section:
    """The membership attack (``privacy``: the JSON's ``judgement.privacy``, not None): what it does (``attack``),
    its AUC, success and DP bound and the modality's ``copies`` (check, result, whether it is an alarm: highlighted),
    its ROC curve by what it scores a sample by (``scored_by``), then the ``note`` and the caveat."""
    low, high = privacy["auc_interval"]
    bound = {True: "yes — stronger than the guarantee allows", False: "no", None: _DASH}[privacy["exceeds_dp_bound"]]
    checks = (
        ("membership attack AUC", f"{privacy['auc']:.2f} ({privacy['confidence']:.0%} interval {low:.2f}–{high:.2f})"),
        ("best-threshold success (share of right guesses)", f"{privacy['success']:.0%}"),
        ("attack beats the ε-DP bound at a low false-positive rate", bound),
    )
    table = Table(("check", "result"), (*checks, *((check, result) for check, result, _ in copies)),
                  highlight=tuple(len(checks) + i for i, (_, _, alarm) in enumerate(copies) if alarm))
    return Section("Privacy", (
        attack, table,
        attack_roc_plot(scored_by, evaluation.judgement.privacy.attack, epsilon=evaluation.epsilon,
                        delta=evaluation.delta),
        note, Paragraph(privacy["caveat"], tone="note"),
    ), anchor="privacy")


def settings_section(data: dict[str, Any], words: SampleWords, *tables: Table) -> Section:
    """The sets read (the private one by its noisy DP count), then the modality's ``tables`` of settings."""
    described = data["data"]
    private = described["private"]["per_class_dp_estimate"]
    sets = [("synthetic", described["synthetic"]["path"], str(sum(described["synthetic"]["per_class"]))),
            ("private", str(described["private"]["path"]), _DASH if private is None else
             f"≈ {sum(private)} (noisy DP count)"),
            ("test", described["test"]["path"], str(sum(described["test"]["per_class"])))]
    if described["public"] is not None:
        sets.append(("public", str(described["public"]["path"]), str(described["public"][words.samples])))
    return Section("Settings and data", (
        Table(("set", "path", words.samples), tuple(sets),
              caption=f"The {words.private}'s exact size and the evaluation's timings stay in the run's "
                      "secure/evaluation.json."),
        *tables,
    ), anchor="settings")
