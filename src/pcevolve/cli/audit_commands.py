"""``pcevolve audit``: an empirical privacy audit that can catch a broken mechanism or a leaking run.

* ``pcevolve audit --mechanisms --config CONFIG`` plays a distinguishing game for every DP mechanism the config
  uses, at the parameters it gives them, through the deployed code with secure noise (pcevolve.audit.mechanisms);
  ``--all`` adds the others at reference settings.
* ``pcevolve audit RUN_DIR`` runs the pipeline once more on the run's config and data with canaries and plays a
  membership game on what that run ships (pcevolve.audit.end_to_end). ``--mechanisms`` adds the per-mechanism
  audit at the σ and ε the run's ledger charged; ``--no-end-to-end`` leaves the end-to-end audit out.

Each prints its lower bounds beside the claimed ε; with a run folder they go to ``RUN_DIR/audit.json``, which the
report (``pcevolve evaluate``) shows. Exit status 1 when a bound passes its claim: the code is broken.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from pcevolve.config import ConfigError, load_config

if TYPE_CHECKING:  # imported by the command (see cli/main.py)
    from pcevolve.audit.mechanisms import MechanismAudit

#: What a lower bound means, in the words every output of the audit uses.
MEANING = ("A lower bound is what the attack proves the code leaks at least, with 95% confidence; one above the "
           "claimed ε means the code releases more than its proof allows. One below it does not prove the claim.")


def audit(
    run_dir: Path | None = typer.Argument(None, help="A finished run folder: audit it end to end with canaries."),
    mechanisms: bool = typer.Option(False, "--mechanisms", help="Audit every DP mechanism at the config's "
                                    "parameters (the run's config, or --config)."),
    config: Path | None = typer.Option(None, "--config", help="Run config YAML for --mechanisms without a run "
                                       "folder (default: built-in defaults)."),
    num_samples: int = typer.Option(500, "--n", min=1, help="--mechanisms with --config: private samples to plan "
                                    "for (sets DP-SGD's σ); a run folder is audited at its ledger's σ and ε."),
    trials: float = typer.Option(1.0, "--trials", min=0.01, help="--mechanisms: multiply every game's default "
                                 "number of runs (fewer: faster and looser)."),
    every: bool = typer.Option(False, "--all", help="--mechanisms: also play the mechanisms the config or run does "
                               "not use, at reference settings (a check of all of pcevolve's mechanism code)."),
    canaries: int = typer.Option(500, "--canaries", min=20, help="End to end: canary records, each inserted with "
                                 "probability 1/2."),
    end_to_end: bool = typer.Option(True, "--end-to-end/--no-end-to-end", help="With a run folder: audit it end to "
                                    "end (off: only --mechanisms, at its ledger's σ and ε)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="End to end: replace the run's earlier end-to-end "
                                   "result in audit.json (its earlier audit folder in secure/ is kept)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress reports."),
) -> None:
    """Lower-bound the privacy the code actually gives, beside the ε it claims."""
    if not mechanisms and (run_dir is None or not end_to_end):
        typer.echo("error: name a run folder (end-to-end audit) or pass --mechanisms", err=True)
        raise typer.Exit(2)
    if run_dir is not None and config is not None:
        typer.echo("error: --config is for --mechanisms without a run folder; a run is audited at its own config",
                   err=True)
        raise typer.Exit(2)
    if run_dir is not None and not (run_dir / "config.yaml").is_file():
        typer.echo(f"error: {run_dir} is not a run folder (no config.yaml)", err=True)
        raise typer.Exit(1)
    if run_dir is not None:
        _check_run(run_dir, end_to_end=end_to_end, canaries=canaries, overwrite=overwrite)
    console = Console()
    if console.width < 110:
        console = Console(width=110)
    failed = False
    if mechanisms:
        failed |= _mechanisms(console, run_dir, config, num_samples, trials, quiet, every)
    if run_dir is not None and end_to_end:
        failed |= _end_to_end(console, run_dir, canaries, overwrite, quiet)
    console.print(MEANING, highlight=False)
    if failed:
        raise typer.Exit(1)


def _check_run(run_dir: Path, *, end_to_end: bool, canaries: int, overwrite: bool) -> None:
    """Refuse, before any game is played, a run the audit cannot judge: an unfinished one (its ledger holds only
    part of what the run will charge) and, for the end-to-end audit, whatever :func:`check_auditable` refuses."""
    from pcevolve.pipeline.sweep_member import delivered

    if not delivered(run_dir):
        typer.echo(f"error: {run_dir} is not a finished run (no stages/delivery.json): finish it with "
                   f"`pcevolve run --resume {run_dir}`, then audit it", err=True)
        raise typer.Exit(1)
    if end_to_end:
        from pcevolve.audit.end_to_end import check_auditable

        with _refusals():
            check_auditable(run_dir, canaries=canaries, overwrite=overwrite)


@contextlib.contextmanager
def _refusals() -> Iterator[None]:
    """What the end-to-end audit refuses, as one error line and exit status 1."""
    from pcevolve.pipeline.run import RunError

    try:
        yield
    except FileExistsError as exc:
        typer.echo(f"error: {exc} (--overwrite replaces an earlier result)", err=True)
        raise typer.Exit(1) from None
    except (ValueError, RunError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None


def _mechanisms(console: Console, run_dir: Path | None, config_path: Path | None, num_samples: int, trials: float,
                quiet: bool, every: bool) -> bool:
    """Play the game of every mechanism the config or run uses (``every``: of all of them); print and (with a run)
    save the results. True when one failed."""
    from pcevolve.audit.mechanisms import mechanism_games, play, recorded
    from pcevolve.audit.results import write_audit_part
    from pcevolve.privacy import BudgetLedger
    from pcevolve.privacy.ledger_errors import LedgerError

    source = run_dir / "config.yaml" if run_dir is not None else config_path
    try:
        run_config = load_config(source)
        # A run is audited at what its ledger charged (every ε recomputed on loading), not at a plan.
        deployed = None if run_dir is None else recorded(BudgetLedger.load(run_dir / "ledger.json"))
    except (ConfigError, LedgerError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    games = [game for game in mechanism_games(run_config, num_samples, scale=trials, deployed=deployed)
             if every or game.deployed]
    if not games:
        console.print("this config uses no DP mechanism pcevolve can play alone; --all plays each at a reference "
                      "setting", highlight=False)
    results = []
    for game in games:
        if not quiet:
            console.print(f"audit: {game.name} — {game.setting}: {game.trials:,} runs on each of D and D′",
                          highlight=False)
        results.append(play(game, progress=not quiet))
    console.print(mechanism_table(results))
    if run_dir is not None:
        path = write_audit_part(run_dir, "mechanisms", mechanisms_json(results, run_config.name, num_samples))
        console.print(f"written: {path}", highlight=False)
    return not all(result.passed for result in results)


def mechanisms_json(results: list["MechanismAudit"], config_name: str, num_samples: int) -> dict[str, Any]:
    """The per-mechanism part of ``audit.json``."""
    return {"config": config_name, "num_samples": num_samples, "confidence": 0.95,
            "passed": all(result.passed for result in results), "results": [result.to_json() for result in results]}


def mechanism_table(results: list["MechanismAudit"]) -> Table:
    from pcevolve.privacy.audit import GDP_BOUND_NOTE

    table = Table(title="Per-mechanism audit (lower bounds at 95% confidence)", caption=GDP_BOUND_NOTE)
    for column in ("mechanism", "setting", "claimed ε", "bound ε", "claimed μ", "bound μ", "runs", "verdict"):
        table.add_column(column)
    for result in results:
        bound = result.bound
        table.add_row(result.name, result.setting, _fmt(bound.claimed_epsilon), _fmt(bound.epsilon_lower_bound),
                      _fmt(bound.claimed_mu), _fmt(bound.mu_lower_bound), f"{bound.trials:,} × 2",
                      "[green]pass[/green]" if result.passed else "[bold red]FAIL[/bold red]")
    return table


def _end_to_end(console: Console, run_dir: Path, canaries: int, overwrite: bool, quiet: bool) -> bool:
    """Audit the run with canaries (the result goes to ``RUN_DIR/audit.json``) and print it. True when it failed."""
    from pcevolve.audit.end_to_end import audit_run

    say = (lambda _: None) if quiet else (lambda line: console.print(line, highlight=False))
    with _refusals():
        result = audit_run(run_dir, canaries=canaries, progress=not quiet, overwrite=overwrite, say=say)
    if quiet:  # audit_run says it otherwise
        console.print(result.summary(), highlight=False)
    console.print(f"written: {run_dir / 'audit.json'}", highlight=False)
    return not result.passed


def _fmt(value: float | None) -> str:
    if value is None:
        return "—"
    if not math.isfinite(value):
        return "∞"
    return f"{value:.3f}"
