"""``pcevolve export``: copy what may leave the secure zone out of a finished run folder, and nothing else.

A run folder holds the synthetic set beside files that only the run needs (resume markers, checkpoints, the
release and the models it was computed with) and ``secure/``, which must never leave. Copying the folder by hand
invites mistakes; the export is an allow-list:

* the synthetic set, in the input's format (``synthetic/`` class folders, ``synthetic.csv`` or ``synthetic.jsonl``);
* ``ledger.json`` (every DP release with its ε; ``pcevolve ledger show`` recomputes them from its events),
  ``config.yaml`` and ``manifest.json`` (settings and software versions; no private content). The data files and
  folders appear in the config by name only: their paths on the secure machine (``/data/cardiology-2024/...``) can
  say more than the user means to share;
* ``report/`` only when asked for: its attack, copy and few-shot figures are computed on the private data and are
  not differentially private (the report says which);
* ``README.txt``, written here: the privacy guarantee in plain words and what each file is;
* for a run a sweep made (``pcevolve sweep``), ``sweep-ledger.json``: the sweep's ledger. Its runs read the same
  private data and the set was presumably chosen after comparing them, so the export states the sweep's ε (the
  accountant's composition of every run's events; its cap while the sweep is unfinished), not the run's own.

The export refuses a run that has not finished, a ledger whose signature does not match the run's key, and a
run made with reproducible noise (not differentially private) unless that is asked for explicitly. It is built
under a temporary name and appears complete or not at all. Its times say nothing about how long the run took:
every file in it has the export's own time as its modification time — the time the operating system gives it as its
change time anyway, which no program can set — and its ``manifest.json`` states the day the run started, not the
time: a start time beside the export's change times would time the whole run, private stages included, when the
export follows the run at once (a script that fits, evaluates and exports).
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcevolve.config import RunConfig, dump_config, load_config
from pcevolve.io import (
    TargetExistsError,
    atomic_directory,
    atomic_write_json,
    atomic_write_text,
    refuse_file_parent,
    shared_tree,
)
from pcevolve.modalities import MODALITIES
from pcevolve.pipeline.audit_ledger import AUDIT_LEDGER, AuditCost, audit_cost
from pcevolve.randomness import FLOATING_POINT_NOTE
from pcevolve.run_folder import RunFolder

if TYPE_CHECKING:
    from pcevolve.pipeline.sweep_member import SweepGuarantee
    from pcevolve.privacy.ledger import BudgetLedger

#: Files of a run folder an export copies as they are (besides the synthetic set and, if asked, the report); the
#: config is written anew with its data paths shortened.
COPIED_FILES = ("ledger.json",)
DATA_PATHS = ("private", "public", "test", "full", "schema_file")
REPORT = "report"
SWEEP_LEDGER = "sweep-ledger.json"


class ExportError(Exception):
    """The run cannot be exported as asked; the message says why and what to do."""


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote.

    Attributes:
        path: The exported folder.
        files: Its entries, relative to it (the synthetic set as one entry).
        epsilon, delta: The set's privacy guarantee, as the ledger's accountant gives it: the sweep's for a run a
            sweep made (``run_epsilon`` is then the run's own).
        dp: Whether the run's noise came from a secure source (False: reproducible noise, not DP).
        run_epsilon: The run's own ε.
        sweep: The sweep folder, for a run a sweep made.
    """

    path: Path
    files: tuple[str, ...]
    epsilon: float
    delta: float
    dp: bool
    run_epsilon: float = float("nan")
    sweep: Path | None = None


