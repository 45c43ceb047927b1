"""``SWEEP/report/``: the sweep on one page — what the runs spent together, the curve, each run's figures and a link
to its own report — in HTML and Markdown, for whoever chooses ε or signs it off.

Built from what the sweep already holds (its ledger, the runs' shared reports through :mod:`pcevolve.sweep.curve`):
no private data is read here, and no figure appears that a run's shared report does not carry.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pcevolve.privacy import BudgetLedger
from pcevolve.randomness import NOT_DP_WARNING
from pcevolve.report.document import Document, Paragraph, Plot, Section, Table
from pcevolve.report.write import write_document
from pcevolve.sweep.curve import CurvePoint, runs_table

def sweep_document(name: str, points: Sequence[CurvePoint], ledger: BudgetLedger, *, curve: bytes | None,
                   note: str, finished: bool) -> Document:
    """The sweep's report (module docstring). ``points``: the judged runs; ``curve``: the figure's PNG, if drawn."""
    spent = {stage: ledger.spent(stage) for stage in ledger.stages}
    total, delta = ledger.spent(), ledger.delta
    claim = (f"Together they spend (ε, δ) = ({total:.3f}, {delta:g}): the accountant's composition of every release "
             f"of every run (ledger.json), against {sum(spent.values()):.3f} if their ε were added up.")
    summary: list[Paragraph | Table | Plot] = [
        Paragraph(f"{len(ledger.stages)} runs of the same settings on the same private data, at ε "
                  f"{', '.join(stage.removeprefix('eps-') for stage in ledger.stages)}. {claim}"),
        Paragraph(f"Note: {note}.", tone="warning")]
    if not finished:
        summary.append(Paragraph(f"Not every run has finished: the sweep may still spend up to its cap, ε = "
                                 f"{ledger.total_epsilon:.3f}.", tone="warning"))
    if not ledger.is_dp:
        summary.insert(0, Paragraph(NOT_DP_WARNING, tone="warning"))
    sections = [Section("The sweep", tuple(summary), anchor="sweep")]
    if curve is not None:
        sections.append(Section("Privacy–utility curve", (Plot("curve", curve, "Each run's test scores (top) and the "
                                                                "strongest membership attack on it (bottom) against "
                                                                "its ε; horizontal lines: the real-data references."),),
                                anchor="curve"))
    columns, runs, references = runs_table(points)
    rows = [(*row, f"{point.name}/report/report.html") for row, point in zip(runs, points)]
    rows += [(*row, "") for row in references]
    sections.append(Section("Runs", (Table(
        (*columns, "its report"), tuple(rows),
        caption="Test scores of a model trained on each run's synthetic set; the attack is the strongest of the "
                "membership attacks its report ran (0.5: a coin). The real-data lines and the attacks are computed on "
                "the private data, rounded as in the runs' reports, and not covered by the guarantee."),),
        anchor="runs"))
    ledger_rows = tuple((stage, f"{epsilon:.4f}") for stage, epsilon in spent.items())
    sections.append(Section("Ledger", (Table(("run", "ε of its releases alone"), ledger_rows + (
        ("all runs, composed", f"{total:.4f}"),), caption=f"δ = {delta:g}; `pcevolve ledger show` of the sweep folder "
                                                           "lists every release."),), anchor="ledger"))
    return Document(title=f"pcevolve sweep — {name}", sections=tuple(sections),
                    subtitle=f"{len(points)} of {len(ledger.stages)} runs judged · (ε, δ) = ({total:.3f}, {delta:g})")


def write_sweep_report(folder: Path, document: Document) -> Path:
    """``folder/report/`` with report.html, report.md and the curve (replaced as a whole)."""
    return write_document(folder / "report", document)
