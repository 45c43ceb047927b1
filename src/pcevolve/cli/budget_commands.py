"""``pcevolve budget``: plan how the privacy budget is split and what noise each stage will use.

Every number comes from :func:`pcevolve.pipeline.plan.plan_budget`, which calls the functions a run
calls, so the plan's σ is the σ the run records.
"""

from __future__ import annotations

import math
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from pcevolve.config import ConfigError, RunConfig, check_budget, load_config, with_settings
from pcevolve.randomness import NOT_DP_WARNING

if TYPE_CHECKING:  # imported by the commands that use them (see cli/main.py)
    from pcevolve.pipeline.plan import BudgetPlan, DPSGDStagePlan, MadeReleasePlan, ReleasePlan, VotePlan

T = TypeVar("T")

app = typer.Typer(help="Plan the privacy budget.", no_args_is_help=True, add_completion=False)

# The original method's DP-SGD schedule (batch 64, 80 epochs), shown beside the configured one: at its own
# σ of 0.5-0.8 a single step already costs more than ε = 3, which is why σ comes from the accountant here.
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
    """Print the stage split and the noise each stage will use (the same calibration as `pcevolve run`)."""
    console = Console()
    if console.width < 110:  # piped output defaults to 80 columns
        console = Console(width=110)
    # Exit 2 for a bad flag, 1 for a bad config file, as `pcevolve run`. The flags first: a bad ε is refused
    # before the config's parts (and torch) are loaded.
    flags = {key: value for key, value in (("privacy.epsilon", epsilon), ("privacy.delta", delta)) if value is not None}
    source = " / ".join(flag for flag, value in (("--epsilon", epsilon), ("--delta", delta)) if value is not None)
    _exit_on_config_error(lambda: check_budget(epsilon, delta, source=source), code=2)
    base = _exit_on_config_error(lambda: load_config(config), code=1)
    run = _exit_on_config_error(lambda: with_settings(base, flags, source=source), code=2)
    from pcevolve.pipeline.plan import plan_budget

    try:
        result = plan_budget(run, num_samples)
    except ValueError as exc:  # DP-SGD with no sample; a stage the accountant cannot calibrate
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None

    privacy = run.privacy
    relation = "add/remove-one" if privacy.neighbouring == "add_remove" else "replace-one"
    console.print(f"[bold]Privacy budget plan[/bold]: total ε = {privacy.epsilon:g}, δ = {privacy.delta:g}, "
                  f"neighbouring relation: {relation}, {num_samples} private samples")
    if privacy.reproducible_noise:
        console.print(f"[bold red]{NOT_DP_WARNING}[/bold red]")
    console.print("Every ε below is the accountant's (dp-accounting): PLD reported, RDP shown beside it; "
                  "the ledger reports the smaller sound bound.")
    console.print(_stage_table(run, result))
    for stage_plan in (result.representation, result.decoder):
        if stage_plan is not None:
            console.print(_dpsgd_table(stage_plan, run, num_samples, result.caps))
    if result.release is not None:
        _print_release(console, result.release, run, result.caps["release"])
    if result.verdict is not None:
        verdict = result.verdict
        judged = ("the clipped log-likelihood of the private labels under a logistic regression fitted on each "
                  f"candidate's rows: sensitivity {run.synthesis.loglik_clip:g}, monotone" if run.makes_samples else
                  "a probe's count of private samples it gets right: sensitivity 1, monotone")
        console.print(f"[bold]verdict[/bold]: {verdict.generations} exponential selections of ε = "
                      f"{verdict.selection_epsilon:.4f} each ({judged}), composing to ε = {verdict.epsilon:.3f} "
                      f"within the cap {result.caps['verdict']:.3f}")
    _print_total(console, result, run)


def _exit_on_config_error(make: Callable[[], T], *, code: int) -> T:
    """``make()``, or its ConfigError on one line and exit ``code``."""
    try:
        return make()
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code) from None


