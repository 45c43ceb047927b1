"""The privacy–utility curve of a sweep: one point per member, read from its shareable ``report/evaluation.json``.

Only figures a member's shared report already carries are used (the private reference lines and the attacks
rounded as there), so the curve and ``SWEEP/results.json`` may be shown wherever those reports may.

Per modality, the utility figures are those its report leads with: for images the downstream CNN's and the linear
probe's test accuracy, with the few-shot-real (the private images) and full-real lines; for tables each fixed
model's ROC AUC, for texts each probe's accuracy, with the private rows or texts as the real line. The attack is
the strongest membership attack the report ran (its success rate; 0.5 is a coin).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pcevolve.catalog.modalities import modality_spec


@dataclass(frozen=True)
class CurvePoint:
    """One member's figures.

    Attributes:
        name: The member's folder name.
        epsilon: The ε the member was run at (its ``privacy.epsilon``).
        spent: What its ledger's accountant gives (at most ``epsilon``).
        metrics: Utility figure name → value (None when the report has none) for the synthetic set.
        references: The same figures for the real reference lines (line label → figure name → value).
        attack: Name of the strongest attack, and its success rate.
    """

    name: str
    epsilon: float
    spent: float
    metrics: dict[str, float | None]
    references: dict[str, dict[str, float | None]] = field(default_factory=dict)
    attack: str = ""
    attack_success: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def curve_point(name: str, epsilon: float, evaluation: dict[str, Any]) -> CurvePoint:
    """The point of the member ``name`` run at ``epsilon``, from its ``report/evaluation.json`` (any modality: the
    reader its spec names, :func:`image_point`, :func:`table_point` and :func:`text_point` for the built-in ones)."""
    return modality_spec(evaluation.get("modality", "image")).load("curve_point")(name, epsilon, evaluation)


def image_point(name: str, epsilon: float, evaluation: dict[str, Any]) -> CurvePoint:
    """An image run's point: the CNN's and the linear probe's accuracy, with the few-shot and full real lines."""
    spent = float(evaluation["headline"]["epsilon"])
    lines = evaluation["headline"]["lines"]
    figures = {"CNN accuracy": "cnn_accuracy", "linear probe accuracy": "probe_accuracy"}

    def line(key: str) -> dict[str, float | None]:
        return {label: lines[key].get(item) for label, item in figures.items()}

    references = {label: line(key) for key, label in (("fewshot", "few-shot real (private)"),
                                                      ("full", "full real")) if key in lines}
    strongest = evaluation["headline"]["attack_success"]
    attack = f"{strongest['attack']} ({strongest['space']} space)"
    return CurvePoint(name, epsilon, spent, line("synthetic"), references, attack, strongest["value"])


def table_point(name: str, epsilon: float, evaluation: dict[str, Any]) -> CurvePoint:
    """A table run's point: each fixed model's ROC AUC, with the private rows as the real line."""
    return _judgement_point(name, epsilon, evaluation, score="auc", unit="AUC")


def text_point(name: str, epsilon: float, evaluation: dict[str, Any]) -> CurvePoint:
    """A text run's point: each probe's accuracy, with the private texts as the real line."""
    return _judgement_point(name, epsilon, evaluation, score="accuracy", unit="accuracy")


def _judgement_point(name: str, epsilon: float, evaluation: dict[str, Any], *, score: str, unit: str) -> CurvePoint:
    """The point of a run whose judgement lists its utility lines (tables, texts): ``score`` of each model."""
    spent = float(evaluation["epsilon"])
    judgement = evaluation["judgement"]
    metrics: dict[str, float | None] = {}
    references: dict[str, dict[str, float | None]] = {}
    for entry in judgement["utility"]:
        figure = f"{entry['model_label'] or entry['model']} {unit}"
        if entry["line"] == "synthetic":
            metrics[figure] = entry.get(score)
        else:
            label = "real (private)" if entry.get("reference_only") else entry["label"]
            references.setdefault(label, {})[figure] = entry.get(score)
    privacy = judgement.get("privacy") or {}
    return CurvePoint(name, epsilon, spent, metrics, references, privacy.get("attack", ""),
                      privacy.get("success"))


def figure_names(points: Sequence[CurvePoint]) -> list[str]:
    """Every utility figure the points carry, in the order they first appear."""
    return list(dict.fromkeys(name for point in points for name in point.metrics))


def runs_table(points: Sequence[CurvePoint]) -> tuple[tuple[str, ...], list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The sweep's figures as text: the columns, one row per run (its ε alone, each figure, the strongest attack's
    success), and one row per real reference line (the same figures; no ε, no attack). "—": not measured."""
    names = figure_names(points)

    def text(value: float | None) -> str:
        return "—" if value is None else f"{value:.3f}"

    rows = [(point.name, f"{point.spent:.3f}", *(text(point.metrics.get(n)) for n in names),
             text(point.attack_success)) for point in points]
    references = [(label, "", *(text(figures.get(n)) for n in names), "")
                  for label, figures in (points[0].references.items() if points else ())]
    return ("run", "ε (alone)", *names, "strongest attack: success"), rows, references


_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:purple")
_REFERENCE_STYLES = ("--", ":", "-.")


def curve_png(points: Sequence[CurvePoint], *, total_epsilon: float, delta: float) -> bytes:
    """Utility (top) and the strongest attack's success (bottom) against each member's ε, log scale.

    The real reference lines are horizontal (they do not depend on ε). The title states the sweep's total: any one
    member chosen on its test score carries it; the attack panel is computed on the private data without noise, so
    a choice steered by it is covered by no ε, and the panel says so.
    """
    from pcevolve.plots import figure_png, new_figure  # matplotlib: only when a curve is drawn

    ordered = sorted(points, key=lambda point: point.epsilon)
    epsilons = [point.epsilon for point in ordered]
    figure = new_figure(figsize=(7.5, 6.5))
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    names = figure_names(ordered)
    for colour, name in zip(_COLOURS, names):
        values = [point.metrics.get(name) for point in ordered]
        top.plot(epsilons, [float("nan") if v is None else v for v in values], "o-", color=colour,
                 label=f"synthetic: {name}")
        first = ordered[0].references if ordered else {}
        for style, (label, figures) in zip(_REFERENCE_STYLES, first.items()):
            if figures.get(name) is not None:
                top.axhline(figures[name], color=colour, linestyle=style, alpha=0.7, label=f"{label}: {name}")
    top.set_ylabel("test score")
    top.legend(loc="best", fontsize=7)
    top.grid(alpha=0.3)
    top.set_title(f"sweep of {len(ordered)} runs on the same private data: together (ε, δ) = "
                  f"({total_epsilon:.3g}, {delta:g});\nany one set chosen on its test score carries that ε, "
                  "not its own", fontsize=9)
    attack = [float("nan") if point.attack_success is None else point.attack_success for point in ordered]
    bottom.plot(epsilons, attack, "s-", color="tab:red", label="strongest membership attack: success")
    bottom.axhline(0.5, color="grey", linestyle=":", label="coin flip")
    bottom.set_ylabel("attack success")
    bottom.set_title("computed on the private data without noise: a choice steered by it is covered by no ε",
                     fontsize=8)
    bottom.set_xlabel("ε of the run (log scale)")
    bottom.set_xscale("log")
    bottom.minorticks_off()
    bottom.set_xticks(epsilons, [f"{e:g}" for e in epsilons])
    bottom.legend(loc="best", fontsize=7)
    bottom.grid(alpha=0.3)
    return figure_png(figure)