def export_run(run_dir: str | os.PathLike[str], out: str | os.PathLike[str], *, with_report: bool = False,
               allow_not_dp: bool = False) -> ExportSummary:
    """Copy the shareable part of a finished run into ``out`` (module docstring).

    Raises:
        ExportError: ``run_dir`` is not a finished run, its ledger cannot be verified, the run is not DP and
            ``allow_not_dp`` is false, the report was asked for and is missing, or ``out`` exists.
    """
    from pcevolve.pipeline.secure_zone import SecureZone  # loads the accountant: not at import time
    from pcevolve.pipeline.sweep_member import SweepMemberError, sweep_guarantee
    from pcevolve.privacy.ledger import BudgetLedger
    from pcevolve.privacy.ledger_errors import LedgerError

    try:
        folder = RunFolder.open(run_dir)
    except FileNotFoundError as error:
        raise ExportError(str(error)) from None
    target = Path(out)
    if target.exists():
        raise ExportError(f"{target} already exists; choose a new folder for the export")
    try:
        refuse_file_parent(target)
    except TargetExistsError as error:
        raise ExportError(str(error)) from None
    if target.resolve().is_relative_to(folder.path.resolve()):
        raise ExportError(f"{target} is inside the run folder {folder.path}; export to a folder outside it")
    config = load_config(folder.config_path)
    modality = MODALITIES.get_part(config.data.modality)
    delivered = folder.path / modality.delivered_name
    if not (folder.path / "stages" / "delivery.json").is_file() or not delivered.exists():
        raise ExportError(f"{folder.path} has not finished (no delivered synthetic set); finish it with "
                          f"`pcevolve run --resume {folder.path}`, then export")
    secure = SecureZone(folder)
    try:
        key = secure.read_key()
        if key is None:
            raise ExportError(f"{secure.key_path} is missing, so the ledger's signature cannot be checked; export "
                              "from the machine that made the run")
        ledger = BudgetLedger.load(folder.ledger_path, key=key)
    except (FileNotFoundError, LedgerError, ValueError) as error:
        raise ExportError(f"the run's privacy ledger cannot be verified: {error}") from None
    if not ledger.is_dp and not allow_not_dp:
        raise ExportError("this run used reproducible noise, so it is NOT differentially private (anyone with its "
                          "config can regenerate the noise); it is for tests and research only. Export it anyway "
                          "with --allow-not-dp")
    report = folder.path / REPORT
    if with_report and not (report / "report.html").is_file():
        raise ExportError(f"{folder.path} has no report yet; run `pcevolve evaluate {folder.path} --test …` first, "
                          "or export without the report")

    try:
        swept = sweep_guarantee(folder.path)
    except SweepMemberError as error:
        raise ExportError(str(error)) from None
    epsilon = ledger.spent() if swept is None else swept.epsilon
    # The report shows audit.json, whose end-to-end part is post-processing of the audits' reruns: it ships with
    # their ledger, and the README states what the run and its audits cost together.
    audited = audit_cost(folder, ledger, key) if with_report else None
    copied = [modality.delivered_name, *COPIED_FILES, *([REPORT] if with_report else []),
              *([AUDIT_LEDGER] if audited is not None else [])]
    with atomic_directory(target) as staging:
        for name in copied:
            source = folder.path / name
            if source.is_dir():
                shutil.copytree(source, staging / name, symlinks=False, copy_function=shutil.copyfile)
            else:
                shutil.copyfile(source, staging / name)
        if swept is not None:
            shutil.copyfile(swept.ledger, staging / SWEEP_LEDGER)
        atomic_write_json(staging / "manifest.json", _shareable_manifest(folder.manifest()))
        dump_config(_shareable(config), staging / "config.yaml")
        atomic_write_text(staging / "README.txt", _readme(config.name, modality.noun, modality.delivered_name,
                                                          epsilon, ledger.delta, ledger.neighbouring,
                                                          ledger.is_dp, with_report,
                                                          sweep=None if swept is None else (swept, ledger.spent()),
                                                          audited=audited, reveals_n=_reveals_n(ledger)))
        shared_tree(staging)  # its files start private to their creator; an export is made to be read
        _stamp(staging, time.time())
    files = (*copied, *([] if swept is None else [SWEEP_LEDGER]), "manifest.json", "config.yaml", "README.txt")
    return ExportSummary(path=target, files=files, epsilon=epsilon, delta=ledger.delta, dp=ledger.is_dp,
                         run_epsilon=ledger.spent(), sweep=None if swept is None else swept.sweep)


