"""``pcevolve export RUN_DIR OUT``: copy what may be shared out of a finished run, and nothing else
(:mod:`pcevolve.pipeline.export`)."""

from __future__ import annotations

from pathlib import Path

import typer


def export(
    run_dir: Path = typer.Argument(..., help="A finished run folder (pcevolve run output)."),
    out: Path = typer.Argument(..., help="The folder to create (must not exist)."),
    with_report: bool = typer.Option(False, "--with-report", help="Also copy report/ (pcevolve evaluate). Its "
                                     "attack, copy and few-shot figures are computed on the private data and are "
                                     "not covered by the privacy guarantee."),
    allow_not_dp: bool = typer.Option(False, "--allow-not-dp", help="Export a run made with reproducible noise "
                                      "(not differentially private; for tests and research)."),
) -> None:
    """Copy the synthetic set, the privacy ledger, the config and a plain-words README out of a run folder —
    never secure/ or the run's internal files."""
    from pcevolve.pipeline.export import ExportError, export_run

    try:
        summary = export_run(run_dir, out, with_report=with_report, allow_not_dp=allow_not_dp)
    except ExportError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    claim = (f"(ε, δ) = ({summary.epsilon:.4f}, {summary.delta:g})" if summary.dp
             else "NOT differentially private (reproducible noise)")
    typer.echo(f"exported {', '.join(summary.files)} to {summary.path}: {claim}")
    if summary.sweep is not None:
        typer.echo(f"note: this run is one of the sweep {summary.sweep}; its set carries the sweep's ε above (the "
                   f"runs composed), not its own {summary.run_epsilon:.4f}")
    if with_report:
        typer.echo("note: report/ holds figures computed on the private data (attacks, copy check, few-shot "
                   "references); they are not covered by the privacy guarantee")
