"""``pcevolve run``: data → encoder → decoder → DP release → search → delivery, resumable after a kill.

Stages and what they may read:

=================  ====================================  ==============================
stage              reads                                 pays
=================  ====================================  ==============================
representation     private images (DP-SGD), public pool  ``representation``
decoder            public pool; private only if DP mode  ``decoder`` (DP modes only)
release            private features, once                ``fitness`` (two Gaussian events)
search             the release, public features          nothing (post-processing)
delivery           the release, encoder, decoder         nothing (post-processing)
=================  ====================================  ==============================

Randomness (``pcevolve.randomness``): every mechanism draws from the secure source unless the
config asks for reproducible noise (then the run is labelled not DP everywhere); every public
choice comes from its own seeded stream, never from the noise's generator.

Budget: the ledger (signed with a key in ``secure/``) is made right after the data is read, before
the first charge, with stage caps scaled from ``privacy.split`` so that the accountant's total over
the planned releases is the total ε (``pipeline.plan.stage_caps``).

Resume: a run that has (or had) a ledger refuses to continue without it intact. Each stage writes
its outputs and then a marker ``stages/<name>.json``; a resumed run loads finished stages instead of
recomputing them. DP fine-tuning continues from its last paid epoch (an epoch paid but interrupted is
re-run under its charge with reproducible noise and counted as spent with secure noise, see
``privacy/dpsgd_resume.py``), and the search from its last generation checkpoint, so with
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
from typing import Any

import numpy as np

from pcevolve.config import RunConfig, config_hash, load_config
from pcevolve.data import LabeledDataset, find_duplicates, read_image_folder, read_unlabeled_images
from pcevolve.decoders import Decoder, load_decoder, train_decoder
from pcevolve.encoders import ImageEncoder, build_encoder, train_representation
from pcevolve.evolution import EvolutionSettings
from pcevolve.fitness import FitnessTargets
from pcevolve.io import atomic_write_json, atomic_write_npz, read_json
from pcevolve.pipeline.deliver import (
    decode_candidate,
    configured_delivery_counts,
    write_image_folder,
    write_synthetic_arrays,
)
from pcevolve.pipeline.plan import plan_budget, stage_caps
from pcevolve.pipeline.plots import write_fitness_curve
from pcevolve.pipeline.run_lock import LOCK_NAME, RunFolderInUse, run_folder_lock
from pcevolve.pipeline.secure_zone import (
    SecureZone,
    SecureZoneError,
    split_training_record,
)
from pcevolve.privacy import BudgetLedger
from pcevolve.privacy.calibration import delta_advice
from pcevolve.privacy.statistics import RandomFourierFeatures
from pcevolve.randomness import RunRandomness
from pcevolve.run_folder import RunFolder
from pcevolve.search.basis import PublicBasis, unit_rows
from pcevolve.search.class_model import ClassModel
from pcevolve.search.problem import SearchProblem
from pcevolve.search.release import (
    ReleaseSettings,
    StatisticsRelease,
    public_bandwidth,
    release_statistics,
)
from pcevolve.search.roundtrip import (
    ExactRoundTrip,
    RoundTripSurrogate,
    SurrogateData,
    round_trip,
)
from pcevolve.search.runner import generation_records, rank_final, run_search
from pcevolve.search.space import ClassFrames, SearchSpace
from pcevolve.search.territory import ClassTerritories

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
    private_stages: tuple[str, ...] = ()
    epsilon: dict[str, float] = field(default_factory=dict)
    total_epsilon: float = 0.0
    delta: float = 0.0
    is_dp: bool = True
    best_fitness: float = float("nan")
    baseline_fitness: float = float("nan")
    reencode_agreement: float = float("nan")
    generations: int = 0


def run_randomness(config: RunConfig) -> RunRandomness:
    """The run's random sources: public streams from ``seed``; mechanism noise secure unless reproducible."""
    return RunRandomness(config.seed, reproducible_noise=config.privacy.reproducible_noise)


class _Stages:
    """Markers of finished stages in ``folder/stages``."""

    def __init__(self, folder: RunFolder) -> None:
        self.root = folder.path / "stages"
        self.root.mkdir(exist_ok=True)

    def done(self, name: str) -> dict[str, Any] | None:
        path = self.root / f"{name}.json"
        return read_json(path) if path.exists() else None

    def finish(self, name: str, result: dict[str, Any]) -> None:
        atomic_write_json(self.root / f"{name}.json", result)


