"""``pcevolve run``: read the data, make the ledger, then run the stages of :mod:`pcevolve.pipeline.stages` in
order, resumable after a kill.

Randomness (``pcevolve.randomness``): every mechanism draws from the secure source unless the
config asks for reproducible noise (then the run is labelled not DP everywhere); every public
choice comes from its own seeded stream, never from the noise's generator.

Budget: the ledger (signed with a key in ``secure/``) is made right after the data is read, before
the first charge, with stage caps scaled from ``privacy.split`` so that the accountant's total over
the planned releases is the total ε (``pipeline.plan.stage_caps``).

Resume: a run that has (or had) a ledger refuses to continue without it intact. Each stage writes
its outputs and then a marker ``stages/<name>.json``; a resumed run loads finished stages instead of
recomputing them (:func:`pcevolve.pipeline.stage.run_stage`). DP fine-tuning continues from its last paid epoch
(an epoch paid but interrupted is re-run under its charge with reproducible noise and counted as spent with
secure noise, see ``privacy/dpsgd_resume.py``), and the search from its last generation checkpoint, so with
reproducible noise the delivered set equals an uninterrupted run's. A DP decoder resumes the same way.
The release interrupted between its first charge and its marker cannot be resumed: its budget is spent
and re-running it would pay again, so the run stops with a message saying so (start a new run).

Nothing a run writes outside ``secure/`` holds a private number that did not pass through a
mechanism: no exact counts, no private losses, no time a private stage took.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pcevolve.config import RunConfig, config_hash, load_config
from pcevolve.data import LabeledDataset, delta_note, pool_overlap, pool_overlap_warning, small_classes_note
from pcevolve.executors import use_executor
from pcevolve.io import read_json
from pcevolve.modalities import MODALITIES, Modality
from pcevolve.pipeline.plan import plan_budget, stage_caps
from pcevolve.pipeline.run_lock import LOCK_NAME, RunFolderInUse, run_folder_lock
from pcevolve.pipeline.secure_zone import SecureZone, SecureZoneError
from pcevolve.pipeline.stage import RunContext, StageInterrupted, run_stage
from pcevolve.pipeline.stage_lists import stages_for
from pcevolve.pipeline.sweep_member import membership
from pcevolve.privacy import BudgetLedger
from pcevolve.privacy.calibration import delta_advice
from pcevolve.privacy.cluster_vote import MAX_CLASSES as MAX_VOTE_CLASSES
from pcevolve.randomness import run_randomness
from pcevolve.run_folder import RunFolder

logger = logging.getLogger(__name__)


class RunError(Exception):
    """A run cannot start or continue; the message says why and what to do."""


@dataclass
class RunOutcome:
    """What the summary screen shows.

    ``seconds`` holds only the stages that do not read private data; the others' times are in
    ``secure/timings.json`` (named in ``private_stages``).
    """

    folder: Path
    class_names: tuple[str, ...]
    synthetic_counts: list[int]
    seconds: dict[str, float] = field(default_factory=dict)
    delivered: Path | None = None  # the synthetic set in the input's format (a folder of images, a CSV)
    noun: str = "sample"  # what one sample is called ("image", "row")
    private_stages: tuple[str, ...] = ()
    epsilon: dict[str, float] = field(default_factory=dict)
    total_epsilon: float = 0.0
    delta: float = 0.0
    is_dp: bool = True
    best_fitness: float = float("nan")
    baseline_fitness: float = float("nan")
    reencode_agreement: float = float("nan")
    generations: int = 0
    made_by: str | None = None  # without a public pool: how the delivered samples were made (None: searched)
    pool: str | None = None  # with a retrieval decoder: how much of the public pool looked like the task


def open_run(config: RunConfig | None, *, root: str | Path = "runs", resume: str | Path | None = None,
             write_inputs: Callable[[RunFolder], None] | None = None) -> tuple[RunConfig, RunFolder, bool]:
    """The run's config and folder: a new folder ``root/config.name``, or the one to resume.

    ``write_inputs`` (a new run only) writes what the new folder holds from the start — the Python API's in-memory
    data, into ``secure/input/``; a sweep member's membership file — into the folder while it is still built under a
    temporary name (:meth:`RunFolder.create`): the run folder appears with them or not at all, so a killed start
    never leaves a folder that could be resumed without them. Paths the config names inside the new folder are not
    required to exist before. If it fails, nothing is left (nothing was spent).

    Raises:
        RunError: The folder exists without ``--resume``, or the config differs from the one
            the folder was started with.
    """
    if resume is not None:
        try:
            folder = RunFolder.open(resume)
        except FileNotFoundError as error:
            raise RunError(str(error)) from error
        saved = _started_config(folder)
        if config is not None and config_hash(config) != config_hash(saved):
            raise RunError(f"{folder.path} was started with another configuration; resume it without a config "
                           "or start a new run with another name")
        if SecureZone(folder).has_ledger():
            _open_ledger(folder, saved)  # refuses now, before any data is read, if the ledger cannot be trusted
        return saved, folder, True
    assert config is not None
    target = Path(root) / config.name
    inside = target.resolve() if write_inputs is not None else None  # paths the new folder will hold
    missing = [f"data.{key}: {path} does not exist" for key, path in
               (("private", config.data.private), ("public", config.data.public))
               if path is not None and not Path(path).exists()
               and not (inside is not None and Path(path).resolve().is_relative_to(inside))]
    if missing:  # before the run folder exists, so a wrong path leaves nothing behind
        raise RunError("; ".join(missing) + " (relative paths are read from the current folder)")
    if target.exists():
        raise RunError(f"run folder {target} already exists: resume it with `pcevolve run --resume {target}` "
                       "or choose another `name:` in the config")
    folder = RunFolder.create(root, config, prepare=write_inputs)
    return config, folder, False


def finished_run(run_dir: str | Path) -> tuple[RunConfig, RunOutcome]:
    """The config and outcome of a finished run, read without running anything: no stage, no lock, no data read,
    nothing written, no budget spent (``Synthesizer.load``). The ledger is verified against its key.

    Raises:
        RunError: Not a run folder pcevolve started, a ledger that cannot be trusted, or a run not finished.
    """
    config, folder, _ = open_run(None, resume=run_dir)
    modality = MODALITIES.get_part(config.data.modality)
    marker, arrays = folder.path / "stages" / "delivery.json", folder.path / "synthetic.npz"
    if not (marker.is_file() and arrays.is_file() and (folder.path / modality.delivered_name).exists()):
        raise RunError(f"{folder.path} has not finished (no delivered synthetic set); finish it with "
                       f"Synthesizer.resume({str(folder.path)!r}).fit() or `pcevolve run --resume {folder.path}`")
    ledger = _open_ledger(folder, config)
    delivery = read_json(marker)
    with np.load(arrays, allow_pickle=False) as saved:
        class_names = tuple(str(name) for name in saved["class_names"])
    outcome = RunOutcome(folder=folder.path, class_names=class_names, synthetic_counts=list(delivery["counts"]),
                         delivered=folder.path / delivery["delivered"], noun=modality.noun,
                         epsilon={stage: ledger.spent(stage) for stage in ledger.stages},
                         total_epsilon=ledger.spent(), delta=ledger.delta, is_dp=ledger.is_dp,
                         pool=delivery.get("pool"))
    return config, outcome


def _started_config(folder: RunFolder) -> RunConfig:
    """The config a run folder was started with, if pcevolve started it: its manifest must name the hash of its
    config.yaml. A folder made by hand or by another tool, or whose config was edited since, is refused: resuming
    it would read whatever data its config points at (the demo's, for a stub) under a ledger it never had.

    Raises:
        RunError: Naming the folder and what is wrong.
    """
    not_ours = f"{folder.path} was not started by `pcevolve run`"
    try:
        manifest = folder.manifest()
    except (OSError, ValueError):
        raise RunError(f"{not_ours}: its manifest.json is not readable JSON; start a new run instead") from None
    if not (isinstance(manifest, dict) and isinstance(manifest.get("config_hash"), str)
            and isinstance(manifest.get("pcevolve_version"), str)):
        raise RunError(f"{not_ours}: its manifest.json lacks the config hash and version a run writes; start a new "
                       "run instead")
    if not folder.config_path.is_file():
        raise RunError(f"{not_ours} or lost its config.yaml; start a new run instead")
    saved = load_config(folder.config_path)
    if config_hash(saved) != manifest["config_hash"]:
        raise RunError(f"{folder.config_path} is not the configuration {folder.path} was started with (its hash "
                       "differs from manifest.json's): a run's settings cannot change once it has started; restore "
                       "the file, or start a new run with the new settings")
    return saved


def _open_ledger(folder: RunFolder, config: RunConfig) -> BudgetLedger:
    try:
        return SecureZone(folder).open_ledger(config.privacy)
    except SecureZoneError as error:
        raise RunError(str(error)) from None


def _ledger(folder: RunFolder, config: RunConfig, num_samples: int) -> BudgetLedger:
    """The run's ledger: reopened and verified if it has one, else made now, before the first charge, with stage
    caps scaled from ``privacy.split`` so that the accountant's total over the planned releases is the total ε."""
    secure = SecureZone(folder)
    if secure.has_ledger():
        return _open_ledger(folder, config)
    caps = stage_caps(config, num_samples)
    ledger = secure.create_ledger(config.privacy, caps)
    folder.record("budget", caps=caps, split=dict(config.privacy.split), epsilon=config.privacy.epsilon,
                  planned_total=plan_budget(config, num_samples, caps=caps).total.epsilon)
    return ledger


def _load_data(config: RunConfig, modality: Modality,
               say: Callable[[str], None]) -> tuple[object, LabeledDataset, np.ndarray | None]:
    """The sample layout (from the config and public files), the private set read against it and the declared
    classes, the public pool.

    A private sample that is also in the pool is a warning on the console, never a refusal: the pool must be chosen
    without looking at the private set, and a refusal (or the cleaning it asks for) would depend on the private data.
    """
    data = config.data
    layout = modality.layout(data)
    private = modality.read_private(data, layout)
    public = modality.read_public(data, layout) if data.public else None
    if public is None:
        return layout, private, None
    warning = pool_overlap_warning(pool_overlap(private, public), modality.noun)
    if warning:
        say(warning.prefixed("warning: "))
    return layout, private, public.samples


def _check_data(config: RunConfig, private: LabeledDataset, public: np.ndarray | None, noun: str) -> None:
    """What the data must satisfy for every stage to run, checked before any budget is spent.

    Only public quantities decide here (the pool's size, the declared classes, the config): one private record
    more or less never turns a run that parsed into an error.
    """
    # The classes are the config's (data.classes) or, for images, the class folders: both declared by the user.
    classes = len(private.class_names)
    if classes < 2:
        raise RunError(f"{config.data.private} has one class folder; a labelled synthetic set needs at least two "
                       "classes (declare them with data.classes; a class may have no images)")
    if not config.makes_samples:  # a run without a pool: the config's checks asked for all it needs
        _check_pool(config, public, classes, noun)
    if config.trains_with_dp_sgd and len(private.labels) == 0:
        # DP-SGD's sampling rate is batch / n, with n treated as public (docs/privacy.md §2): it has none to use.
        raise RunError(f"{config.data.private} holds no {noun}s, and DP-SGD training (privacy.split.representation "
                       "or decoder.training) samples its batches from them; give that stage no share")


def _check_pool(config: RunConfig, public: np.ndarray | None, classes: int, noun: str) -> None:
    """What the public pool must hold for the search (its size, against the config's basis and vote)."""
    search = config.search
    if public is None or len(public) < 2:
        raise RunError(f"the public pool {config.data.public} holds {0 if public is None else len(public)} "
                       f"{noun}(s); the search's feature basis needs at least two (and DP training needs public "
                       "negatives)")
    if len(public) <= search.basis_dim:
        raise RunError(f"the public pool {config.data.public} holds {len(public)} {noun}s, not more than "
                       f"search.basis_dim = {search.basis_dim}; give a larger pool or lower basis_dim")
    if search.class_means == "votes":
        if classes > MAX_VOTE_CLASSES:
            raise RunError(f"{config.data.private} has {classes} class folders; search.class_means: votes takes "
                           f"at most {MAX_VOTE_CLASSES} (set it to sums)")
        clusters = search.vote_clusters(classes)
        if len(public) < clusters:
            raise RunError(f"the public pool {config.data.public} holds {len(public)} {noun}s, fewer than the "
                           f"{clusters} clusters the classes vote among; give a larger pool or lower "
                           "search.vote_clusters_per_class")


def run_pipeline(config: RunConfig, folder: RunFolder, *, progress: bool = False,
                 say: Callable[[str], None] = lambda _: None,
                 parent: tuple[BudgetLedger, str] | None = None, adopt_from: Path | None = None) -> RunOutcome:
    """Run every stage that has no marker yet in ``folder`` and deliver the synthetic set.

    Holds ``folder/run.lock`` throughout (a second process on the folder is refused). ``parent``: a ledger and its
    stage that every charge of this run must also pass (a sweep's, :meth:`BudgetLedger.bind`). ``adopt_from``: a
    finished run whose config differs from ``config`` only in ``privacy.epsilon`` and ``name``; the stages that are
    public under ``config`` copy its outputs instead of computing them again (``pipeline/stage.py``, adoption).

    Raises:
        RunError: The folder is in use, or a stage cannot start or continue (the message says why).
        DataError: The data has problems (each named); raised before any budget is spent.
    """
    member = membership(folder.path)
    if member is not None and parent is None:
        # Its charges must reach the sweep's ledger too, or the sweep would undercount what its runs spent.
        raise RunError(f"{folder.path} is a run of the sweep {member.get('sweep')!r}; continue it with `pcevolve "
                       f"sweep --resume {folder.path.parent}`, which charges the sweep's ledger too")
    try:
        with run_folder_lock(folder.path):
            outcome = _run_pipeline(config, folder, progress=progress, say=say, parent=parent,
                                    adopt_from=_sibling(config, adopt_from))
    except (RunFolderInUse, StageInterrupted) as error:
        raise RunError(str(error)) from None
    finally:
        folder.seal_secure()
    # Only once the lock is gone: removing it gives the folder itself the run's end as its modification time, which
    # beside the start on every other file would time the whole run, private stages included.
    folder.settle_times()
    return outcome


def _sibling(config: RunConfig, adopt_from: Path | None) -> Path | None:
    """``adopt_from``, checked: a finished run started with ``config`` but for its budget and name.

    Raises:
        RunError: It is not (adopting from it would build this run on another configuration's models).
    """
    if adopt_from is None:
        return None
    saved = _started_config(RunFolder.open(adopt_from))
    same = {"name": config.name, "privacy": saved.privacy.model_copy(update={"epsilon": config.privacy.epsilon})}
    if config_hash(saved.model_copy(update=same)) != config_hash(config):
        raise RunError(f"{adopt_from} was run with other settings than {config.name} (beyond its budget); its "
                       "public stages cannot stand in for this run's")
    return Path(adopt_from)


def discard_if_unstarted(folder: RunFolder) -> bool:
    """Remove a run folder that has spent nothing and finished no stage (a new run that failed on its input).

    Returns whether it was removed. A folder with a ledger, a key or a finished stage is kept: it must be
    resumed, never silently dropped.
    """
    stages_dir = folder.path / "stages"
    finished = stages_dir.is_dir() and any(stages_dir.iterdir())
    if SecureZone(folder).has_ledger() or finished or (folder.path / LOCK_NAME).exists():
        return False
    shutil.rmtree(folder.path, ignore_errors=True)
    return True




def _run_pipeline(config: RunConfig, folder: RunFolder, *, progress: bool, say: Callable[[str], None],
                  parent: tuple[BudgetLedger, str] | None, adopt_from: Path | None) -> RunOutcome:
    started_all = time.perf_counter()
    secure = SecureZone(folder)
    modality = MODALITIES.get_part(config.data.modality)

    t = time.perf_counter()
    say("data: reading and checking the private and public data")
    layout, private, public = _load_data(config, modality, say)
    try:
        secure.check_private_unchanged(private, config.data.private)
    except SecureZoneError as error:
        raise RunError(str(error)) from None
    _check_data(config, private, public, modality.noun)
    note = small_classes_note(private, modality.noun)
    if note:
        say(note.prefixed("note: "))
    advice = delta_note(delta_advice(config.privacy.delta, len(private.labels)))
    if advice:
        say(advice.prefixed("warning: "))
    if modality.traits.pixels and config.augment.flip and len(public) >= 10:
        # Public images only, drawn with the public seed: a choice anyone may repeat.
        from pcevolve.augment.mirror import mirror_advice, mirror_test  # torch: for image runs only

        advice = mirror_advice(mirror_test(public, rng=np.random.default_rng(config.seed)))
        if advice:
            say(f"warning: {advice}")
    ledger = _ledger(folder, config, len(private.labels))
    if parent is not None:
        ledger.bind(*parent)
    if not ledger.is_dp:
        logger.warning("reproducible noise: this run is NOT differentially private")
    seconds = {"data": time.perf_counter() - t}

    context = RunContext(config=config, folder=folder, secure=secure, ledger=ledger,
                         randomness=run_randomness(config), modality=modality, layout=layout,
                         class_names=tuple(private.class_names), private=private, public=public, say=say,
                         progress=progress, adopt_from=adopt_from)
    del private
    stages = stages_for(config)
    private_stages = ("data", *(stage.name for stage in stages if stage.reads_private(config)))
    last_private_reader = max(i for i, stage in enumerate(stages) if stage.reads_private(config))
    if config.executor.name != "local":
        say(f"executor: {config.executor.name} (public encoding and the search's evaluations; private data stays "
            "in this process)")
    with use_executor(config.executor) as context.executor:
        for index, stage in enumerate(stages):
            _, seconds[stage.name] = run_stage(stage, context)
            if index == last_private_reader:
                context.private = None  # from here on the private data is not read again
    seconds["total"] = time.perf_counter() - started_all

    # Times of stages that read private data (and the total, which contains them) stay in secure/.
    secure.add_timings({f"{stage}.seconds": seconds[stage] for stage in (*private_stages, "total")})
    shareable = {stage: value for stage, value in seconds.items() if stage not in (*private_stages, "total")}
    account = {stage: ledger.spent(stage) for stage in ledger.stages}
    search, delivery = context.products.search, context.products.delivery
    searched = {} if search is None else {
        "best_fitness": float(search.fitness[0]), "baseline_fitness": search.baseline_fitness,
        "reencode_agreement": delivery["reencode_agreement"], "generations": search.generations}
    outcome = RunOutcome(folder=folder.path, class_names=context.class_names, synthetic_counts=delivery["counts"],
                         seconds=shareable, delivered=folder.path / delivery["delivered"], noun=modality.noun,
                         private_stages=private_stages, epsilon=account, total_epsilon=ledger.spent(),
                         delta=ledger.delta, is_dp=ledger.is_dp, made_by=delivery.get("made_by"),
                         pool=delivery.get("pool"), **searched)
    folder.record("summary", seconds=shareable, epsilon=account, total_epsilon=outcome.total_epsilon,
                  dp=ledger.is_dp, synthetic_counts=outcome.synthetic_counts,
                  **{key: value for key, value in searched.items() if key != "generations"})
    return outcome
