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
   each coordinate weighed by its noise variance (:func:`release_scores`); and +inf for a canary found (to a tiny
   pixel distance) in the delivered synthetic set (:func:`copied_canaries`);
5. guesses "in" for the k best and "out" for the k worst scores, for each k of a fixed grid, and bounds ε from the
   number of right guesses (:func:`guess_bounds`, Bonferroni over the grid).

A later audit of the same run goes to ``RUN/secure/audit-2/``, ``audit-3/`` …: nothing already there is touched.

The contract. Trials = ``canaries`` (m): each canary is one Bernoulli(½) trial of membership. If the run, as
implemented, is (ε, δ)-DP under add/remove-one, then with probability at least 1 − ``alpha`` (over the coins and
the run's noise) the reported bound is at most ε (Steinke et al., Theorem 5.2, as implemented in
:func:`pcevolve.privacy.audit.one_run_epsilon`). So ``passed = False`` (bound > the ledger's ε) proves, at
confidence 1 − ``alpha``, that the run leaks more than it claims. ``passed = True`` proves nothing about the claim:
the attack did not refute it. The bound can never exceed the ceiling of m canaries (every guess right), which
grows slowly with m: at m = 500, δ = 1e-5 and 95 % confidence split over the five k of the grid, the ceiling is
4.65 (r = 500 guesses), so an audit of a run claiming ε = 8 — the demo's — **cannot** refute its claim, however
badly it leaked; it can refute claims up to about ε = 4.6 (ε = 1 with 60 canaries: ceiling 2.6).

Measured (2 CPU cores). The demo run ``runs/e8a`` (ε = 8, δ = 1e-5, 500 canaries): 165–255 s wall, nearly all of
it the audit run's pipeline; bounds 1.31 (k = 10: 20 of 20 right, that r's ceiling) and 0.55 (k = 50: 75 of 100)
in two audits; highest ceiling 4.65. Tiny runs at ε = 1 with 60 canaries: a correct run gave 0 in 19 of 21 audits
and at most 0.30; the release without noise 2.2–2.5; a public pool holding the private images 1.4–2.5.

What the audit writes. The ``end_to_end`` part of ``RUN/audit.json`` (:mod:`pcevolve.audit.results`; a
per-mechanism part there is kept): only canary-derived numbers (m, the guesses r, the right ones v, the bound, the
ceiling, ε, δ, the confidence), never replaced unless ``overwrite``; everything else — the private
copy, the audit run, the per-canary scores (``canaries.npz``) — stays under ``RUN/secure/audit*/``. The audit run
is a second DP run on the same private data: ``audit.json`` is post-processing of it, so sharing it beside the
run's own outputs exposes the private data to both runs (up to twice the ε; the ledger cannot see across runs,
docs/privacy.md §9).