def open_run(config: RunConfig | None, *, root: str | Path = "runs",
             resume: str | Path | None = None) -> tuple[RunConfig, RunFolder, bool]:
    """The run's config and folder: a new folder ``root/config.name``, or the one to resume.

    Raises:
        RunError: The folder exists without ``--resume``, or the config differs from the one
            the folder was started with.
    """
    if resume is not None:
        try:
            folder = RunFolder.open(resume)
        except FileNotFoundError as error:
            raise RunError(str(error)) from error
        saved = load_config(folder.config_path)
        if config is not None and config_hash(config) != config_hash(saved):
            raise RunError(f"{folder.path} was started with another configuration; resume it without a config "
                           "or start a new run with another name")
        if SecureZone(folder).has_ledger():
            _open_ledger(folder, saved)  # refuses now, before any data is read, if the ledger cannot be trusted
        return saved, folder, True
    assert config is not None
    missing = [f"data.{key}: {path} does not exist" for key, path in
               (("private", config.data.private), ("public", config.data.public))
               if path is not None and not Path(path).exists()]
    if missing:  # before the run folder exists, so a wrong path leaves nothing behind
        raise RunError("; ".join(missing) + " (relative paths are read from the current folder)")
    target = Path(root) / config.name
    if target.exists():
        raise RunError(f"run folder {target} already exists: resume it with `pcevolve run --resume {target}` "
                       "or choose another `name:` in the config")
    return config, RunFolder.create(root, config), False


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


def _load_data(config: RunConfig) -> tuple[LabeledDataset, np.ndarray | None]:
    data = config.data
    private = read_image_folder(data.private, size=data.image_size, mode=data.image_mode)
    if not data.public:
        return private, None
    public = read_unlabeled_images(data.public, size=data.image_size, mode=data.image_mode)
    # A private image in the "public" pool would be delivered or learnt from as if it were public: refused,
    # before the ledger exists. Exact copies (same pixels after reading); near copies are the report's job.
    shared = find_duplicates({str(data.private): private, str(data.public): public})
    if shared:
        raise RunError(f"the public pool shares {len(shared)} image(s) with the private set; remove them from the "
                       "pool (it must hold no private sample):\n" + "\n".join(f"  {problem}" for problem in shared[:10])
                       + (f"\n  ... and {len(shared) - 10} more" if len(shared) > 10 else ""))
    return private, public.samples


def _check_data(config: RunConfig, private: LabeledDataset, public: np.ndarray | None) -> None:
    """What the data must satisfy for every stage to run, checked before any budget is spent."""
    search = config.search
    if public is None or len(public) < 2:
        raise RunError(f"the public pool {config.data.public} holds {0 if public is None else len(public)} "
                       "sample(s); the search's feature basis needs at least two (and DP training needs public "
                       "negatives)")
    if len(public) <= search.basis_dim:
        raise RunError(f"the public pool {config.data.public} holds {len(public)} samples, not more than "
                       f"search.basis_dim = {search.basis_dim}; give a larger pool or lower basis_dim")
    if len(private.class_names) < 2:
        raise RunError(f"the private data at {config.data.private} has one class; a labelled synthetic set needs "
                       "at least two")


def _record_split(folder: RunFolder, secure: SecureZone, entry: dict[str, Any]) -> None:
    """Training records: DP-safe fields to records.jsonl, private diagnostics (not DP) to secure/diagnostics.jsonl."""
    public, private = split_training_record(entry)
    kind = public.pop("kind", "representation_epoch")
    folder.record(kind, **public)
    if private is not None:
        secure.record_diagnostics(private)


def _refuse_interrupted(ledger: BudgetLedger, stages: _Stages, stage: str, ledger_stage: str) -> None:
    if stages.done(stage) is None and ledger.spent(ledger_stage) > 0:
        raise RunError(f"stage {stage!r} was interrupted after spending ε = {ledger.spent(ledger_stage):.4g} of "
                       f"its budget; that budget is gone and re-running the stage would pay again. Start a new "
                       "run (another `name:`) to continue")