def _stage_table(run: RunConfig, result: BudgetPlan) -> Table:
    privacy = run.privacy
    table = Table(title="Stage split: shares of ε, and the ε caps they become in the ledger")
    table.add_column("stage")
    table.add_column("share", justify="right")
    table.add_column("ε cap", justify="right")
    table.add_column("private access")
    uses = {
        "representation": "DP-SGD (Poisson-subsampled Gaussian), per-sample clipping",
        "release": ("one Gaussian release of the class sizes and each class's histogram of every column (and, "
                    "with quantile bins, of the numeric columns' fine histograms); the rows are drawn from it"
                    if run.makes_samples else
                    "a Gaussian release of per-class statistics (counts, then the rest); the search is "
                    "post-processing of it" if run.search.class_means == "sums" else
                    "a Gaussian release of the class sizes, then each class's vote for a public cluster "
                    "(exponential mechanism); the search is post-processing of them"),
        "decoder": ("DP-SGD on private data" if run.decoder.training != "public"
                    else "budget unused: the decoder trains on public data"),
        "verdict": ("each generation, the private rows choose among variants of the released marginals "
                    "(exponential mechanism over the clipped log-likelihood of their labels)" if run.makes_samples else
                    "each generation, the private samples choose a labelling of the pool (exponential "
                    "mechanism over a probe's correct counts)"),
        "delivery": "decoding and writing the synthetic set: post-processing, reads no private data",
    }
    for stage, share in privacy.split.items():
        cap = result.caps.get(stage, 0.0)
        access = uses.get(stage, "ledger-charged releases") if cap > 0 else "no private access (post-processing only)"
        table.add_row(stage, f"{share:.1%}", f"{cap:.3f}", access)
    return table


def _dpsgd_table(stage: DPSGDStagePlan, run: RunConfig, n: int, caps: dict[str, float]) -> Table:
    from pcevolve.privacy.accounting import account
    from pcevolve.privacy.calibration import dpsgd_noise_multiplier, dpsgd_schedule
    from pcevolve.privacy.events import SubsampledGaussianSteps

    privacy = run.privacy
    stage_cap = caps[stage.stage]
    schedule = stage.schedule
    q = schedule.sampling_probability
    if stage.stage == "representation":
        batch, epochs, where = run.representation.batch_size, run.representation.epochs, "representation"
    else:
        batch, epochs, where = run.decoder.dp_batch_size, run.decoder.dp_epochs, "decoder (dp_batch_size, dp_epochs)"
    table = Table(title=f"{stage.stage}: DP-SGD for ε cap {stage_cap:.3f}")
    table.add_column("setting")
    table.add_column("value", justify="right")
    table.add_column("note")
    table.add_row("n (private samples)", str(n), "--n")
    table.add_row("batch, epochs", f"{batch}, {epochs}", f"config: {where}")
    table.add_row("q = batch / n", f"{q:.4g}", "Poisson sampling rate")
    table.add_row("steps = ⌈epochs·n / batch⌉", str(schedule.steps),
                  f"charged epoch by epoch ({schedule.steps_per_epoch} steps each), before each epoch runs")
    table.add_row("clip norm C", f"{stage.clip_norm:g}", "noise std on the gradient sum = σ·C")
    check = account([SubsampledGaussianSteps(q, stage.noise_multiplier, max(stage.steps, 1))], delta=privacy.delta,
                    neighbouring=privacy.neighbouring)
    label = "σ (accountant, for the stage cap)" if stage.mode == "derived" else "σ (given in the config)"
    table.add_row(label, f"{stage.noise_multiplier:.4f}",
                  f"ε of the stage: {stage.epsilon:.3f} (PLD {check.pld_bound:.3f}, RDP {_fmt(check.rdp_epsilon)})")
    if stage.refused:
        table.add_row("[red]refused[/red]", "0 steps", "the stage cannot pay for its planned steps; the run stops here")
    elif stage.mode == "given":
        table.add_row("steps the budget allows", str(stage.steps),
                      f"{stage.steps * q:.1f} epochs; training stops there")
    if stage.stage == "representation" and n >= _SEED_BATCH and (batch, epochs) != (_SEED_BATCH, _SEED_EPOCHS):
        seed_q, seed_steps = dpsgd_schedule(n, _SEED_BATCH, _SEED_EPOCHS)
        cap = stage_cap
        kwargs = {"sampling_probability": seed_q, "steps": seed_steps, "neighbouring": privacy.neighbouring}
        seed_pld = dpsgd_noise_multiplier(cap, privacy.delta, accountant="pld", **kwargs)
        seed_rdp = (dpsgd_noise_multiplier(cap, privacy.delta, accountant="rdp", **kwargs)
                    if privacy.neighbouring == "add_remove" else None)
        table.add_row("original method's schedule, σ on RDP", _fmt(seed_rdp),
                      f"batch {_SEED_BATCH}, {_SEED_EPOCHS} epochs, {seed_steps} steps; PLD σ {seed_pld:.3f} "
                      "(its own σ of 0.5-0.8 spends more than this cap in one step)")
    return table


