"""The per-class section of a table or text report: precision, recall and F1 of every model per class, and the same
F1 as grouped bars (the image report's per-class section, for models that are not CNNs).

Reads the evaluation JSON's ``judgement`` only (``utility``, ``class_names``, ``minority_class``, the per-class
counts): the real reference's scores are drawn and written as rounded as they ship there (whole percents).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pcevolve.report import figures
from pcevolve.report.build import pct, shared_pct
from pcevolve.report.document import Paragraph, Plot, Section, Table

_DASH = "—"
_MARK = "▶ "


def _result(data: dict[str, Any], line: str, model: str) -> dict[str, Any] | None:
    return next((r for r in data["judgement"]["utility"] if r["line"] == line and r["model"] == model), None)


def _class_scores(result: dict[str, Any] | None, name: str) -> dict[str, float] | None:
    return result["per_class"][name] if result and "per_class" in result else None


def per_class_section(data: dict[str, Any], models: Mapping[str, str], *, unit: str) -> Section:
    """The section: a table (one line per class; the test set's smallest class marked) and the F1 bars.

    Args:
        data: The evaluation JSON (``to_json()``) of a table or text run.
        models: Model key → its name in the report, in report order.
        unit: What a sample is called, plural (``"rows"``, ``"texts"``).
    """
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
            ours, real = _class_scores(_result(data, "synthetic", model), name), _class_scores(
                _result(data, "real", model), name)
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
            result = _result(data, line, model)
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


def _worst(data: dict[str, Any], models: Mapping[str, str], names: list[str]) -> tuple[str, int, float] | None:
    """(model, class index, F1) of the lowest F1 of a model trained on the synthetic set, or None."""
    found = [(scores["f1"], model, k) for model in models for k, name in enumerate(names)
             if (scores := _class_scores(_result(data, "synthetic", model), name)) is not None]
    if not found:
        return None
    f1, model, index = min(found)
    return model, index, f1
