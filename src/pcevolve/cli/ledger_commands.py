"""``pcevolve ledger``: inspect a run's privacy ledger (every ε recomputed from its events)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from pcevolve.randomness import FLOATING_POINT_NOTE, NOT_DP_WARNING
from pcevolve.run_folder import RunFolder

if TYPE_CHECKING:
    from pcevolve.privacy.ledger import BudgetLedger

app = typer.Typer(help="Inspect privacy ledgers.", no_args_is_help=True, add_completion=False)


@app.callback()
def _group() -> None:
    """Inspect privacy ledgers."""


@app.command("show")
def show(
    run_dir: Path = typer.Argument(..., help="A run folder (its ledger.json is read) or a ledger file."),
) -> None:
    """Print a ledger as a table; reloading it checks every recorded ε against its events."""
    from pcevolve.pipeline.secure_zone import SecureZone  # these load the accountant: not for other commands
    from pcevolve.privacy.ledger import BudgetLedger
    from pcevolve.privacy.ledger_errors import LedgerError

    path = run_dir if run_dir.is_file() else RunFolder(run_dir).ledger_path
    secure = SecureZone(RunFolder(path.parent))  # its key is present inside the secure zone only
    try:
        key = secure.read_key()
        ledger = BudgetLedger.load(path, key=key)
    except (FileNotFoundError, LedgerError, ValueError) as exc:  # ValueError: a damaged key file
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None

    console = _console()
    relation = "add/remove-one" if ledger.neighbouring == "add_remove" else "replace-one"
    console.print(f"[bold]Privacy ledger[/bold] {path}: total ε cap {ledger.total_epsilon:g}, "
                  f"δ = {ledger.delta:g}, neighbouring relation: {relation}")
    if key is not None:
        console.print(f"signature: matches this run's key ({secure.key_path}), so the file was not rewritten")
    if ledger.is_dp:
        console.print("noise: drawn from the operating system's secure random source (nobody can regenerate it)")
    else:
        console.print(f"[bold red]{NOT_DP_WARNING}[/bold red]")

    history = Table(title="History (ε after each event, from the accountant)")
    for name, justify, width in (("#", "right", None), ("date", "left", None), ("stage", "left", None),
                                 ("mechanism", "left", 25), ("parameters", "left", None), ("description", "left", None),
                                 ("ε stage", "right", None), ("ε total", "right", None), ("bound", "left", None)):
        history.add_column(name, justify=justify, min_width=width)  # type: ignore[arg-type]
    for entry in ledger.history:
        history.add_row(str(entry.index), entry.time[:10], entry.stage, entry.event.kind,
                        _parameters(entry.event.parameters()),
                        entry.description, f"{entry.stage_epsilon:.4f}", f"{entry.total_epsilon:.4f}", entry.bound)
    if not ledger.history:
        history.add_row("", "", "", "(no releases yet)", "", "", "", "", "")
    console.print(history)
    console.print("σ: noise std / sensitivity (DP-SGD: / clip norm); q: Poisson sampling rate; "
                  "×: repetitions; ε of a stage and of the total come from composing its events, not from sums.")

    stages = Table(title="Stages")
    for name, justify in (("stage", "left"), ("cap", "right"), ("spent ε", "right"), ("left", "right"),
                          ("events", "right"), ("bound", "left")):
        stages.add_column(name, justify=justify)  # type: ignore[arg-type]
    for stage, cap in ledger.stages.items():
        result = ledger.account(stage)
        stages.add_row(stage, f"{cap:g}", f"{result.epsilon:.4f}", f"{ledger.remaining(stage):.4f}",
                       str(len(ledger.events(stage))), result.bound if ledger.events(stage) else "")
    console.print(stages)

    total = ledger.account()
    rdp = "n/a" if total.rdp_epsilon is None else f"{total.rdp_epsilon:.4f}"
    claim = "" if ledger.is_dp else " — NOT DP: reproducible noise"
    console.print(f"Total: ε = {total.epsilon:.4f} of {ledger.total_epsilon:g} at δ = {ledger.delta:g} "
                  f"(reported bound: {total.bound}; PLD+basic {total.pld_bound:.4f}, RDP {rdp}){claim}")
    if ledger.is_dp:
        console.print(f"({FLOATING_POINT_NOTE})")
    _sweep_note(path.parent, console)
    _audit_note(path, ledger, key, console)


def _audit_note(path: Path, ledger: "BudgetLedger", key: bytes | None, console: Console) -> None:
    """For a run's ledger beside an audit ledger: what the end-to-end audits spent on the same private data."""
    from pcevolve.pipeline.audit_ledger import AUDIT_LEDGER, audit_cost
    from pcevolve.privacy.ledger_errors import LedgerError

    if path.name == AUDIT_LEDGER:
        return
    try:
        cost = audit_cost(RunFolder(path.parent), ledger, key)
    except (LedgerError, ValueError) as exc:
        console.print(f"[bold]note:[/bold] {path.parent / AUDIT_LEDGER} cannot be verified: {exc}")
        return
    if cost is not None:
        console.print(f"[bold]note:[/bold] {cost.sentence()}; its events: pcevolve ledger show "
                      f"{path.parent / AUDIT_LEDGER}")


def _sweep_note(run_dir: Path, console: Console) -> None:
    """For a run a sweep made: the ε its set carries once the sweep's runs have been compared."""
    from pcevolve.pipeline.sweep_member import SweepMemberError, sweep_guarantee

    try:
        swept = sweep_guarantee(run_dir)
    except SweepMemberError as exc:
        console.print(f"[bold]note:[/bold] {exc}")
        return
    if swept is not None:
        what = "spent by its runs together" if swept.finished else "its cap (not every run has finished)"
        console.print(f"[bold]note:[/bold] this run is one of the sweep {swept.sweep}: a set chosen after comparing "
                      f"its runs carries the sweep's ε = {swept.epsilon:.4f} ({what}; pcevolve ledger show "
                      f"{swept.ledger}), not this ledger's total")


_SHORT = {"sampling_probability": "q", "noise_multiplier": "σ", "steps": "steps", "count": "×", "epsilon": "ε"}


def _parameters(parameters: dict[str, object]) -> str:
    parts = []
    for key, value in parameters.items():
        shown = f"{value:.6g}" if isinstance(value, float) else str(value)
        parts.append(f"{_SHORT.get(key, key)}={shown}")
    return " ".join(parts)


def _console() -> Console:
    console = Console()
    # Piped output (and tests) defaults to 80 columns, too narrow for the history table.
    return console if console.width >= 160 else Console(width=160)