def _partial_votes(softness: float) -> str:
    if softness == 0:
        return ""
    return (" (and a part of a vote for each other cluster, smaller the farther it is; never more than one vote per "
            "cluster from one sample)")


def _print_made_release(console: Console, release: MadeReleasePlan, cap: float) -> None:
    """The release of a table without a public pool (pcevolve.synthesis.release): its Gaussian parts."""
    table = Table(title=f"release: the rows are made from it (no public table); ε cap {cap:.3f}, parts composed to "
                        f"{release.epsilon:.3f}")
    table.add_column("part")
    table.add_column("released", overflow="fold")
    table.add_column("times", justify="right")
    table.add_column("L2 sensitivity", justify="right")
    table.add_column("noise multiplier", justify="right")
    table.add_column("noise std", justify="right")
    described = {"bin_placement": ("each numeric column's histogram over a fine grid of its declared bounds, classes "
                                   f"pooled (its bins go to the released quantiles): {', '.join(release.placed)}; a "
                                   "row adds 1 to one cell of each"),
                 "marginals": "the class sizes, and each class's histogram of every column over its bins; a row adds "
                              "1 to one cell of each (d + 1 histograms)",
                 "gradient": "a logistic regression's gradient over the private rows (the labeller), a row's part "
                             "bounded by its features' norm X from the schema"}
    for name, z in release.noise_multipliers.items():
        table.add_row(name.replace("_", " "), described[name], str(release.repeats[name]),
                      f"{release.sensitivities[name]:.3f}", f"{z:.4f}", f"{release.noise_stds[name]:.3f}")
    console.print(table)
    console.print("The delivered rows are drawn from these releases (and, with the labeller, labelled by its "
                  "logistic regression): post-processing.")


