"""The end-to-end privacy audit of one finished run, with canaries (Steinke, Nasr & Jagielski 2023, "Privacy
auditing with one (1) training run").

What it does (:func:`audit_run`):

1. reads the finished run's config and its claimed total ε (the signed ledger, checked with its key);
2. makes ``canaries`` canary images, public patterns from a generator seeded by the auditor, each aimed along a
   random direction of the run's public basis through the encoder's pixel view (so that, reduced to the basis, a
   canary lands at or beyond the release's clip radius, in its own direction: a worst case for the release), each
   given a declared class round robin;
3. flips a fair coin per canary with randomness the run cannot see (``secrets``), writes the run's private samples
   and the included canaries to ``RUN/secure/audit/private/`` and runs the whole pipeline, exactly as
   ``pcevolve run`` does (same config, same ε, secure noise), into ``RUN/secure/audit/run/``;
4. scores each canary from what that audit run ships (its files outside its own ``secure/``): the released class
   statistics — less the audited run's own release when both runs encode alike, so that the private samples'
   share cancels — projected onto what the canary adds to its class's sums, second moments and random features,
   each coordinate weighed by its noise variance (:func:`~pcevolve.audit.canary_scores.release_scores`); and +inf
   for a canary found (to a tiny pixel distance) in the delivered synthetic set
   (:func:`~pcevolve.audit.canary_scores.copied_canaries`);
5. guesses "in" for the k best and "out" for the k worst scores, for each k of a fixed grid, and bounds ε from the
   number of right guesses (:func:`~pcevolve.audit.canary_guesses.guess_bounds`, Bonferroni over the grid).

A later audit of the same run goes to ``RUN/secure/audit-2/``, ``audit-3/`` …: nothing already there is touched.

Where each step lives: this module reads the run and runs the audit (steps 1 and 3);
:mod:`pcevolve.audit.canaries` makes the canaries and the private set they join (steps 2–3),
:mod:`pcevolve.audit.canary_scores` scores them (step 4), :mod:`pcevolve.audit.canary_guesses` bounds ε from the
scores (step 5), and :mod:`pcevolve.audit.end_to_end_result` holds the result and says where it is written.

The contract. Trials = ``canaries`` (m): each canary is one Bernoulli(½) trial of membership. If the run, as
implemented, is (ε, δ)-DP under add/remove-one, then with probability at least 1 − ``alpha`` (over the coins and
the run's noise) the reported bound is at most ε (Steinke et al., Theorem 5.2, as implemented in
:func:`pcevolve.privacy.audit.one_run_epsilon`). So ``passed = False`` (bound > the ledger's ε) proves, at
confidence 1 − ``alpha``, that the run leaks more than it claims. ``passed = True`` proves nothing about the claim:
the attack did not refute it. The bound can never exceed the ceiling of m canaries (every guess right), which
grows slowly with m: at m = 500, δ = 1e-5 and 95 % confidence split over the five k of the grid, the ceiling is
4.65 (r = 500 guesses), so an audit of a run claiming ε = 8 — the demo's — **cannot** refute its claim, however
badly it leaked; it can refute claims up to about ε = 4.6 (ε = 1 with 60 canaries: ceiling 2.6).

What the audit found on the demo and on tiny runs — a correct run, a release without noise, a pool holding the
private images — and how long it takes is measured in docs/privacy.md §10.4.

What the audit writes. The ``end_to_end`` part of ``RUN/audit.json`` (:mod:`pcevolve.audit.results`; a
per-mechanism part there is kept): only canary-derived numbers (m, the guesses r, the right ones v, the bound, the
ceiling, ε, δ, the confidence), never replaced unless ``overwrite``; everything else — the private
copy, the audit run, the per-canary scores (``canaries.npz``) — stays under ``RUN/secure/audit*/``. The audit run
is a second DP run on the same private data: ``audit.json`` is post-processing of it, so sharing it beside the
run's own outputs exposes the private data to both runs. The rerun therefore charges the run's audit ledger,
``RUN/audit-ledger.json`` (:mod:`pcevolve.pipeline.audit_ledger`), bound as its parent: every audit of the run, an
``overwrite`` included, adds its rerun's events there before drawing noise, ``pcevolve ledger show RUN`` shows it,
and ``audit.json`` states what the audits spent (``audits_epsilon``) and what the run and its audits compose to
(``with_run_epsilon``: the ε that ``audit.json`` costs beside the run's outputs).

Limits: image runs only (tables and texts raise ``ValueError``); add/remove-one runs only (the coins add or
remove a canary). A run that trains with DP-SGD takes its sampling rate q = batch / n from the audit run's own n,
which counts the included canaries: n is treated as public there (docs/privacy.md §2), and the scorer never reads q;
such an encoder differs between the two runs, so the release is scored ``"centred"``, without the run's own release
as a baseline, and the private samples' sums weaken every score (:func:`~pcevolve.audit.canary_scores.release_scores`).
With ``search.class_means: votes`` the release gives no per-canary signal (the class means are public centres),
so only copies score.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pcevolve.audit.canaries import design_canaries, write_audit_private_set
from pcevolve.audit.canary_guesses import guess_bounds
from pcevolve.audit.canary_scores import score_canaries
from pcevolve.audit.end_to_end_result import AUDIT_FOLDER, AUDIT_PART, EndToEndAudit
from pcevolve.audit.results import AUDIT_FILE, read_audit, write_audit_part
from pcevolve.catalog.modalities import MODALITY_TRAITS
from pcevolve.config import ConfigError, RunConfig, load_config, parse_config, with_dotted
from pcevolve.io import TargetExistsError, atomic_write_npz
from pcevolve.pipeline.audit_ledger import AUDIT_LEDGER, AUDIT_STAGE, audit_cost, audit_ledger
from pcevolve.pipeline.run import RunError, open_run, run_pipeline
from pcevolve.pipeline.run_lock import RunFolderInUse, run_folder_lock
from pcevolve.pipeline.secure_zone import SecureZone
from pcevolve.privacy import BudgetLedger
from pcevolve.privacy.accounting import account
from pcevolve.privacy.audit import one_run_ceiling
from pcevolve.privacy.ledger_errors import LedgerError
from pcevolve.run_folder import RunFolder

#: The fewest canaries an audit takes (one guess each way, two canaries per class for the centring).
MIN_CANARIES = 10


def audit_run(run_folder: str | Path, *, canaries: int = 500, alpha: float = 0.05, progress: bool = False,
              overwrite: bool = False, say: Callable[[str], None] = lambda _: None,
              canary_seed: int | None = None) -> EndToEndAudit:
    """Audit a finished image run end to end with ``canaries`` canaries (see the module docstring).

    Args:
        run_folder: A finished ``pcevolve run`` folder with its ``secure/`` (key, private data reachable through
            its config's ``data.private``; relative data paths are read from the current folder, as by ``run``).
        canaries: m, at least :data:`MIN_CANARIES`; more canaries raise the ceiling (and the time a little).
        alpha: 1 − confidence of the bound, split over the guess grid.
        progress: Progress bars of the audit run.
        overwrite: Replace an end-to-end result already in ``RUN/audit.json``.
        say: Receives one line per step (the audit run's console lines included).
        canary_seed: Seeds the canary patterns (public; random when None). The coins never take a seed.

    Returns:
        The result, also written to ``RUN/audit.json`` as its ``end_to_end`` part (:mod:`pcevolve.audit.results`).

    Raises:
        ValueError: Not a finished image run under add/remove-one, or too few canaries.
        TargetExistsError: ``RUN/audit.json`` holds an end-to-end result and ``overwrite`` is false, or is not an
            audit file (checked before any work).
        RunError: The run folder cannot be read or is in use, or the audit run cannot start (e.g. a data path).
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    folder, config = check_auditable(run_folder, canaries=canaries, overwrite=overwrite)
    try:
        with run_folder_lock(folder.path):
            result = _audit(folder, config, canaries=canaries, alpha=alpha, progress=progress, say=say,
                            canary_seed=secrets.randbits(64) if canary_seed is None else canary_seed)
            write_audit_part(folder.path, AUDIT_PART, result.to_json())
    except RunFolderInUse as error:
        raise RunError(str(error)) from None
    finally:
        folder.seal_secure()  # the audit's private copy, its run and its scores: the owner's alone
    folder.settle_times()  # as after `run` and `evaluate`: no file time outside secure/ says when the audit ended
    say(result.summary())
    return result


def check_auditable(run_folder: str | Path, *, canaries: int = 500,
                    overwrite: bool = False) -> tuple[RunFolder, RunConfig]:
    """What :func:`audit_run` refuses, checked in a second and before any work (the command line calls it before
    the per-mechanism games, which take minutes): the run's folder and config.

    Raises:
        ValueError, TargetExistsError, RunError: As :func:`audit_run`.
    """
    folder, config = _finished_run(Path(run_folder), canaries)
    _check_audit_file(folder, overwrite=overwrite)
    return folder, config


def _check_audit_file(folder: RunFolder, *, overwrite: bool) -> None:
    """Refuse, before any work, to write where the result would replace what the caller did not offer: an
    end-to-end result already in ``RUN/audit.json`` (unless ``overwrite``), or a file of that name that is not an
    audit file (always; the per-mechanism part, if any, is kept)."""
    target = folder.path / AUDIT_FILE
    current = read_audit(folder.path)
    if target.exists() and current is None:
        raise TargetExistsError(f"{target} exists and is not a pcevolve audit file; move it away first")
    if current is not None and AUDIT_PART in current and not overwrite:
        raise TargetExistsError(f"{target} already holds an end-to-end audit; it is replaced only when asked "
                                "(overwrite)")


def _finished_run(path: Path, canaries: int) -> tuple[RunFolder, RunConfig]:
    """The run's folder and config, refused unless it is a finished image run under add/remove-one.

    The config is read as ``pcevolve evaluate`` reads it (today's defaults for settings added since the run), not
    checked against the manifest's hash as a resumed run's is: the audit starts a new run, it continues nothing.
    """
    if canaries < MIN_CANARIES:
        raise ValueError(f"the end-to-end audit needs at least {MIN_CANARIES} canaries, got {canaries}")
    try:
        folder = RunFolder.open(path)
        config = load_config(folder.config_path)
    except (FileNotFoundError, ConfigError) as error:
        raise RunError(str(error)) from None
    if MODALITY_TRAITS[config.data.modality].sample_form != "images":  # its canaries are images
        raise ValueError(f"the end-to-end audit supports image runs so far; this is a {config.data.modality} run "
                         "(its mechanisms can be audited alone)")
    if config.privacy.neighbouring != "add_remove":
        raise ValueError("the end-to-end audit adds or removes canaries, so it tests add/remove-one runs only; this "
                         f"run claims {config.privacy.neighbouring}")
    if not (folder.path / "stages" / "delivery.json").exists():
        raise ValueError(f"{folder.path} is not a finished run (no stages/delivery.json); finish it with "
                         f"`pcevolve run --resume {folder.path}` first")
    classes = len(_class_names(folder))
    if canaries < 2 * classes:
        raise ValueError(f"the end-to-end audit needs at least two canaries per class ({2 * classes}), got {canaries}")
    return folder, config


def _class_names(folder: RunFolder) -> tuple[str, ...]:
    """The run's declared classes, in label order, as its delivered arrays name them (a public file)."""
    with np.load(folder.path / "synthetic.npz", allow_pickle=False) as arrays:
        return tuple(str(name) for name in arrays["class_names"])


def _run_ledger(folder: RunFolder) -> tuple[BudgetLedger, bytes]:
    """The run's ledger, every ε recomputed and its signature checked, and its key."""
    try:
        key = SecureZone(folder).read_key()
        if key is None:
            raise LedgerError(f"{folder.path / 'secure' / 'ledger.key'} is missing, so the ledger cannot be verified")
        return BudgetLedger.load(folder.ledger_path, key=key), key
    except (OSError, ValueError, LedgerError) as error:
        raise RunError(f"cannot read the run's claim: {error}") from None


def _audits_ledger(folder: RunFolder, run: BudgetLedger, key: bytes) -> BudgetLedger:
    """The run's audit ledger (:mod:`pcevolve.pipeline.audit_ledger`), refused before any work when another rerun
    at the run's ε would not fit under its cap."""
    try:
        audits = audit_ledger(folder, run, key)
    except LedgerError as error:
        raise RunError(f"cannot read the audits' ledger: {error}") from None
    after = account((*audits.events(), *run.events()), delta=run.delta, neighbouring=run.neighbouring,
                    pld_discretization=audits.pld_discretization).epsilon
    if after > audits.total_epsilon:
        raise RunError(f"the audits of {folder.path.name} have spent ε = {audits.spent():.4g} on its private data "
                       f"({AUDIT_LEDGER}); another rerun would take them past {audits.total_epsilon:g}, so no "
                       "further end-to-end audit of this run is made")
    return audits


def _audit(folder: RunFolder, config: RunConfig, *, canaries: int, alpha: float, progress: bool,
           say: Callable[[str], None], canary_seed: int) -> EndToEndAudit:
    run_ledger, key = _run_ledger(folder)
    claimed, delta = float(run_ledger.spent()), float(run_ledger.delta)
    audits = _audits_ledger(folder, run_ledger, key)
    class_names = _class_names(folder)
    home = fresh_audit_folder(folder.path / "secure")
    say(f"audit: {canaries} canaries, work in {home.relative_to(folder.path)}")
    images = design_canaries(folder, config, canaries, rng=np.random.default_rng(canary_seed))
    classes = np.arange(canaries) % len(class_names)  # round robin: every class gets its share
    # The coins are the auditor's: from the kernel's CSPRNG, never from a seed the run (or its config) could know.
    included = np.random.default_rng(secrets.randbits(128)).random(canaries) < 0.5
    private = write_audit_private_set(Path(config.data.private), home / "private", images, classes, class_names,
                                      included)
    audit_config = parse_config(with_dotted(config.model_dump(mode="json"),
                                            {"name": "run", "data.private": str(private.resolve())}),
                                source="<end-to-end audit config>")
    say(f"audit: running the pipeline on the private set with {int(included.sum())} of the canaries")
    audit_config, audit_folder, _ = open_run(audit_config, root=home)
    # Every charge of the rerun is admitted by the audits' ledger too, and written there before its noise is drawn.
    outcome = run_pipeline(audit_config, audit_folder, progress=progress, say=say, parent=(audits, AUDIT_STAGE))
    cost = audit_cost(folder, run_ledger, key)
    assert cost is not None  # the rerun charged it
    scores, copied, scored_by, scoring = score_canaries(audit_folder, images, classes, reference=folder,
                                                        progress=progress)
    best, grid = guess_bounds(scores, included, delta=delta, alpha=alpha)
    atomic_write_npz(home / "canaries.npz", images=images, classes=classes, included=included, scores=scores,
                     copied=copied, seed=np.array(canary_seed, dtype=np.uint64))
    per_k = alpha / len(grid)
    return EndToEndAudit(run=folder.path.resolve().name, canaries=canaries, k=best.k, guesses=best.guesses,
                         correct=best.correct, epsilon_lower_bound=best.epsilon,
                         ceiling=one_run_ceiling(canaries, best.guesses, delta=delta, alpha=per_k),
                         highest_ceiling=one_run_ceiling(canaries, grid[-1].guesses, delta=delta, alpha=per_k),
                         alpha=alpha, delta=delta, claimed_epsilon=claimed, audit_run_epsilon=outcome.total_epsilon,
                         audits_epsilon=cost.audits, with_run_epsilon=cost.with_run,
                         dp=outcome.is_dp, copied=int(copied.sum()), scored_by=scored_by, scoring=scoring, grid=grid,
                         folder=home.relative_to(folder.path).as_posix())


def fresh_audit_folder(secure: Path) -> Path:
    """A new, empty folder for this audit: ``secure/audit``, else the first free ``secure/audit-N`` (N ≥ 2).

    Never reuses or empties a folder that exists: an earlier audit (finished or not) stays as it is.
    """
    for number in range(1, 10_000):
        candidate = secure / (AUDIT_FOLDER if number == 1 else f"{AUDIT_FOLDER}-{number}")
        try:
            candidate.mkdir(parents=True, exist_ok=False)  # atomic: two audits never share a folder
        except FileExistsError:
            continue
        return candidate
    raise RunError(f"{secure} holds 9,999 audit folders; remove old ones to audit again")
