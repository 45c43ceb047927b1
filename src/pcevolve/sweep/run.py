"""``pcevolve sweep``: the pipeline at several ε on the same private data under one ledger, each run judged on the
test data, and the privacy–utility curve to choose ε from.

Runs on the same private data compose, and choosing one after comparing them is post-processing of all of them. So
a sweep has one ledger, ``SWEEP/ledger.json`` (signed with a key in ``SWEEP/secure/``), with one stage per member:
every member's ledger is bound to it (:meth:`~pcevolve.privacy.BudgetLedger.bind`), so each charge is admitted by
both before any noise is drawn, and the sweep's ledger composes every member's events with the accountant. Its cap is
``--max-epsilon`` or, without one, the planned composition (:mod:`pcevolve.sweep.plan`); a sweep whose plan passes
the cap is refused before anything is read beyond the private set's size, or written.

Folder::

    SWEEP/                  runs/NAME-sweep unless --out says otherwise
      config.yaml           the base config (each member sets privacy.epsilon and its name)
      sweep.json            the ε values, members, cap and planned total
      ledger.json           the sweep's ledger (pcevolve ledger show SWEEP/ledger.json)
      eps-0.5/ … eps-8/     the members: ordinary run folders (report/ once judged)
      results.json          one point per judged member (figures from its shared report)
      curve.png             utility and the strongest attack against ε
      report/               report.html and report.md: the sweep's ε, the curve, each run's figures and report
      secure/ledger.key     never leaves the machine, as every run's secure/

A sweep killed at any point continues with ``pcevolve sweep --resume SWEEP``: finished members are kept, an
interrupted one resumes under its own ledger and the sweep's (a charge both admitted is never paid twice; one the
sweep admitted and the member did not record is counted by the sweep only, so its total errs high, never low).
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pcevolve.config import RunConfig, dump_config, load_config
from pcevolve.config.schema import MAX_EPSILON
from pcevolve.in_memory import FORM_FILE, input_folder
from pcevolve.io import (
    TargetExistsError,
    atomic_directory,
    atomic_write_bytes,
    atomic_write_json,
    read_json,
    refuse_file_parent,
)
from pcevolve.modalities import MODALITIES
from pcevolve.pipeline import open_run, run_pipeline
from pcevolve.pipeline.secure_zone import SecureZone
from pcevolve.pipeline.sweep_member import SWEEP_FILE, SWEEP_FORMAT, delivered, open_sweep_ledger, write_membership
from pcevolve.privacy import BudgetLedger
from pcevolve.privacy.ledger_errors import LedgerError
from pcevolve.run_folder import RunFolder
from pcevolve.sweep.curve import CurvePoint, curve_png, curve_point
from pcevolve.sweep.plan import CLI_TERMS, SweepPlan, Terms, member_configs, plan_sweep

SWEEP_VERSION = 1
RESULTS_FORMAT = "pcevolve.sweep.results"

#: What a sweep says wherever its results are shown.
CHOICE_NOTE = ("the runs of a sweep read the same private data, so together they spend the sweep's ε (the "
               "accountant's composition of all of them, in ledger.json); a set chosen after comparing their test "
               "scores carries that ε, not its own. The membership-attack figures are computed on the private data "
               "without noise: a choice steered by them is not covered by any ε")


class SweepError(Exception):
    """A sweep cannot start or continue; the message says why and what to do."""


@dataclass(frozen=True)
class SweepFolder:
    """The files of one sweep folder (module docstring)."""

    path: Path

    @property
    def config_path(self) -> Path:
        return self.path / "config.yaml"

    @property
    def state_path(self) -> Path:
        return self.path / SWEEP_FILE

    @property
    def ledger_path(self) -> Path:
        return self.path / "ledger.json"

    @property
    def results_path(self) -> Path:
        return self.path / "results.json"

    @property
    def curve_path(self) -> Path:
        return self.path / "curve.png"

    def member(self, name: str) -> Path:
        return self.path / name

    def settle_times(self) -> None:
        """Give the sweep's own files, and the folder, the sweep's start as their times, as each run does with its
        files: the ledger's time would otherwise be that of the last run's last release, and the gap since the start
        would time the runs' private stages. The runs settle their own folders; ``secure/`` is left alone."""
        created = _dt.datetime.fromisoformat(read_json(self.state_path)["created"]).timestamp()
        report = self.path / "report"
        for path in (self.config_path, self.state_path, self.ledger_path, self.results_path, self.curve_path,
                     report, *(report.iterdir() if report.is_dir() else ())):
            if path.exists():
                os.utime(path, (created, created), follow_symlinks=False)
        os.utime(self.path, (created, created))