def _print_release(console: Console, release: ReleasePlan | VotePlan | MadeReleasePlan, run: RunConfig,
                   cap: float) -> None:
    from pcevolve.pipeline.plan import MadeReleasePlan, VotePlan

    search = run.search
    if isinstance(release, MadeReleasePlan):
        _print_made_release(console, release, cap)
        return
    if isinstance(release, VotePlan):
        console.print(
            f"release (ε cap {cap:.3f}): the class sizes first, one Gaussian release at noise multiplier "
            f"{release.count_noise_multiplier:.4f} (noise std {release.count_noise_std:.2f} per class size); then the "
            f"public pool is split into {search.vote_clusters_per_class:g} clusters per class (rounded; k-means in the "
            f"leading directions that hold {search.vote_cluster_variance:.0%} of the public variance), every private "
            f"sample votes for its nearest cluster{_partial_votes(search.vote_softness)}, and the classes are given "
            "distinct clusters by one draw of the "
            f"exponential mechanism at ε = {release.vote_epsilon:.3f}, favouring the assignments that honour the most "
            "votes. The chosen public centres are the class means; no sums are released (search.class_means: votes).")
        return
    z_count, z_rest = release.event_noise_multipliers
    table = Table(title=f"release: per-class statistics for ε cap {cap:.3f} (two Gaussian events: the counts, "
                        "then the rest)")
    table.add_column("released per class")
    table.add_column("numbers", justify="right")
    table.add_column("L2 bound per record", justify="right")
    table.add_column("share", justify="right")
    table.add_column("noise std per number", justify="right")
    table.add_column("released when the typical class has", justify="right")
    rows = {"count": ("class size", "1", ""), "sum": ("sum of clipped features (→ mean)", "C", "·C"),
            "second_moment": ("second moment Σ z zᵀ (→ covariance)", "C²", "·C²"),
            "rff": ("random-Fourier-feature sum (→ MMD)", "1", "")}
    when = {"count": "always", "sum": "always",
            "second_moment": f"≥ {release.kept_from['second_moment']:.1f} × C²/v₁ samples",
            "rff": f"≥ {release.kept_from['rff']:.0f} samples"}
    if search.release_min_snr == 0:
        when.update(second_moment="always", rff="always")
    shares = dict(zip(("count", "sum", "second_moment", "rff"), search.release_shares, strict=True))
    for component, std in release.noise_stds.items():
        name, bound, unit = rows[component]
        table.add_row(name, str(release.sizes[component]), bound, f"{shares[component]:.0%}", f"{std:.3f}{unit}",
                      when[component])
    console.print(table)
    basis = ("basis of public features" if search.pixel_frequencies == 0 else
             f"basis ({search.basis_dim} directions of public features and the pixel view's {search.pixel_frequencies}"
             f" x {search.pixel_frequencies} lowest spatial frequencies)")
    console.print(f"Features are reduced to a {run.basis_size}-d {basis} and clipped to a radius C "
                  f"(the {search.clip_quantile:.0%} quantile of public norms, known once the public pool is encoded). "
                  f"The counts are released first (noise multiplier {z_count:.4f}). A class's mean of a statistic is "
                  f"its sum over the class size, so its noise shrinks as classes grow"
                  + (": where the sums cover the whole basis every statistic is released "
                     "(search.release_min_snr 0). " if search.release_min_snr == 0 else
                     f": the covariances and the MMD embeddings are released only if, for the noisy class size, their "
                     f"class means rise {search.release_min_snr:g}× above their noise (v₁ is the largest public "
                     "variance along the basis); otherwise their share goes to the sums and the noise stds above "
                     "shrink. ")
                  + ("The class sums are released in a fixed number of leading directions "
                     f"(search.release_dim {search.release_dim}). " if search.release_dim is not None else
                     "The class sums cover only the leading basis directions where a class mean rises above its "
                     "noise: direction d is released when the public features' spread along it, √v_d, is at least "
                     f"the noise of a class mean, {release.sum_noise_multiplier:.3f}·C(d)/n (n: the noisy class size, "
                     "C(d): the clip radius of the leading d directions) — with 10 samples per class that is "
                     f"{release.sum_noise_multiplier / 10:.3f}·C(d), with 100 "
                     f"{release.sum_noise_multiplier / 100:.4f}·C(d). Where fewer than all directions are released, "
                     "only the sums are, and a class is described by the public pool in the other directions. ")
                  + f"The rest is "
                  f"released at noise multiplier {z_rest:.4f}; together the two events equal one release at "
                  f"{release.noise_multiplier:.4f}. The classes are disjoint, so all classes together cost one "
                  "release each.")


def _print_total(console: Console, result: BudgetPlan, run: RunConfig) -> None:
    total = result.total
    privacy = run.privacy
    caps = sum(result.caps.values())
    console.print(
        f"\nIf every stage spends its plan, the accountant's total is ε = {total.epsilon:.3f} ({total.bound}; "
        f"RDP {_fmt(total.rdp_epsilon)}) of the {privacy.epsilon:g} asked, at δ = {privacy.delta:g}. The stage caps "
        f"sum to {caps:.3f}: they are the shares scaled until the composition of the events above, which is "
        "sub-additive, reaches the total."
    )


def _fmt(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.3f}"