def run_pipeline(config: RunConfig, folder: RunFolder, *, progress: bool = False,
                 say: Callable[[str], None] = lambda _: None) -> RunOutcome:
    """Run every stage that has no marker yet in ``folder`` and deliver the synthetic set.

    Holds ``folder/run.lock`` throughout (a second process on the folder is refused).

    Raises:
        RunError: The folder is in use, or a stage cannot start or continue (the message says why).
        DataError: The data has problems (each named); raised before any budget is spent.
    """
    try:
        with run_folder_lock(folder.path):
            return _run_pipeline(config, folder, progress=progress, say=say)
    except RunFolderInUse as error:
        raise RunError(str(error)) from None


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


def _run_pipeline(config: RunConfig, folder: RunFolder, *, progress: bool,
                  say: Callable[[str], None]) -> RunOutcome:
    started_all = time.perf_counter()
    seconds: dict[str, float] = {}
    stages = _Stages(folder)
    secure = SecureZone(folder)
    randomness = run_randomness(config)
    decoder_reads_private = config.decoder.training != "public"
    private_stages = ["data", "representation", "release", *(["decoder"] if decoder_reads_private else [])]

    t = time.perf_counter()
    say("data: reading and checking the private and public folders")
    private, public = _load_data(config)
    try:
        secure.check_private_unchanged(private, config.data.private)
    except SecureZoneError as error:
        raise RunError(str(error)) from None
    _check_data(config, private, public)
    advice = delta_advice(config.privacy.delta, len(private.labels))
    if advice:
        say(f"warning: {advice}")
    ledger = _ledger(folder, config, len(private.labels))
    if not ledger.is_dp:
        logger.warning("reproducible noise: this run is NOT differentially private")
    sample_shape = tuple(private.samples.shape[1:])
    class_names = private.class_names
    seconds["data"] = time.perf_counter() - t

    # Stage 2 — representation.
    t = time.perf_counter()
    encoder_dir = folder.path / "encoder"
    if stages.done("representation") is not None:
        encoder = ImageEncoder.load(encoder_dir).eval()
    else:
        # A kill inside DP fine-tuning resumes from its last paid epoch (privacy/dpsgd_resume.py), never paying twice.
        checkpoint = secure.checkpoint_path("representation")
        resuming = checkpoint.exists() or ledger.spent("representation") > 0
        trained_how = ("public pool, then DP-SGD on the private images" if ledger.stages["representation"] > 0
                       else "public pool only, no budget")
        say(f"representation: contrastive encoder ({trained_how})"
            + (", resumed after its last paid epoch" if resuming else ""))
        encoder = build_encoder(config.representation, seed=randomness.public_seed("representation"),
                                sample_shape=sample_shape)
        result = train_representation(
            encoder, private.samples, public, config=config.representation, augment=config.augment, ledger=ledger,
            noise=randomness.noise("representation"), seed=randomness.public_seed("representation"),
            progress=progress, on_record=lambda r: _record_split(folder, secure, r), checkpoint=checkpoint)
        encoder.eval().save(encoder_dir)
        secure.add_timings({f"representation.{k}": v for k, v in result.seconds.items()})
        folder.record("representation", **result.to_json())
        stages.finish("representation", result.to_json())
        checkpoint.unlink(missing_ok=True)
    seconds["representation"] = time.perf_counter() - t

    # Stage 4 — decoder (before the search: the search runs with it in the loop).
    t = time.perf_counter()
    decoder_dir = folder.path / "decoder"
    if stages.done("decoder") is not None:
        decoder = load_decoder(decoder_dir)
    else:
        decoder_checkpoint = secure.checkpoint_path("decoder")  # DP training resumes per paid epoch
        say(f"decoder: {config.decoder.name} ({_DECODER_TRAINING[config.decoder.training]})")
        trained = train_decoder(config.decoder, encoder=encoder, sample_shape=sample_shape, public_samples=public,
                                private_samples=private.samples if decoder_reads_private else None, ledger=ledger,
                                noise=randomness.noise("decoder"), seed=randomness.public_seed("decoder"),
                                progress=progress, checkpoint=decoder_checkpoint)
        decoder = trained.decoder
        decoder.save(decoder_dir)
        if trained.dp is not None:
            secure.add_timings({"decoder.dp_training": trained.dp.seconds})
        folder.record("decoder", **trained.to_json())
        stages.finish("decoder", trained.to_json())
        decoder_checkpoint.unlink(missing_ok=True)
    seconds["decoder"] = time.perf_counter() - t

    # Public features (free): the basis, the RFF bandwidth and the round-trip surrogate.
    t = time.perf_counter()
    search = config.search
    basis, surrogate_data, clip_norm, bandwidth = _public_side(config, folder, stages, encoder, decoder, public,
                                                               say, progress)
    seconds["public features"] = time.perf_counter() - t

    # The DP release (fitness stage), once.
    t = time.perf_counter()
    release_path = folder.path / "release.npz"
    if stages.done("release") is not None:
        release = StatisticsRelease.load(release_path)
    else:
        _refuse_interrupted(ledger, stages, "release", "fitness")
        say("release: DP class statistics of the private features (read once, through the mechanism)")
        _, private_features = encoder.encode_both(private.samples, batch_size=256, progress=progress)
        # The frequencies are published in release.npz: drawn from their own public stream, never the noise's.
        rff = RandomFourierFeatures.draw(basis.dim, search.rff_features, bandwidth=bandwidth,
                                         rng=randomness.public("rff"))
        settings = ReleaseSettings(num_classes=len(class_names), clip_norm=clip_norm, rff=rff,
                                   shares=search.release_shares, public_variances=basis.variances,
                                   min_snr=search.release_min_snr)
        release, choice = release_statistics(basis.reduce(private_features), private.labels, settings=settings,
                                             ledger=ledger, noise=randomness.noise("fitness"))
        del private_features
        release.save(release_path)
        if choice.dropped:
            say(f"release: {' and '.join(_STATISTIC_NAMES[c] for c in choice.dropped)} left out — with about "
                f"{choice.typical_count:.0f} private samples per class their class means would be mostly noise; "
                "their budget went to the class means")
        summary = {"noise_multiplier": release.noise_multiplier, "clip_norm": clip_norm,
                   "noisy_counts": release.statistics.counts.tolist(), "basis_dim": basis.dim,
                   "rff_bandwidth": bandwidth, "stage_epsilon": ledger.spent("fitness"), "rule": choice.summary()}
        folder.record("release", **summary)
        stages.finish("release", summary)
    # From here on the private data is not read again.
    del private
    seconds["release"] = time.perf_counter() - t

    # Stage 3b — the search, on the release only.
    t = time.perf_counter()
    territories = class_territories(config, release, basis, decoder)
    if territories is not None:
        folder.record("territories", sizes=territories.sizes(), **class_model_of(release, basis).summary())
        wanted = configured_delivery_counts(search, release.statistics)
        for name, size, count in zip(class_names, territories.sizes(), wanted, strict=True):
            if size < count:
                # Not an error (the run still delivers), but the user should know before sharing the set.
                say(f"warning: only {size} public images look like class {name!r}, fewer than the {count} to deliver; "
                    "they will be delivered more than once. The public pool may lack this class: check it, or use "
                    "the conv decoder (decoder.name: conv)")
    model = decoder.round_trip_model(basis, surrogate_data, territories)
    exact = model.exact
    problem = build_problem(config, release, model, basis=basis)
    space = problem.space

    def real_round_trip(z: np.ndarray) -> np.ndarray:
        return round_trip(z, basis=basis, decoder=decoder, encoder=encoder)[1]

    say(f"search: evolution over the released statistics ({search.population} × up to {search.generations} "
        "generations)")
    # An exact round trip needs no checks; a learned surrogate is checked against real round trips and refitted.
    outcome = run_search(problem, EvolutionSettings.from_config(search), seed=randomness.public_seed("search"),
                         folder=folder.path / "search", record=lambda r: folder.record("generation", **r),
                         round_trip=None if exact else real_round_trip,
                         surrogate_data=None if exact else surrogate_data,
                         check_every=search.roundtrip_every, check_per_class=search.roundtrip_per_class,
                         progress=progress)
    engine, problem = outcome.engine, outcome.problem
    targets = problem.targets
    ranked = rank_final(problem, engine, search.top_candidates)
    baseline_fitness = problem.evaluate(space.baseline()).total
    folder.record("ranking", candidates=[{"fitness": f, "rank": i} for i, (_, f) in enumerate(ranked)],
                  baseline_fitness=baseline_fitness)
    seconds["search"] = time.perf_counter() - t

    # Delivery: decode the best individual at full size (post-processing of the release).
    t = time.perf_counter()
    best_vector, best_fitness = ranked[0]
    agreement, counts = _deliver(config, folder, stages, space, best_vector, targets, release, basis, encoder, decoder,
                                 territories, class_names, say, progress, randomness)
    write_fitness_curve(folder.path / "fitness_curve.png", generation_records(folder.records("generation")))
    seconds["delivery"] = time.perf_counter() - t
    seconds["total"] = time.perf_counter() - started_all

    # Times of stages that read private data (and the total, which contains them) stay in secure/.
    secure.add_timings({f"{stage}.seconds": seconds[stage] for stage in (*private_stages, "total")})
    shareable = {stage: value for stage, value in seconds.items() if stage not in (*private_stages, "total")}
    account = {stage: ledger.spent(stage) for stage in ledger.stages}
    outcome = RunOutcome(folder=folder.path, class_names=tuple(class_names), synthetic_counts=counts,
                         seconds=shareable, private_stages=tuple(private_stages), epsilon=account,
                         total_epsilon=ledger.spent(), delta=ledger.delta, is_dp=ledger.is_dp,
                         best_fitness=best_fitness, baseline_fitness=baseline_fitness,
                         reencode_agreement=agreement, generations=engine.generation)
    folder.record("summary", seconds=shareable, epsilon=account, total_epsilon=outcome.total_epsilon,
                  dp=ledger.is_dp, best_fitness=best_fitness, baseline_fitness=baseline_fitness,
                  reencode_agreement=agreement, synthetic_counts=counts)
    folder.settle_times()
    return outcome