@dataclass(frozen=True)
class Sweep:
    """An open sweep: its folder, base config, members and ledger."""

    folder: SweepFolder
    config: RunConfig
    members: tuple[RunConfig, ...]
    ledger: BudgetLedger

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(member.name for member in self.members)


@dataclass(frozen=True)
class SweepOutcome:
    """What a finished sweep shows: every judged member's point, and the sweep's guarantee."""

    folder: Path
    points: tuple[CurvePoint, ...]
    total_epsilon: float
    delta: float
    is_dp: bool
    curve: Path | None


def private_count(config: RunConfig) -> int:
    """n, read as a run reads it (the same checks and messages); treated as public, as in a single run.

    Raises:
        pcevolve.data.DataError: The private data has problems (each named).
    """
    modality = MODALITIES.get_part(config.data.modality)
    return len(modality.read_private(config.data, modality.layout(config.data)).labels)


def check_cap(plan: SweepPlan, max_epsilon: float | None, terms: Terms = CLI_TERMS) -> float:
    """The sweep ledger's cap: ``max_epsilon``, or the planned total without one.

    The runs of a sweep compose into one guarantee, so the ceiling a single run's ε obeys
    (:data:`~pcevolve.config.schema.MAX_EPSILON`) bounds their composition too, and a cap.

    Raises:
        SweepError: The planned composition passes ``max_epsilon`` or that ceiling, or the cap is outside (0, ceiling].
    """
    planned = plan.total.epsilon
    alone = ", ".join(f"ε {p.total.epsilon:.3g}" for p in plan.plans)
    if max_epsilon is not None and not 0.0 < max_epsilon <= MAX_EPSILON:  # NaN fails too
        raise SweepError(f"{terms.max_epsilon} must be in (0, {MAX_EPSILON:g}], got {max_epsilon!r}: beyond "
                         f"{MAX_EPSILON:g} a DP guarantee bounds no attacker. Nothing was run or written")
    if planned > MAX_EPSILON:
        raise SweepError(f"the {len(plan.members)} runs ({alone}) compose to ε {planned:.4g} at δ = "
                         f"{plan.total.delta:g}: runs on the same private data count together, and beyond "
                         f"{MAX_EPSILON:g} a DP guarantee bounds no attacker; drop or lower some ε values. Nothing "
                         "was run or written")
    if max_epsilon is None:
        return planned
    if planned > max_epsilon:
        raise SweepError(f"the {len(plan.members)} runs ({alone}) compose to ε {planned:.4g} at δ = "
                         f"{plan.total.delta:g}, more than {terms.max_epsilon} {max_epsilon:g}; drop or lower some ε "
                         "values, or raise the cap. Nothing was run or written")
    return float(max_epsilon)


def sweep_folder(config: RunConfig, *, out: str | os.PathLike[str] | None = None,
                 root: str | os.PathLike[str] = "runs") -> Path:
    """Where a sweep of ``config`` goes: ``out``, else ``root/NAME-sweep``."""
    return Path(out) if out is not None else Path(root) / f"{config.name}-sweep"


