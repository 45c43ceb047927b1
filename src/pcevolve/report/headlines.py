"""The console summaries of a finished run's evaluation, one per modality: each modality's spec names its own as
its ``headline`` (``pcevolve evaluate`` prints it after the judge has written the report)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from pcevolve.evaluation import RunEvaluation, TableRunEvaluation, TextRunEvaluation


def print_image_headline(evaluation: RunEvaluation, console: Console) -> None:
    """The headline table: each line's accuracy, the original method's comparisons, the strongest attack, hints."""
    from pcevolve.report.build import comparison_text, interval, pct

    head = evaluation.headline()
    table = Table(title=f"pcevolve evaluate — {evaluation.inputs.folder}")
    for column, justify in (("training set", "left"), ("CNN acc.", "right"), ("probe acc.", "right")):
        table.add_column(column, justify=justify)
    for key, line in head["lines"].items():
        name = f"[bold]{line['label']}[/bold]" if key == "synthetic" else line["label"]
        table.add_row(name, pct(line["cnn_accuracy"]), pct(line["probe_accuracy"]))
    console.print(table)
    compare = Table(title="against the original method's reported figures (CNN)")
    for column in ("comparison", "ours", "original"):
        compare.add_column(column)
    seed = head["seed"]
    for key, label in (("delta_over_fewshot", "Δ over few-shot real"), ("gap_to_full", "gap to full real"),
                       ("synthetic_aug_over_fewshot", "synthetic + aug. over few-shot real")):
        compare.add_row(label, comparison_text(head["comparisons"]["cnn"][key]), seed[key]["text"])
    attack = head["attack_success"]
    compare.add_row("attack success (strongest)", f"{interval(attack)} {attack['space']}/{attack['attack']}",
                    seed["attack_success"]["text"])
    console.print(compare)
    claim = "" if evaluation.inputs.ledger.is_dp else " — NOT DP: the run used reproducible noise"
    console.print(f"(ε, δ) = ({evaluation.epsilon:.3f}, {evaluation.delta:g}){claim}; worst class: "
                  f"{evaluation.per_class()[0]['class']}", soft_wrap=True)
    for hint in evaluation.hints:
        if hint.fired:
            console.print(f"[yellow]hint ({hint.rule}):[/yellow] {hint.advice} ({hint.observed})", soft_wrap=True)


def print_table_headline(evaluation: TableRunEvaluation, console: Console) -> None:
    """A tabular run's headline: both models trained on synthetic vs private rows, fidelity, the attack."""
    judgement = evaluation.judgement
    console.print(_utility_table(evaluation, model="model", reference="private rows (reference, not DP)", auc=True))
    shared = judgement.to_json()
    fidelity = shared["fidelity"]
    console.print(f"fidelity: mean TVD per column {fidelity['mean_tvd']:.3f}; mean correlation difference "
                  f"{_number(fidelity['correlation']['mean_abs_difference'])}", soft_wrap=True, highlight=False)
    privacy = shared["privacy"]
    if privacy is not None:
        copied = "YES" if privacy["private_rows_copied"] else "none"
        console.print(f"membership attack AUC {privacy['auc']:.2f} (0.5: the attacker cannot tell); synthetic rows "
                      f"copied from the private table: {copied}", soft_wrap=True, highlight=False)
    console.print(_claim(evaluation), soft_wrap=True)


def print_text_headline(evaluation: TextRunEvaluation, console: Console) -> None:
    """A text run's headline: both probes trained on synthetic vs private texts, the MMD, the attack and copies."""
    judgement = evaluation.judgement
    console.print(_utility_table(evaluation, model="probe", reference="private texts (reference, not DP)", auc=False))
    shared = judgement.to_json()
    mmd = shared["distribution"]["synthetic"]["overall"]
    console.print(f"distribution: MMD² to the real test texts {_number(mmd, 4)} (LSA space; about 0: alike)",
                  soft_wrap=True, highlight=False)
    privacy = shared["privacy"]
    if privacy is not None:
        copied = "YES" if privacy["private_texts_copied"] else "none"
        near = "YES" if privacy["private_texts_near_copied"] else "none"
        console.print(f"membership attack AUC {privacy['auc']:.2f} (0.5: the attacker cannot tell); synthetic texts "
                      f"copied from the private texts: {copied}; nearly copied (similarity ≥ "
                      f"{privacy['near_duplicate_cosine']:g}): {near}", soft_wrap=True, highlight=False)
    console.print(_claim(evaluation), soft_wrap=True)


def _utility_table(evaluation: TableRunEvaluation | TextRunEvaluation, *, model: str, reference: str,
                   auc: bool) -> Table:
    """A file run's models trained on the synthetic set and on the private one (``reference``), each line's scores
    (the ROC AUC too when ``auc``)."""
    from pcevolve.report.build import pct

    table = Table(title=f"pcevolve evaluate — {evaluation.folder}")
    for column, justify in (("trained on", "left"), (model, "left"), *((("ROC AUC", "right"),) if auc else ()),
                            ("accuracy", "right"), ("macro-F1", "right")):
        table.add_column(column, justify=justify)
    for result in evaluation.judgement.utility:
        scores = result.scores
        name = "[bold]synthetic[/bold]" if result.line == "synthetic" else reference
        area = ["—" if scores is None or scores.auc is None else f"{scores.auc:.3f}"] if auc else []
        table.add_row(name, result.model, *area, "—" if scores is None else pct(scores.accuracy),
                      "—" if scores is None else pct(scores.macro_f1))
    return table


def _claim(evaluation: TableRunEvaluation | TextRunEvaluation) -> str:
    """The guarantee as the ledger states it (NOT DP with reproducible noise), and the smallest test class."""
    judgement = evaluation.judgement
    claim = "" if evaluation.ledger.is_dp else " — NOT DP: the run used reproducible noise"
    return (f"(ε, δ) = ({evaluation.epsilon:.3f}, {evaluation.delta:g}){claim}; smallest test class: "
            f"{judgement.class_names[judgement.minority_class]}")


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"
