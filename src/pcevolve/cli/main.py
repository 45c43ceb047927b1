"""Entry point: ``pcevolve [--version] COMMAND ...``.

Each command group lives in its own module and is added here; a group is added
only when its commands work end to end (no stubs).

The command modules import the pipeline, the models and the accountant inside the commands that use
them: imported up front, they made every command — ``--help`` and ``data check`` included — start
seconds late (docs/performance.md; tests/test_import_side_effects.py keeps it so).
"""

from __future__ import annotations

import logging
import warnings
from typing import TextIO

import typer

from pcevolve import __version__
from pcevolve.cli import (
    audit_commands,
    budget_commands,
    data_commands,
    evaluate_commands,
    export_commands,
    init_commands,
    ledger_commands,
    run_commands,
    sweep_commands,
)

_PYTHON_SHOWWARNING = warnings.showwarning

app = typer.Typer(
    name="pcevolve",
    help="Private Contrastive Evolution: DP synthetic data from a few hundred labelled samples.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(data_commands.app, name="data")
app.add_typer(budget_commands.app, name="budget")
app.add_typer(ledger_commands.app, name="ledger")
app.command("init")(init_commands.init)
app.command("run")(run_commands.run)
app.command("evaluate")(evaluate_commands.evaluate)
app.command("export")(export_commands.export)
app.command("audit")(audit_commands.audit)
app.command("sweep")(sweep_commands.sweep)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"pcevolve {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True, help="Show the version."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log diagnostics to stderr."),
) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    warnings.showwarning = _show_warning


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: TextIO | None = None, line: str | None = None) -> None:
    """pcevolve's own warnings about the user's data as one ``warning:`` line on standard error, as errors are,
    without Python's source line; any other warning as Python shows it."""
    from pcevolve.data.errors import DataWarning

    if issubclass(category, DataWarning):
        typer.echo(f"warning: {message}", err=True)
    else:
        _PYTHON_SHOWWARNING(message, category, filename, lineno, file, line)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
