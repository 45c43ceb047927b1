"""``pcevolve budget``: plan how the privacy budget is split and what noise each stage needs."""

from __future__ import annotations

import math
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from pcevolve.config import ConfigError, PrivacyConfig, RunConfig, load_config
from pcevolve.privacy.accounting import account
from pcevolve.privacy.calibration import (
    affordable_steps,
    dpsgd_noise_multiplier,
    dpsgd_schedule,
    gaussian_noise_multiplier,
)
from pcevolve.privacy.events import GaussianRelease, SubsampledGaussianSteps
from pcevolve.privacy.ledger import BudgetLedger
from pcevolve.privacy.statistics import COMPONENTS, component_noise_stds, equal_shares

app = typer.Typer(help="Plan the privacy budget.", no_args_is_help=True, add_completion=False)

# What the fitness stage releases once (SPEC R5.6): every per-class statistic, one Gaussian event.
_FITNESS_COMPONENTS = COMPONENTS
# The seed's DP-SGD schedule (SPEC R3.7), shown beside the configured one.
_SEED_BATCH, _SEED_EPOCHS = 64, 80


@app.callback()
def _group() -> None:
    """Plan the privacy budget."""


@app.command("plan")
def plan(
    epsilon: float | None = typer.Option(None, "--epsilon", help="Total ε (default: the config's)."),
    delta: float | None = typer.Option(None, "--delta", help="δ (default: the config's)."),
    config: Path | None = typer.Option(None, "--config", help="Run config YAML (default: built-in defaults)."),
    num_samples: int = typer.Option(500, "--n", min=1, help="Number of private samples (sets DP-SGD's q)."),
) -> None:
    """Print the stage split and the noise each stage would use."""
    console = Console()
    if console.width < 110:  # piped output defaults to 80 columns
        console = Console(width=110)
    try:
        run = load_config(config)
        privacy = _privacy_settings(run, epsilon, delta)
    except (ConfigError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None

    relation = "add/remove-one" if privacy.neighbouring == "add_remove" else "replace-one"
    console.print(f"[bold]Privacy budget plan[/bold]: total ε = {privacy.epsilon:g}, δ = {privacy.delta:g}, "
                  f"neighbouring relation: {relation}")
    console.print("Every ε below is the accountant's (dp-accounting): PLD reported, RDP shown beside it; "
                  "the ledger reports the smaller sound bound.")
    console.print(_stage_table(privacy, run))

    events = []
    rep_cap = privacy.stages.get("representation", 0.0)
    if rep_cap > 0:
        events.append(_representation(console, privacy, run, num_samples, rep_cap))
    fit_cap = privacy.stages.get("fitness", 0.0)
    if fit_cap > 0:
        events.append(_fitness(console, privacy, fit_cap))
    if events:
        total = account(events, delta=privacy.delta, neighbouring=privacy.neighbouring)
        console.print(
            f"\nIf every stage spends its plan, the accountant's total is ε = {total.epsilon:.3f} ({total.bound}; "
            f"RDP {_fmt(total.rdp_epsilon)}) ≤ {privacy.epsilon:g} at δ = {privacy.delta:g}: composition, "
            "not the sum of the stage caps."
        )


def _privacy_settings(run: RunConfig, epsilon: float | None, delta: float | None) -> PrivacyConfig:
    base = run.privacy
    try:
        return PrivacyConfig(
            epsilon=base.epsilon if epsilon is None else epsilon,
            delta=base.delta if delta is None else delta,
            stages=dict(base.stages),
            neighbouring=base.neighbouring,
            secure_noise=base.secure_noise,
        )
    except ValidationError as exc:
        problems = "; ".join(error["msg"] for error in exc.errors())
        raise ValueError(f"privacy settings are invalid: {problems} (set privacy.stages in --config)") from None


def _stage_table(privacy: PrivacyConfig, run: RunConfig) -> Table:
    table = Table(title="Stage split (ε caps in the ledger)")
    table.add_column("stage")
    table.add_column("ε cap", justify="right")
    table.add_column("share", justify="right")
    table.add_column("private access")
    uses = {
        "representation": "DP-SGD (Poisson-subsampled Gaussian), per-sample clipping",
        "fitness": "one Gaussian release of per-class statistics; then post-processing",
        "decoder": ("DP-SGD on private data" if run.decoder.training != "public"
                    else "budget unused: the decoder trains on public data"),
        "delivery": "DP checks against private data at delivery",
    }
    for stage, cap in privacy.stages.items():
        access = uses.get(stage, "ledger-charged releases") if cap > 0 else "no private access (post-processing only)"
        table.add_row(stage, f"{cap:g}", f"{cap / privacy.epsilon:.1%}", access)
    return table


def _representation(console: Console, privacy: PrivacyConfig, run: RunConfig, n: int, cap: float
                    ) -> SubsampledGaussianSteps:
    rep = run.representation
    q, steps = dpsgd_schedule(n, rep.batch_size, rep.epochs)
    kwargs = {"sampling_probability": q, "steps": steps, "neighbouring": privacy.neighbouring}
    sigma_pld = dpsgd_noise_multiplier(cap, privacy.delta, accountant="pld", **kwargs)
    sigma_reported = dpsgd_noise_multiplier(cap, privacy.delta, accountant="reported", **kwargs)
    sigma_rdp = None
    if privacy.neighbouring == "add_remove":
        sigma_rdp = dpsgd_noise_multiplier(cap, privacy.delta, accountant="rdp", **kwargs)

    table = Table(title=f"representation: DP-SGD for ε = {cap:g}")
    table.add_column("setting")
    table.add_column("value", justify="right")
    table.add_column("note")
    table.add_row("n (private samples)", str(n), "--n; the demo's private set")
    table.add_row("batch, epochs", f"{rep.batch_size}, {rep.epochs}", "config: representation")
    table.add_row("q = batch / n", f"{q:.4g}", "Poisson sampling rate")
    table.add_row("steps = ⌈epochs·n / batch⌉", str(steps), "")
    table.add_row("clip norm C", f"{rep.clip_norm:g}", "noise std = σ·C")
    for label, sigma in (("σ calibrated on PLD", sigma_pld), ("σ calibrated on RDP", sigma_rdp)):
        if sigma is None:
            table.add_row(label, "n/a", "RDP has no replace-one analysis of Poisson sampling")
            continue
        check = account([SubsampledGaussianSteps(q, sigma, steps)], delta=privacy.delta,
                        neighbouring=privacy.neighbouring)
        table.add_row(label, f"{sigma:.3f}", f"ε: PLD {check.pld_bound:.3f}, RDP {_fmt(check.rdp_epsilon)}")
    table.add_row("σ the ledger will accept", f"{sigma_reported:.3f}",
                  "smallest σ whose reported ε (min of PLD, RDP) ≤ cap")
    if (rep.batch_size, rep.epochs) != (_SEED_BATCH, _SEED_EPOCHS) and n >= _SEED_BATCH:
        # SPEC R3.4a's reference point, so the seed's own σ can be compared whatever the config says.
        seed_q, seed_steps = dpsgd_schedule(n, _SEED_BATCH, _SEED_EPOCHS)
        seed_kwargs = {"sampling_probability": seed_q, "steps": seed_steps, "neighbouring": privacy.neighbouring}
        seed_pld = dpsgd_noise_multiplier(cap, privacy.delta, accountant="pld", **seed_kwargs)
        seed_rdp = (dpsgd_noise_multiplier(cap, privacy.delta, accountant="rdp", **seed_kwargs)
                    if privacy.neighbouring == "add_remove" else None)
        table.add_row("seed's setting, σ on RDP", _fmt(seed_rdp),
                      f"SPEC R3.4a: batch {_SEED_BATCH}, {_SEED_EPOCHS} epochs, {seed_steps} steps; "
                      f"PLD σ {seed_pld:.3f}")
    sigma_used = sigma_reported
    if rep.noise_multiplier is not None:
        ledger = BudgetLedger(privacy.epsilon, privacy.delta, dict(privacy.stages), neighbouring=privacy.neighbouring)
        fit = affordable_steps(ledger, "representation", sampling_probability=q,
                               noise_multiplier=rep.noise_multiplier, max_steps=steps)
        table.add_row("σ given in config", f"{rep.noise_multiplier:g}",
                      f"affordable: {fit} of {steps} steps ({fit * q:.1f} epochs); training stops there")
        sigma_used = rep.noise_multiplier
        steps = max(fit, 1)
    else:
        table.add_row("mode", "derived", "config leaves noise_multiplier unset: σ is derived as above")
    console.print(table)
    return SubsampledGaussianSteps(q, sigma_used, steps)


def _fitness(console: Console, privacy: PrivacyConfig, cap: float) -> GaussianRelease:
    z = gaussian_noise_multiplier(cap, privacy.delta, neighbouring=privacy.neighbouring)
    shares = equal_shares(_FITNESS_COMPONENTS)
    stds = component_noise_stds(z, shares, clip_norm=1.0, neighbouring=privacy.neighbouring)
    table = Table(title=f"fitness: per-class statistics released once for ε = {cap:g} (one Gaussian event)")
    table.add_column("released per class")
    table.add_column("L2 bound per record", justify="right")
    table.add_column("noise std per coordinate", justify="right")
    rows = {"count": ("class size", "1", ""), "sum": ("sum of clipped features (→ mean)", "C", "·C"),
            "second_moment": ("diagonal second moment", "C²", "·C²"), "rff": ("RFF mean embedding (→ MMD)", "1", "")}
    for component in _FITNESS_COMPONENTS:
        name, bound, unit = rows[component]
        table.add_row(name, bound, f"{stds[component]:.3f}{unit}")
    console.print(table)
    console.print(f"Release noise multiplier (std / L2 sensitivity of the whole rescaled release) = {z:.3f}; "
                  f"equal privacy shares over {len(_FITNESS_COMPONENTS)} components; the classes are disjoint, "
                  "so all classes together are one release.")
    return GaussianRelease(z)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.3f}"