Limits: image runs only (tables and texts raise ``ValueError``); add/remove-one runs only (the coins add or
remove a canary). A run that trains with DP-SGD takes its sampling rate q = batch / n from the audit run's own n,
which counts the included canaries: n is treated as public there (docs/privacy.md §2), and the scorer never reads q;
such an encoder differs between the two runs, so the release is scored ``"centred"``, without the run's own release
as a baseline, and the private samples' sums weaken every score (:func:`release_scores`).
With ``search.class_means: votes`` the release gives no per-canary signal (the class means are public centres),
so only copies score.
"""

from __future__ import annotations

import math
import secrets
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.audit.results import AUDIT_FILE, read_audit, write_audit_part
from pcevolve.config import ConfigError, RunConfig, load_config, parse_config, with_dotted
from pcevolve.data import read_image_folder
from pcevolve.io import TargetExistsError, atomic_write_npz
from pcevolve.modalities import MODALITIES
from pcevolve.pipeline.run import RunError, open_run, run_pipeline
from pcevolve.pipeline.run_lock import RunFolderInUse, run_folder_lock
from pcevolve.pipeline.secure_zone import SecureZone
from pcevolve.search.assembly import PUBLIC_FEATURES_FILE, load_public_features
from pcevolve.privacy import BudgetLedger
from pcevolve.privacy.audit import one_run_ceiling, one_run_epsilon
from pcevolve.privacy.clipping import clip_rows
from pcevolve.privacy.ledger import LedgerError
from pcevolve.run_folder import RunFolder
from pcevolve.search.basis import PublicBasis
from pcevolve.search.release import StatisticsRelease

#: The guesses' sizes k (k "in", k "out"), each capped at m // 2; fixed before any score is seen.
GUESS_GRID: tuple[int, ...] = (10, 25, 50, 100, 250)
#: The part of ``RUN/audit.json`` (:mod:`pcevolve.audit.results`) this audit writes.
AUDIT_PART = "end_to_end"
#: The secure folder of the first audit; later ones are ``audit-2``, ``audit-3`` …
AUDIT_FOLDER = "audit"
#: A delivered image within this RMS pixel difference (0–255 scale) of a canary is a copy of it.
COPY_TOLERANCE = 2.0
#: The fewest canaries an audit takes (one guess each way, two canaries per class for the centring).
MIN_CANARIES = 10
_CANARY_PREFIX = "audit-canary-"


@dataclass(frozen=True)
class GuessBound:
    """The guesses of one k: the k best scores said "in", the k worst "out".

    Attributes:
        k: Guesses each way.
        guesses: r = 2k.
        correct: v, the right ones.
        epsilon: The ε these guesses refute (at the audit's per-k confidence); 0 if none.
    """

    k: int
    guesses: int
    correct: int
    epsilon: float

    def to_json(self) -> dict[str, Any]:
        return {"k": self.k, "guesses": self.guesses, "correct": self.correct, "epsilon": self.epsilon}


@dataclass(frozen=True)
class EndToEndAudit:
    """The result of :func:`audit_run`: canary-derived numbers only (no private sample, count or path).

    Attributes:
        run: The audited run folder's name (its last path part).
        canaries: m, the trials.
        k / guesses / correct: The k of the grid that gave the largest bound, its r = 2k and its v.
        epsilon_lower_bound: The largest ε any k of the grid refutes (0: none).
        ceiling: The bound r guesses would give if every one were right.
        alpha: 1 − confidence, split evenly over ``grid`` (Bonferroni).
        delta: The run's δ, at which the bound holds.
        claimed_epsilon: The audited run's ε (its ledger's total).
        audit_run_epsilon: The ε the audit run's own ledger spent (the same claim, on the private set + canaries).
        dp: Whether the audit run drew secure noise (False: reproducible noise, not DP by its own label).
        copied: Canaries found in the audit run's delivered set (each was in: only private data leads there).
        scored_by: The released statistics the scores read, and ``"copies"``.
        scoring: How the release scored the canaries: ``"difference"`` (less the audited run's own release),
            ``"centred"`` or ``"none"`` (:func:`release_scores`).
        highest_ceiling: The ceiling of the largest k of the grid: the most this audit could ever show.
        grid: Every k's guesses and bound.
        folder: The audit's secure folder, relative to the run folder (``secure/audit``).
    """

    run: str
    canaries: int
    k: int
    guesses: int
    correct: int
    epsilon_lower_bound: float
    ceiling: float
    alpha: float
    delta: float
    claimed_epsilon: float
    audit_run_epsilon: float
    dp: bool
    copied: int
    scored_by: tuple[str, ...]
    scoring: str
    highest_ceiling: float
    grid: tuple[GuessBound, ...] = field(default_factory=tuple)
    folder: str = f"secure/{AUDIT_FOLDER}"

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    @property
    def passed(self) -> bool:
        """The bound stays at or below the claim; False proves a leak at :attr:`confidence`."""
        return self.epsilon_lower_bound <= self.claimed_epsilon

    def to_json(self) -> dict[str, Any]:
        """Plain, finite numbers: the ``end_to_end`` part of ``audit.json``."""
        return {"run": self.run, "canaries": self.canaries, "m": self.canaries,
                "k": self.k, "r": self.guesses, "v": self.correct, "guesses": self.guesses, "correct": self.correct,
                "epsilon_lower_bound": self.epsilon_lower_bound, "ceiling": self.ceiling,
                "confidence": self.confidence, "alpha": self.alpha,
                "delta": self.delta, "claimed_epsilon": self.claimed_epsilon,
                "audit_run_epsilon": self.audit_run_epsilon, "dp": self.dp, "passed": self.passed,
                "copied": self.copied, "scored_by": list(self.scored_by), "scoring": self.scoring,
                "highest_ceiling": self.highest_ceiling,
                "grid": [bound.to_json() for bound in self.grid], "folder": self.folder}

    def summary(self) -> str:
        """One paragraph for a person: what was run, what was found, what it means."""
        verdict = (f"at or below the claimed ε = {self.claimed_epsilon:.3g}: the claim was not refuted (an audit can "
                   "only refute, never prove, a claim)" if self.passed else
                   f"ABOVE the claimed ε = {self.claimed_epsilon:.3g}: with {self.confidence:.0%} confidence the run "
                   "leaks more than its ledger says")
        reach = ("" if self.highest_ceiling > self.claimed_epsilon else
                 f" With {self.canaries} canaries no result could exceed {self.highest_ceiling:.2f}, so this audit "
                 "could not have refuted the claim, however the run leaked: that needs more canaries or a smaller ε.")
        copies = f" {self.copied} canaries were found copied in the delivered set." if self.copied else ""
        return (f"End-to-end audit of run {self.run}: {self.canaries} canary images, each put into a second run's "
                f"private set by a fair coin, and guessed from what that run ships ({', '.join(self.scored_by)}). "
                f"The best of the guess sizes, {self.guesses} guesses with {self.correct} right, gives a lower bound "
                f"of ε ≥ {self.epsilon_lower_bound:.3g} at δ = {self.delta:g} ({self.confidence:.0%} confidence, "
                f"ceiling {self.ceiling:.3g}), {verdict}.{copies}{reach}")


# --------------------------------------------------------------------------- the audit


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
    folder, config = _finished_run(Path(run_folder), canaries)
    _check_audit_file(folder, overwrite=overwrite)
    try:
        with run_folder_lock(folder.path):
            result = _audit(folder, config, canaries=canaries, alpha=alpha, progress=progress, say=say,
                            canary_seed=secrets.randbits(64) if canary_seed is None else canary_seed)
            write_audit_part(folder.path, AUDIT_PART, result.to_json())
    except RunFolderInUse as error:
        raise RunError(str(error)) from None
    folder.settle_times()  # as after `run` and `evaluate`: no file time outside secure/ says when the audit ended
    say(result.summary())
    return result


def _check_audit_file(folder: RunFolder, *, overwrite: bool) -> None:
    """Refuse, before any work, to write where the result would replace what the caller did not offer: an
    end-to-end result already in ``RUN/audit.json`` (unless ``overwrite``), or a file of that name that is not an
    audit file (always; the per-mechanism part, if any, is kept)."""
    target = folder.path / AUDIT_FILE
    current = read_audit(folder.path)
    if target.exists() and current is None:
        raise TargetExistsError(f"{target} exists and is not a pcevolve audit file; move it away first")
    if current is not None and AUDIT_PART in current and not overwrite:
        raise TargetExistsError(f"{target} already holds an end-to-end audit; pass overwrite=True (--overwrite) to "
                                "replace it")


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
    if config.data.modality != "image":
        raise ValueError("the end-to-end audit supports image runs so far")
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


def _claimed_epsilon(folder: RunFolder) -> tuple[float, float]:
    """(total ε spent, δ) from the run's ledger, every ε recomputed and its signature checked with its key."""
    try:
        key = SecureZone(folder).read_key()
        if key is None:
            raise LedgerError(f"{folder.path / 'secure' / 'ledger.key'} is missing, so the ledger cannot be verified")
        ledger = BudgetLedger.load(folder.ledger_path, key=key)
    except (OSError, ValueError, LedgerError) as error:
        raise RunError(f"cannot read the run's claim: {error}") from None
    return float(ledger.spent()), float(ledger.delta)


def _audit(folder: RunFolder, config: RunConfig, *, canaries: int, alpha: float, progress: bool,
           say: Callable[[str], None], canary_seed: int) -> EndToEndAudit:
    claimed, delta = _claimed_epsilon(folder)
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
    outcome = run_pipeline(audit_config, audit_folder, progress=progress, say=say)
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


# --------------------------------------------------------------------------- canaries


def design_canaries(folder: RunFolder, config: RunConfig, count: int, *, rng: np.random.Generator) -> np.ndarray:
    """``count`` distinct canary images in the run's image shape (uint8), from public inputs and ``rng`` only.

    Each is aimed along a random direction of the run's public basis (in its released directions): through the
    encoder's pixel view, the image's pixels follow the positive part of that direction's pixel component, so
    that the canary's reduced features point that way, at about the clip radius or beyond (measured: 0.9–1.3 C
    on the demo and the tiny test runs, against at most 0.72 C for noise images, whose features also all look
    alike).
    An encoder without a pixel view gets smooth random black-and-white shapes instead.

    Raises:
        ValueError: Two canaries came out equal, or one (near) equal to a public or private image (the patterns are
            continuous draws: practically never; checked because "a delivered copy means it was in" rests on it).
    """
    modality = MODALITIES.get_part(config.data.modality)
    shape = tuple(int(s) for s in modality.layout(config.data))
    meta = getattr(modality.load_encoder(folder.path / "encoder"), "meta", None)
    basis = load_public_features(folder).basis
    released = StatisticsRelease.load(folder.path / "release.npz").dim
    if meta is not None and meta.pixel_side > 0:
        images = np.stack([_aimed_canary(basis, meta.feature_dim, meta.pixel_side, meta.pixel_channels, released,
                                         shape, rng) for _ in range(count)])
    else:
        images = np.stack([_shape_canary(shape, rng) for _ in range(count)])
    if len({image.tobytes() for image in images}) != count:
        raise ValueError("two canaries came out equal; run the audit again (another canary seed)")
    for role, samples in (("public", modality.read_public(config.data, shape).samples),
                          ("private", modality.read_private(config.data, shape).samples)):
        if copied_canaries(images, samples).any():
            raise ValueError(f"a canary came out (nearly) equal to a {role} image; run the audit again (another "
                             "canary seed)")
    return images


def _aimed_canary(basis: PublicBasis, projection_dim: int, side: int, channels: int, released: int,
                  shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """One image whose pixel view follows the positive part of a random released basis direction."""
    weights = np.zeros(basis.dim)
    weights[:released] = rng.normal(size=released)
    direction = basis.directions @ (weights / np.linalg.norm(weights))
    pixels = direction[projection_dim:projection_dim + channels * side * side].reshape(channels, side, side)
    if pixels.max() <= 0:  # the direction's pixels are all dark: its opposite has the same norm
        pixels = -pixels
    image = np.clip(pixels / pixels.max(), 0.0, 1.0).transpose(1, 2, 0)  # (side, side, channels) in [0, 1]
    return _to_shape(image, shape)


def _shape_canary(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Smooth random black-and-white shapes: a coarse random field, upsampled and cut at its median."""
    channels = 1 if len(shape) == 2 else shape[2]
    coarse = rng.normal(size=(4, 4, channels))
    smooth = _upsample(coarse, shape[0], shape[1])
    image = (smooth > np.median(smooth, axis=(0, 1))).astype(np.float64)
    return _to_shape(image, shape)


def _upsample(values: np.ndarray, height: int, width: int) -> np.ndarray:
    """(h, w, c) → (height, width, c) by bilinear interpolation (a fixed public transform)."""
    h, w, _ = values.shape
    rows, cols = np.linspace(0, h - 1, height), np.linspace(0, w - 1, width)
    r0, c0 = np.floor(rows).astype(int), np.floor(cols).astype(int)
    r1, c1 = np.minimum(r0 + 1, h - 1), np.minimum(c0 + 1, w - 1)
    fr, fc = (rows - r0)[:, None, None], (cols - c0)[None, :, None]
    top = values[r0][:, c0] * (1 - fc) + values[r0][:, c1] * fc
    bottom = values[r1][:, c0] * (1 - fc) + values[r1][:, c1] * fc
    return top * (1 - fr) + bottom * fr


def _to_shape(image: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """(side, side, channels) in [0, 1] → uint8 in the run's image shape (nearest-neighbour resize: the pixel view
    averages the image back down to ``side``, so blocks keep its pattern)."""
    rows = np.minimum((np.arange(shape[0]) * image.shape[0]) // shape[0], image.shape[0] - 1)
    cols = np.minimum((np.arange(shape[1]) * image.shape[1]) // shape[1], image.shape[1] - 1)
    resized = image[rows][:, cols]
    resized = resized[:, :, 0] if len(shape) == 2 else np.broadcast_to(resized, shape)
    return np.round(resized * 255.0).astype(np.uint8)


def write_audit_private_set(source: Path, target: Path, images: np.ndarray, classes: np.ndarray,
                            class_names: Sequence[str], included: np.ndarray) -> Path:
    """The audit's private set at ``target``: a copy of the run's private class folders (file for file) plus the
    included canaries as PNGs named ``audit-canary-NNNN.png`` in their classes' folders.

    Raises:
        ValueError: ``target`` exists, or a private file already has a canary's name.
    """
    from PIL import Image

    if target.exists():
        raise ValueError(f"{target} exists; an audit writes its private set into a new folder")
    shutil.copytree(source, target)  # the private files as they are: the audit run reads what the run read
    for index in np.flatnonzero(included):
        folder = target / class_names[int(classes[index])]
        folder.mkdir(exist_ok=True)  # a declared class may have no private folder
        path = folder / f"{_CANARY_PREFIX}{index:04d}.png"
        if path.exists():
            raise ValueError(f"{source} already holds a file named {path.name}; the audit cannot add its canary")
        Image.fromarray(images[index]).save(path)  # uint8 (H, W) is read as grey, (H, W, 3) as colour
    return target


# --------------------------------------------------------------------------- scores


def score_canaries(audit_folder: RunFolder, images: np.ndarray, classes: np.ndarray, *,
                   reference: RunFolder | None = None,
                   progress: bool = False) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], str]:
    """Each canary's score from what the audit run ships (higher: more likely in), which canaries it delivered,
    what the scores read and how (:func:`release_scores`' method).

    Reads the audit run's encoder, public basis, ``release.npz`` and delivered set only, never its ``secure/``; and
    the audited run's ``release.npz`` as the reference of :func:`release_scores` when ``reference`` is given and
    both runs encode alike (:func:`same_public_side`).
    """
    modality = MODALITIES.get_part("image")
    encoder = modality.load_encoder(audit_folder.path / "encoder")
    _, features = encoder.encode_both(images, batch_size=256, progress=progress)
    coordinates = load_public_features(audit_folder).basis.reduce(features)
    release = StatisticsRelease.load(audit_folder.path / "release.npz")
    baseline = None
    if reference is not None and same_public_side(audit_folder, reference):
        baseline = StatisticsRelease.load(reference.path / "release.npz")
    scores, components, method = release_scores(coordinates, classes, release, reference=baseline)
    delivered = read_image_folder(audit_folder.path / modality.delivered_name, size=images.shape[1],
                                  mode="L" if images.ndim == 3 else "RGB", min_per_class=0).samples
    copied = copied_canaries(images, delivered)
    return np.where(copied, np.inf, scores), copied, (*components, "copies"), method


def same_public_side(first: RunFolder, second: RunFolder) -> bool:
    """Whether two runs encode and reduce samples identically: byte-equal encoder files and public features.

    True for a run whose encoder is trained on public data only (its training is seeded and the audit run repeats
    it); False when DP-SGD fine-tuned either encoder on its own private set.
    """
    paths = [Path(PUBLIC_FEATURES_FILE), *(p.relative_to(first.path) for p in (first.path / "encoder").iterdir())]
    return all((second.path / p).is_file() and (first.path / p).read_bytes() == (second.path / p).read_bytes()
               for p in paths)


#: How the release's scores were computed (:func:`release_scores`).
DIFFERENCE, CENTRED, NO_SIGNAL = "difference", "centred", "none"


def release_scores(coordinates: np.ndarray, classes: np.ndarray, release: StatisticsRelease, *,
                   reference: StatisticsRelease | None = None) -> tuple[np.ndarray, tuple[str, ...], str]:
    """Each canary's score in the released class statistics, the components read, and the method.

    A canary j of class k adds v_c(j) to each released component c of class k — its clipped coordinates to the
    sum, their outer product to the second moment, its random Fourier features to the RFF sum — exactly as the
    release computes them (:class:`~pcevolve.privacy.statistics.ClassStatisticsRelease`), and the release adds
    N(0, s_c²) to every coordinate. Per class, with V the canaries' contributions (one row each) and R the released
    values, R = P + Vᵀb + noise: P what the private samples put there, b the coins.

    * ``"difference"``, when ``reference`` — the audited run's own release, made on the same private samples
      without canaries — released every component in the same directions, clip radius and random features: R − R_ref
      cancels P, leaving Vᵀb + noise of variance s_c² + s_ref,c². The score is the posterior mean of b − ½ under
      independent fair coins (prior variance ¼), with the noise scale estimated from the least-squares residual
      (empirical Bayes): at the claimed noise this is about the likelihood-ratio projection of the residual onto
      each canary's contribution; with (almost) no noise, where projections would suffer from the other canaries'
      overlap, it tends to the least-squares solution, which recovers b exactly.
    * ``"centred"``, otherwise (another encoder, another choice of directions): Σ_c ⟨R_c(k) − ½ Σ_i v_c(i),
      v_c(j) − v̄_c⟩ / s_c², the likelihood-ratio projection of the release, less the canaries' expected part, on
      what canary j adds beyond its class's average canary. Centring removes what a class's canaries share, which
      the unknown P would shift by a different amount in every class; P still weighs on every score.
    * ``"none"``, after a vote (the class means are public centres): every score is 0.

    The count is left out: every canary of a class adds the same 1 to it. A function of the canaries (all of them,
    in or out), the release and the reference only, none of which the coins decide: the guesses are
    post-processing of the run's output.
    """
    scores = np.zeros(len(coordinates))
    if release.vote is not None:
        return scores, (), NO_SIGNAL
    blocks = _components(coordinates, release)
    baselines = {name: _reference_component(name, release, reference) for name in blocks}
    if reference is not None and all(baselines[name] is not None and baselines[name][0].shape == released.shape
                                     for name, (_, released, _) in blocks.items()):
        differences = {name: (mine, released - baselines[name][0], math.hypot(std, baselines[name][1]))
                       for name, (mine, released, std) in blocks.items()}
        return _posterior_scores(differences, classes), tuple(blocks), DIFFERENCE
    return _centred_scores(blocks, classes), tuple(blocks), CENTRED


def _components(coordinates: np.ndarray,
                release: StatisticsRelease) -> dict[str, tuple[np.ndarray, np.ndarray, float]]:
    """Per released component with noise (count excepted): each canary's contribution (m, D), the released values
    (K, D), in the coordinates the noise was added to, and the noise std."""
    statistics, dim = release.statistics, release.dim
    z = np.asarray(coordinates, dtype=np.float64)[:, :dim]
    clipped = clip_rows(z, release.clip_norm)
    parts = {"sum": (clipped, np.asarray(statistics.sums)[:, :dim])}
    if statistics.second_moments is not None:
        parts["second_moment"] = _second_moment_parts(clipped, np.asarray(statistics.second_moments))
    if statistics.rff_sums is not None and release.rff.dim == dim:
        parts["rff"] = (release.rff.transform(z), np.asarray(statistics.rff_sums))
    stds = {name: float(statistics.noise_stds.get(name, 0.0)) for name in parts}
    return {name: (*parts[name], stds[name]) for name in parts if stds[name] > 0}


def _posterior_scores(blocks: dict[str, tuple[np.ndarray, np.ndarray, float]], classes: np.ndarray) -> np.ndarray:
    """Per class: E[b − ½ | R − R_ref] with b_i independent of prior variance ¼ (a Gaussian stand-in for a fair
    coin) and the whitened noise's variance τ² estimated from the least-squares residual (1 when the canaries
    outnumber the released coordinates: no residual left to estimate it from)."""
    scores = np.zeros(len(classes))
    for k in np.unique(classes):
        members = np.flatnonzero(classes == k)
        # Whitened: every coordinate divided by its noise std, so the claimed noise is N(0, 1) everywhere.
        design = np.concatenate([mine[members] / std for mine, _, std in blocks.values()], axis=1)  # (n, D)
        target = np.concatenate([(released[k] - 0.5 * mine[members].sum(axis=0)) / std
                                 for mine, released, std in blocks.values()])  # (D,) = designᵀ(b − ½) + noise
        fitted, _, rank, _ = np.linalg.lstsq(design.T, target, rcond=None)
        left = design.shape[1] - rank
        tau2 = float(np.sum((target - design.T @ fitted) ** 2)) / left if left > 0 else 1.0
        gram = design @ design.T + 4.0 * max(tau2, 1e-12) * np.eye(len(members))
        scores[members] = np.linalg.solve(gram, design @ target)
    return scores


def _centred_scores(blocks: dict[str, tuple[np.ndarray, np.ndarray, float]], classes: np.ndarray) -> np.ndarray:
    """Per class: Σ_c ⟨R_c − ½ Σ_i v_c(i), v_c(j) − v̄_c⟩ / s_c² (see :func:`release_scores`)."""
    scores = np.zeros(len(classes))
    for mine_all, released, std in blocks.values():
        for k in np.unique(classes):
            members = np.flatnonzero(classes == k)
            mine = mine_all[members]
            residual = released[k] - 0.5 * mine.sum(axis=0)
            scores[members] += (mine - mine.mean(axis=0)) @ residual / std**2
    return scores


def _reference_component(name: str, release: StatisticsRelease,
                         reference: StatisticsRelease | None) -> tuple[np.ndarray, float] | None:
    """The reference's values of component ``name`` (as :func:`_components` lays them out) and their noise std,
    when it released that component in the same directions, clip radius and random features as ``release``."""
    if reference is None or reference.vote is not None:
        return None
    same = (reference.dim == release.dim and math.isclose(reference.clip_norm, release.clip_norm, rel_tol=1e-12)
            and np.shape(reference.statistics.counts) == np.shape(release.statistics.counts))
    if name == "rff":
        same = same and np.array_equal(reference.rff.frequencies, release.rff.frequencies)
    values = {"sum": reference.statistics.sums, "second_moment": reference.statistics.second_moments,
              "rff": reference.statistics.rff_sums}[name]
    std = float(reference.statistics.noise_stds.get(name, 0.0))
    if not same or values is None or not std > 0:
        return None
    values = np.asarray(values)
    if name == "sum":
        return values[:, :release.dim], std
    if name == "second_moment":
        return _second_moment_parts(np.zeros((0, release.dim)), values)[1], std
    return values, std


def _second_moment_parts(clipped: np.ndarray, released: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each canary's x xᵀ and the released Σ x xᵀ as the coordinates the noise was added to: the upper triangle
    of a full matrix (its lower half is a copy, not fresh noise), or the diagonal form as it is."""
    if released.ndim == 2:
        return clipped * clipped, released
    rows, cols = np.triu_indices(clipped.shape[1])
    return clipped[:, rows] * clipped[:, cols], released[:, rows, cols]


def copied_canaries(canaries: np.ndarray, delivered: np.ndarray, *, tolerance: float = COPY_TOLERANCE) -> np.ndarray:
    """(m,) bool: whether some delivered image is within ``tolerance`` RMS pixel difference of each canary.

    An out canary is in no input of the audit run but the auditor's, so a copy of it cannot come from public
    data: a copy means the canary was in.
    """
    found = np.zeros(len(canaries), dtype=bool)
    if len(delivered) == 0:
        return found
    a = np.asarray(canaries, dtype=np.float64).reshape(len(canaries), -1)
    b = np.asarray(delivered, dtype=np.float64).reshape(len(delivered), -1)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"canaries and delivered images differ in shape: {canaries.shape[1:]} and "
                         f"{delivered.shape[1:]}")
    squared_b = np.einsum("ij,ij->i", b, b)
    for start in range(0, len(a), 256):  # bounds memory at 256 × delivered distances
        block = a[start:start + 256]
        squared = np.einsum("ij,ij->i", block, block)[:, None] + squared_b[None, :] - 2.0 * block @ b.T
        found[start:start + 256] = np.min(squared, axis=1) <= tolerance**2 * a.shape[1]
    return found


# --------------------------------------------------------------------------- guesses and the bound


def guess_grid(canaries: int) -> tuple[int, ...]:
    """The k of :data:`GUESS_GRID`, each capped at m // 2 (the k best and k worst must not overlap)."""
    return tuple(sorted({min(k, canaries // 2) for k in GUESS_GRID}))


def guess_bounds(scores: np.ndarray, included: np.ndarray, *, delta: float,
                 alpha: float = 0.05) -> tuple[GuessBound, tuple[GuessBound, ...]]:
    """For each k of :func:`guess_grid`: the k highest scores guessed in, the k lowest out, and the ε their right
    guesses refute at confidence 1 − alpha / (number of k) — so that the largest, returned first, holds at
    confidence 1 − ``alpha`` (Bonferroni). Ties are ordered by canary index, which no coin decides.

    Args:
        scores: (m,) one per canary, higher meaning "more likely in" (+inf allowed).
        included: (m,) the coins: whether each canary was in.
        delta: The δ of the audited claim.
    """
    scores = np.asarray(scores, dtype=np.float64)
    included = np.asarray(included, dtype=bool)
    if scores.shape != included.shape or scores.ndim != 1:
        raise ValueError(f"need one score per canary, got {scores.shape} and {included.shape}")
    if np.isnan(scores).any():
        raise ValueError("scores must not be NaN")
    canaries = len(scores)
    grid = guess_grid(canaries)
    if not grid or grid[0] < 1:
        raise ValueError(f"need at least 2 canaries, got {canaries}")
    order = np.argsort(-scores, kind="stable")  # best first
    bounds = []
    for k in grid:
        correct = int(included[order[:k]].sum() + (~included[order[-k:]]).sum())
        epsilon = one_run_epsilon(canaries, 2 * k, correct, delta=delta, alpha=alpha / len(grid))
        bounds.append(GuessBound(k=k, guesses=2 * k, correct=correct, epsilon=epsilon))
    best = max(bounds, key=lambda bound: (bound.epsilon, bound.correct / bound.guesses))
    return best, tuple(bounds)