def create_sweep(config: RunConfig, epsilons: Sequence[float], *, out: str | os.PathLike[str] | None = None,
                 root: str | os.PathLike[str] = "runs", max_epsilon: float | None = None,
                 in_memory: tuple[int, Callable[[], None]] | None = None,
                 terms: Terms = CLI_TERMS) -> tuple[Sweep, SweepPlan]:
    """Plan a sweep, refuse it if its runs would pass ``max_epsilon``, and make its folder (atomically) and ledger.

    Args:
        in_memory: For data held in memory (the Python API): n, and the function that writes the data where the
            config names it, inside ``SWEEP/secure/input/`` (called once the folder exists; if it fails, the folder
            is removed again).
        terms: How the messages name the arguments (the command line's flags, or the API's parameters).

    Raises:
        SweepError: The folder exists, or the plan passes the cap (nothing is written then).
        pcevolve.sweep.plan.SweepPlanError: Bad ε values.
        pcevolve.data.DataError: Bad private data.
    """
    target = sweep_folder(config, out=out, root=root)
    try:
        refuse_file_parent(target)
    except TargetExistsError as error:
        raise SweepError(f"{error} (the sweep's folder)") from None
    if target.exists():
        resume = (f"`pcevolve sweep --resume {target}`" if terms == CLI_TERMS else
                  f"Synthesizer.resume_sweep({str(target)!r})")
        raise SweepError(f"{target} already exists: continue it with {resume} or choose another {terms.out}")
    member_configs(config, epsilons, terms)  # bad values fail before the data is read
    missing = [f"data.{key}: {path} does not exist" for key, path in
               (("private", config.data.private), ("public", config.data.public))
               if path is not None and not Path(path).exists()
               and not (in_memory is not None and Path(path).resolve().is_relative_to(target.resolve()))]
    if missing:
        raise SweepError("; ".join(missing) + " (relative paths are read from the current folder)")
    plan = plan_sweep(config, epsilons, private_count(config) if in_memory is None else in_memory[0], terms)
    cap = check_cap(plan, max_epsilon, terms)
    privacy = config.privacy
    with atomic_directory(target) as staging:
        dump_config(config, staging / "config.yaml")
        key = SecureZone(RunFolder(staging)).write_key()
        BudgetLedger(cap, privacy.delta, {name: cap for name in plan.names}, path=staging / "ledger.json",
                     neighbouring=privacy.neighbouring, reproducible_noise=privacy.reproducible_noise, key=key,
                     pld_discretization=plan.pld_discretization)
        atomic_write_json(staging / SWEEP_FILE, {
            "format": SWEEP_FORMAT, "version": SWEEP_VERSION, "name": config.name,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "epsilons": list(plan.epsilons), "members": list(plan.names), "max_epsilon": max_epsilon,
            "planned": {"total_epsilon": plan.total.epsilon, "delta": plan.total.delta,
                        "members": {name: p.total.epsilon for name, p in zip(plan.names, plan.plans)}},
            "note": CHOICE_NOTE})
        os.chmod(staging, 0o755)  # a temporary folder is private to its creator; a sweep folder is like a run's
    if in_memory is not None:
        try:
            in_memory[1]()
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)  # nothing was spent
            raise
    RunFolder(target).seal_secure()
    SweepFolder(target).settle_times()
    return open_sweep(target), plan


def open_sweep(path: str | os.PathLike[str]) -> Sweep:
    """An existing sweep folder, its ledger verified against its key.

    Raises:
        SweepError: Not a sweep folder, or a ledger that cannot be verified (the message says which).
    """
    folder = SweepFolder(Path(path))
    try:
        state = read_json(folder.state_path)
        if not (isinstance(state, dict) and state.get("format") == SWEEP_FORMAT):
            raise ValueError(f"{folder.state_path.name} is not a sweep's")
        config = load_config(folder.config_path)
    except (OSError, ValueError) as error:
        raise SweepError(f"{folder.path} is not a sweep folder `pcevolve sweep` made ({error})") from None
    members = member_configs(config, state["epsilons"])
    try:
        ledger = open_sweep_ledger(folder.path)
    except (OSError, ValueError, LedgerError) as error:
        raise SweepError(f"the sweep's ledger cannot be verified ({error}), so what its runs spent together is "
                         "unknown; refusing to continue. Start a new sweep (another --out); the budget spent stays "
                         "spent") from None
    if set(ledger.stages) != {member.name for member in members}:
        raise SweepError(f"{folder.ledger_path} does not list this sweep's members; refusing to continue")
    return Sweep(folder, config, members, ledger)


def check_judging(config: RunConfig, test: str | os.PathLike[str] | None,
                  full: str | os.PathLike[str] | None) -> None:
    """That the runs can be judged: the test data (``test``, else ``data.test``) and a given ``full`` exist — checked
    before the first run, not after the last.

    Raises:
        SweepError: Naming the missing path and what to give instead.
    """
    wanted = test if test is not None else config.data.test
    if wanted is None:
        raise SweepError("no test data to judge the runs on: give --test (the config's data.test is empty), or "
                         "--no-evaluate to run them only")
    for what, path in (("test data", wanted), ("full real data (--full)", full)):
        if path is not None and not Path(path).exists():
            raise SweepError(f"{what} {path} does not exist (relative paths are read from the current folder)")


def _run_member(sweep: Sweep, member: RunConfig, *, progress: bool, say: Callable[[str], None]) -> None:
    """Run (or continue) one member under its own ledger bound to the sweep's. The stages that are public under
    the members' config (an encoder trained on the public pool only, a decoder fitted to it) are copied from the
    first finished member instead of computed again: they do not depend on ε."""
    run = sweep.folder.member(member.name)
    sibling = next((sweep.folder.member(name) for name in sweep.names
                    if name != member.name and delivered(sweep.folder.member(name))), None)
    if run.exists():
        config, folder, _ = open_run(None, resume=run)
    else:
        config, folder, _ = open_run(member, root=sweep.folder.path,
                                     write_inputs=lambda made: _start_member(sweep, made.path))
    run_pipeline(config, folder, progress=progress, say=say, parent=(sweep.ledger, member.name), adopt_from=sibling)