def _shareable_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The run's manifest with its start reduced to the day (module docstring: the export's times)."""
    created = manifest.get("created")
    return {**manifest, "created": created[:10] if isinstance(created, str) else None}


def _stamp(folder: Path, moment: float) -> None:
    """Give ``folder`` and everything in it ``moment`` as access and modification time (the export's own time)."""
    for path in [*folder.rglob("*"), folder]:
        os.utime(path, (moment, moment), follow_symlinks=False)


def _shareable(config: RunConfig) -> RunConfig:
    """The config with every data path reduced to its last part (the folder or file name)."""
    names = {key: Path(value).name for key in DATA_PATHS if isinstance(value := getattr(config.data, key), str)}
    return config.model_copy(update={"data": config.data.model_copy(update=names)})


def _reveals_n(ledger: BudgetLedger) -> bool:
    """Whether the ledger states a DP-SGD sampling rate q = batch / n, from which the private set's size follows."""
    from pcevolve.privacy.events import SubsampledGaussianSteps

    return any(isinstance(event, SubsampledGaussianSteps) for event in ledger.events())


def _readme(name: str, noun: str, delivered: str, epsilon: float, delta: float, neighbouring: str, dp: bool,
            with_report: bool, *, sweep: tuple[SweepGuarantee, float] | None = None,
            audited: AuditCost | None = None, reveals_n: bool = False) -> str:
    change = (f"adding or removing any one private {noun}" if neighbouring == "add_remove"
              else f"replacing any one private {noun} with another")
    listed = "ledger.json" if sweep is None else SWEEP_LEDGER
    choosing = "not covered" if sweep is None else "covered only among this sweep's runs"
    if dp:
        guarantee = [
            f"Privacy: ({epsilon:.4f}, {delta:g})-differential privacy for the synthetic set, ledger.json, config.yaml "
            f"and manifest.json: {change} changes the probability of any of them by at most a factor "
            f"e^{epsilon:.4f} (and by at most {delta:g} beyond that). The epsilon is the composition, by Google's "
            f"dp-accounting library, of every noisy release listed in {listed}. The noise came from the operating "
            f"system's secure random source, so nobody can regenerate it. Note: {FLOATING_POINT_NOTE}.",
            *([] if sweep is None else ["", _sweep_paragraph(*sweep)]),
            *([] if not reveals_n else [
                "", f"This run trained a model with DP-SGD, whose sampling rate q = batch / n is stated in "
                    f"{listed} (the accountant needs it): it gives n, the number of private {noun}s. The guarantee "
                    f"treats n as public: it protects which {noun}s are in the private set and what they hold, not "
                    "how many there are."]),
            "",
            "The guarantee holds when:",
            "  - the public pool the run learnt from and drew from was chosen without looking at the private data (a "
            f"private {noun} that was also in it counts as public);",
            "  - the classes were declared by the data's owner, not read off the private data;",
            "  - the settings were chosen without looking at results on the private data (each run on the same data "
            f"spends its own budget, and choosing between runs by their results is {choosing});",
            f"  - the private data could be read: {_a(noun)} {noun} the run cannot read stops it with an error that "
            "names it, and such an error is not covered;",
            f"  - each person contributed one private {noun} (someone with several is protected less).",
        ]
    else:
        guarantee = ["NOT DIFFERENTIALLY PRIVATE: this run drew its noise reproducibly (for tests and research), so "
                     "anyone holding its config can regenerate the noise and undo it. Do not share it as private."]
    what = "one folder per class" if not Path(delivered).suffix else "one file"
    files = [(delivered, f"the synthetic set ({what}, in the input's format)"),
             ("ledger.json", "every differentially private release of the run with its epsilon; "
                             "`pcevolve ledger show ledger.json` recomputes them"),
             ("config.yaml", "the run's settings (its data folders and files named without their paths)"),
             ("manifest.json", "the software versions the run used, and the day it started")]
    if sweep is not None:
        files.append((SWEEP_LEDGER, "the ledger of the sweep this run belongs to: every run's releases, composed"))
    if with_report:
        files.append(("report/", "the evaluation report, which is not part of the private product: it compares the "
                                 f"synthetic set with the private {noun}s. Its membership-attack, copy-check and "
                                 "few-shot figures were computed on the private data (rounded, but without noise) and "
                                 "are NOT covered by the guarantee above"))
    if audited is not None:
        files.append((AUDIT_LEDGER, "the ledger of the end-to-end privacy audits the report shows: each ran the "
                                    "pipeline again on the same private data, so the report's audit result costs "
                                    f"ε = {audited.audits:.4f} on its own, and the synthetic set shared with it costs "
                                    f"ε = {audited.with_run:.4f} in all (δ = {audited.delta:g}), not the ε above"))
    width = max(len(file) for file, _ in files) + 1
    lines = [
        f"Synthetic dataset '{name}', made by pcevolve from a private labelled dataset.",
        "",
        *guarantee,
        "",
        "Files:",
        *(f"  {file:<{width}}{description}" for file, description in files),
    ]
    return "\n".join(lines) + "\n"


def _a(noun: str) -> str:
    """The indefinite article before ``noun`` ("an image", "a table row")."""
    return "an" if noun[:1].lower() in "aeiou" else "a"


def _sweep_paragraph(swept: SweepGuarantee, own: float) -> str:
    """Why the guarantee above is the sweep's, not the run's own."""
    state = ("every run of the sweep has finished, so this is what they spent together" if swept.finished else
             "the sweep has not finished, so this is its cap, which no run of it can pass")
    return (f"This run ({own:.4f} on its own) is one of several runs of a sweep on the same private data. Runs on the "
            "same data compose, and a set chosen after comparing them uses all of them, so the epsilon above is the "
            f"sweep's (sweep-ledger.json; {state}). That covers a choice made on the runs' test scores; the sweep's "
            "membership-attack figures are computed on the private data without noise, and a choice steered by them "
            "is not covered.")