_DECODER_TRAINING = {"public": "public pool only", "public-then-dp": "public pool, then DP-SGD on the private images",
                     "dp": "DP-SGD on the private images"}
_STATISTIC_NAMES = {"second_moment": "the class covariances", "rff": "the class mean embeddings (MMD)"}


def class_model_of(release: StatisticsRelease, basis: PublicBasis) -> ClassModel:
    """The run's DP class model: the release's means with the public variances of the basis (post-processing)."""
    return ClassModel.from_release(release.statistics, basis.variances)


def class_territories(config: RunConfig, release: StatisticsRelease, basis: PublicBasis,
                      decoder: Decoder) -> ClassTerritories | None:
    """Each class's part of a retrieval decoder's pool (``search.territory`` per delivered sample), else None.

    A pure function of the config, the release, the basis and the decoder's public pool: a resumed run and a
    benchmark reading the run folder get the same territories.
    """
    pool = decoder.pool_encodings()
    if config.search.territory == 0 or pool is None:
        return None
    counts = configured_delivery_counts(config.search, release.statistics)
    sizes = np.ceil(config.search.territory * counts).astype(np.int64)
    return ClassTerritories.of(basis.reduce(pool), class_model_of(release, basis), sizes)


def build_problem(config: RunConfig, release: StatisticsRelease,
                  surrogate: RoundTripSurrogate | ExactRoundTrip | None, *, basis: PublicBasis) -> SearchProblem:
    """The search problem of a run: DP targets, the space around the released Gaussians, fixed draws.

    A pure function of the config, the release, the public basis and the round-trip model, so a
    resumed run (or a benchmark reading a finished run folder) rebuilds exactly the same problem.
    The label discriminant (consistency term, delivery check) is the run's DP class model
    (:mod:`pcevolve.search.class_model`): public variances of the basis, not the noisy DP class
    covariances, kept to the directions where the released means rise above their noise.
    """
    search = config.search
    randomness = run_randomness(config)
    targets = FitnessTargets.from_release(release.statistics, release.rff,
                                          validation_per_class=search.validation_per_class,
                                          rng=randomness.public("search"),
                                          discriminant_covariance=class_model_of(release, basis).covariance,
                                          public_covariance=np.diag(basis.variances))
    space = SearchSpace(ClassFrames.from_gaussians(targets.means, targets.covariances))
    return SearchProblem.build(space, targets, search.weights, surrogate, per_class=search.candidate_per_class,
                               eval_seeds=search.eval_seeds, seed=randomness.public_seed("search"))