def _start_member(sweep: Sweep, run: Path) -> None:
    """What a new member's folder holds before it runs: its sweep's name and, when the sweep was given data in
    memory, the data's form (so that ``Synthesizer.load`` of the member samples it as it was given)."""
    write_membership(run, sweep=sweep.config.name, members=sweep.names)
    form = input_folder(sweep.folder.path) / FORM_FILE
    if form.is_file():
        input_folder(run).mkdir(parents=True, exist_ok=True)
        shutil.copy2(form, input_folder(run) / FORM_FILE)


def run_sweep(sweep: Sweep, *, test: str | os.PathLike[str] | None = None, full: str | os.PathLike[str] | None = None,
              evaluate: bool = True, epochs: int | None = None, progress: bool = False,
              say: Callable[[str], None] = lambda _: None) -> SweepOutcome:
    """Run every member not yet finished, then judge every member not yet judged, and draw the curve.

    Args:
        test: Real held-out data for the judges (default: the config's ``data.test``).
        full: Images only: a full real training set, the upper reference line (default: the config's
            ``data.full``, when it names one).
        evaluate: Judge the members (each gets its ``report/``) and draw the curve; without, only run them.
        epochs: Images only: the judges' CNN epochs (default: the evaluation's).

    Raises:
        SweepError: ``evaluate`` and the test data (or a given ``full``) is missing; raised before any run.
        pcevolve.pipeline.RunError, pcevolve.data.DataError, pcevolve.evaluation.EvaluationError: As ``pcevolve
            run`` and ``pcevolve evaluate``; the sweep continues with :func:`open_sweep` and this function again.
    """
    count = len(sweep.members)
    if evaluate:
        check_judging(sweep.config, test, full)
    if full is None and MODALITIES[sweep.config.data.modality].traits.full_real_reference:
        full = sweep.config.data.full
    for index, member in enumerate(sweep.members, start=1):
        if not delivered(sweep.folder.member(member.name)):
            say(f"sweep: run {index} of {count}, {member.name} (ε = {member.privacy.epsilon:g})")
            try:
                _run_member(sweep, member, progress=progress, say=lambda line, n=member.name: say(f"  {n} {line}"))
            finally:
                sweep.folder.settle_times()
    # Judged once every run has finished, so that each report states what the sweep spent in the end.
    for index, member in enumerate(sweep.members, start=1):
        run = sweep.folder.member(member.name)
        if evaluate and not (run / "report" / "evaluation.json").is_file():
            from pcevolve.report.judges import judge_run  # the judges load models: only when asked for

            say(f"sweep: judging {member.name} ({index} of {count})")
            options = {} if epochs is None else {"epochs": epochs}
            judge_run(run, test, full=None if full is None else Path(full), progress=progress, **options)
    return sweep_results(sweep) if evaluate else SweepOutcome(sweep.folder.path, (), sweep.ledger.spent(),
                                                              sweep.ledger.delta, sweep.ledger.is_dp, None)


def sweep_results(sweep: Sweep) -> SweepOutcome:
    """The points of every judged member, written to ``results.json``, drawn in ``curve.png`` and set out with the
    sweep's ledger in ``report/`` (:mod:`pcevolve.sweep.report`)."""
    from pcevolve.sweep.report import sweep_document, write_sweep_report  # the report's modules: only now

    points = tuple(curve_point(member.name, member.privacy.epsilon, read_json(path)) for member in sweep.members
                   if (path := sweep.folder.member(member.name) / "report" / "evaluation.json").is_file())
    ledger = sweep.ledger
    finished = all(delivered(sweep.folder.member(name)) for name in sweep.names)
    atomic_write_json(sweep.folder.results_path, {
        "format": RESULTS_FORMAT, "version": SWEEP_VERSION, "dp": ledger.is_dp,
        "total_epsilon": ledger.spent(), "delta": ledger.delta, "cap": ledger.total_epsilon,
        "finished": finished, "note": CHOICE_NOTE, "points": [point.to_json() for point in points]})
    png = curve_png(points, total_epsilon=ledger.spent(), delta=ledger.delta) if points else None
    curve = None if png is None else atomic_write_bytes(sweep.folder.curve_path, png)
    write_sweep_report(sweep.folder.path, sweep_document(sweep.config.name, points, ledger, curve=png,
                                                         note=CHOICE_NOTE, finished=finished))
    sweep.folder.settle_times()
    return SweepOutcome(sweep.folder.path, points, ledger.spent(), ledger.delta, ledger.is_dp, curve)