def load_public_side(folder: RunFolder) -> tuple[PublicBasis, SurrogateData, float, float]:
    """Basis, the surrogate's public training pairs, clip norm and RFF bandwidth saved by a run's public step."""
    with np.load(folder.path / "public_side.npz", allow_pickle=False) as data:
        arrays = dict(data)
    basis = PublicBasis.from_arrays({k[len("basis_"):]: v for k, v in arrays.items() if k.startswith("basis_")})
    pairs = SurrogateData(arrays["pairs_inputs"], arrays["pairs_outputs"], {})
    return basis, pairs, float(arrays["clip_norm"]), float(arrays["bandwidth"])


def _public_side(config, folder, stages, encoder, decoder, public, say, progress):
    """Basis, surrogate, clip norm and RFF bandwidth from public features only (cached in the run folder)."""
    search = config.search
    path = folder.path / "public_side.npz"
    if stages.done("public") is not None:
        return load_public_side(folder)
    assert public is not None  # _check_data refused a run without a public pool before any budget was spent
    say("public features: basis and round-trip surrogate (free)")
    rng = run_randomness(config).public("public")
    chosen = np.sort(rng.choice(len(public), min(len(public), max(search.roundtrip_public, 2 * search.basis_dim)),
                                replace=False))
    _, features = encoder.encode_both(public[chosen], batch_size=256, progress=progress)
    basis = PublicBasis.fit(features, search.basis_dim)
    z = basis.reduce(features)
    clip_norm = basis.radius(features, search.clip_quantile)
    bandwidth = public_bandwidth(z, rng=rng)
    pairs = decoder.surrogate_pairs(z, basis=basis, encoder=encoder)  # none for an exact round trip
    surrogate_r2 = pairs.fit().r2 if len(pairs.public_inputs) else None
    arrays = {f"basis_{k}": v for k, v in basis.to_arrays().items()}
    atomic_write_npz(path, clip_norm=np.array(clip_norm), bandwidth=np.array(bandwidth),
                     pairs_inputs=pairs.public_inputs, pairs_outputs=pairs.public_outputs, **arrays)
    summary = {"public_features": len(chosen), "basis_dim": basis.dim,
               "basis_variance_share": float(basis.variances.sum()
                                             / max(np.var(unit_rows(features), axis=0, ddof=1).sum(), 1e-12)),
               "clip_norm": clip_norm, "rff_bandwidth": bandwidth, "surrogate_r2": surrogate_r2}
    folder.record("public_side", **summary)
    stages.finish("public", summary)
    return basis, pairs, clip_norm, bandwidth


def _deliver(config, folder, stages, space, best_vector, targets, release, basis, encoder, decoder, territories,
             class_names, say, progress, randomness):
    done = stages.done("delivery")
    if done is not None:
        return done["reencode_agreement"], done["counts"]
    say("delivery: decoding the best candidate at full size and checking that each sample lands in its class")
    # Class balance from the *noisy* counts (post-processing): exact private counts are not released.
    counts = configured_delivery_counts(config.search, release.statistics)
    rng = randomness.public("delivery")
    delivered = decode_candidate(space, best_vector, counts, oversample=config.search.delivery_oversample, rng=rng,
                                 basis=basis, encoder=encoder, decoder=decoder, targets=targets,
                                 territories=territories)
    labels, reencoded_classes, agreement = delivered.labels, delivered.reencoded_classes, delivered.agreement
    write_image_folder(folder.path / "synthetic", delivered.samples, labels, class_names)
    write_synthetic_arrays(folder.path / "synthetic.npz", features=delivered.features,
                           coordinates=delivered.coordinates, labels=labels, class_names=class_names,
                           reencoded_classes=reencoded_classes)
    result = {"counts": [int(c) for c in counts], "oversample": config.search.delivery_oversample,
              "reencode_agreement_drawn": delivered.drawn_agreement, "reencode_agreement": agreement,
              "reencode_cosine_mean": float(np.mean(delivered.cosine)),
              "reencode_agreement_per_class": [float(np.mean(reencoded_classes[labels == k] == k))
                                               for k in range(len(class_names))]}
    folder.record("delivery", **result)
    stages.finish("delivery", result)
    return agreement, result["counts"]
