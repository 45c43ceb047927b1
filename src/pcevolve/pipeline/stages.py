"""The stages of ``pcevolve run`` after the data is read, in order (see :mod:`pcevolve.pipeline.stage`).

=================  ====================================  ==============================
stage              reads                                 pays (ledger stage)
=================  ====================================  ==============================
representation     private samples (DP-SGD), public pool  ``representation``
decoder            public pool; private only if DP mode  ``decoder`` (DP modes only)
public_features    public pool, through the encoder      nothing
release            private features, once                ``release`` (two Gaussian events)
labels             the release, public pool              nothing (post-processing)
verdict            private features, each generation     ``verdict`` (off by default)
search             the release, public features          nothing (post-processing)
delivery           the release, encoder, decoder         nothing (post-processing)
=================  ====================================  ==============================

Each stage saves its own outputs in the run folder; the runner records its summary and writes its marker. What a
later stage, a resumed run or a benchmark rebuilds from the saved outputs is in :mod:`pcevolve.search.assembly`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pcevolve.catalog.decoders import DECODER_TRAITS
from pcevolve.config import RunConfig
from pcevolve.decoders import Decoder, load_decoder, train_decoder
from pcevolve.evolution import EvolutionSettings
from pcevolve.executors import bulk_encode
from pcevolve.io import atomic_write_json, atomic_write_npz, read_json
from pcevolve.pipeline.pool_warnings import thin_class_lines
from pcevolve.pipeline.secure_zone import split_training_record
from pcevolve.pipeline.stage import RunContext, Stage
from pcevolve.plots import write_fitness_curve
from pcevolve.progress import ConsoleLine
from pcevolve.privacy.class_release import CLASS_STATISTICS, ReleaseSettings
from pcevolve.privacy.cluster_vote import cluster_spread, public_clusters, variance_directions
from pcevolve.privacy.released_statistics import StatisticsRelease
from pcevolve.privacy.selection_rounds import VERDICT_ROUNDS
from pcevolve.privacy.statistics import RandomFourierFeatures
from pcevolve.search.assembly import (
    IN_TASK_FILE,
    POOL_LABELS_FILE,
    PUBLIC_FEATURES_FILE,
    VERDICT_FILE,
    PublicFeatures,
    build_problem,
    class_model_of,
    class_territories,
    delivered_counts,
    has_territories,
    in_task_of,
    label_pool,
    labeller_output,
    load_in_task,
    load_pool_labels,
    load_public_features,
    pixel_directions,
    search_targets,
    territory_sizes,
)
from pcevolve.search.basis import PublicBasis, local_variances, public_bandwidth, unit_rows
from pcevolve.search.delivery import configured_delivery_counts, decode_candidate, write_synthetic_arrays
from pcevolve.search.in_task import eligible
from pcevolve.search.pool_labels import PoolLabels
from pcevolve.search.problem import SearchProblem
from pcevolve.search.roundtrip import round_trip, round_trip_model, surrogate_pairs
from pcevolve.search.runner import SearchResult, generation_records, rank_final, run_search
from pcevolve.decoders.territories import ClassTerritories
from pcevolve.search.verdict import STAGE as VERDICT_STAGE
from pcevolve.search.verdict import VerdictSettings, VerdictState, run_verdict, shifted_labels


# --- representation -------------------------------------------------------------------------------------------

def _describe_representation(c: RunContext) -> str:
    resuming = c.secure.checkpoint_path("representation").exists() or c.ledger.spent("representation") > 0
    how = ("public pool, then DP-SGD on the private samples" if c.ledger.stages["representation"] > 0
           else "public pool only, no budget")
    return f"contrastive encoder ({how})" + (", resumed after its last paid epoch" if resuming else "")


def _record_split(c: RunContext, entry: dict[str, Any]) -> None:
    """Training records: DP-safe fields to records.jsonl, private diagnostics (not DP) to secure/diagnostics.jsonl."""
    public, private = split_training_record(entry)
    kind = public.pop("kind", "representation_epoch")
    c.folder.record(kind, **public)
    if private is not None:
        c.secure.record_diagnostics(private)


def _run_representation(c: RunContext) -> tuple[Any, dict[str, Any]]:
    # A kill inside DP fine-tuning resumes from its last paid epoch (privacy/dpsgd_resume.py), never paying twice.
    seed = c.randomness.public_seed("representation")
    encoder = c.modality.build_encoder(c.config, c.layout, seed)
    assert c.private is not None
    # An encoder that reads only part of a sample (a text's first tokens) says so, once, on the console.
    for note in getattr(encoder, "reading_notes", lambda *_: [])(c.private.samples, c.public):
        c.say(note.prefixed("note: ") if isinstance(note, ConsoleLine) else f"note: {note}")
    result = c.modality.train_representation(
        encoder, c.private.samples, c.public, config=c.config.representation, augment=c.config.augment,
        ledger=c.ledger, noise=c.randomness.noise("representation"), seed=seed, progress=c.progress,
        on_record=lambda r: _record_split(c, r), checkpoint=c.secure.checkpoint_path("representation"))
    encoder.eval().save(c.folder.path / "encoder")
    c.secure.add_timings({f"representation.{k}": v for k, v in result.seconds.items()})
    return encoder, result.to_json()


REPRESENTATION = Stage(
    name="representation", pays=True, resumable=True, reads_private=lambda config: True,
    describe=_describe_representation, run=_run_representation,
    load=lambda c, _: c.modality.load_encoder(c.folder.path / "encoder"),
    after=lambda c: c.secure.checkpoint_path("representation").unlink(missing_ok=True),
    # With no share of ε the encoder is trained on the public pool only (train_representation fine-tunes only on a
    # positive cap); the reading notes it prints about the private samples change nothing it writes.
    outputs=("encoder",), public_when=lambda config: config.privacy.split.get("representation", 0.0) == 0.0)


# --- decoder ----------------------------------------------------------------------------------------------------

_DECODER_TRAINING = {"public": "public pool only", "public-then-dp": "public pool, then DP-SGD on the private samples",
                     "dp": "DP-SGD on the private samples"}


def _run_decoder(c: RunContext) -> tuple[Decoder, dict[str, Any]]:
    reads_private = c.config.decoder.training != "public"
    assert not reads_private or c.private is not None
    trained = train_decoder(c.config.decoder, encoder=c.products.representation,
                            sample_shape=c.modality.sample_shape(c.layout),
                            public_samples=c.public, private_samples=c.private.samples if reads_private else None,
                            ledger=c.ledger, noise=c.randomness.noise("decoder"),
                            seed=c.randomness.public_seed("decoder"), progress=c.progress,
                            checkpoint=c.secure.checkpoint_path("decoder"),  # DP training resumes per paid epoch
                            executor=c.executor)
    trained.decoder.save(c.folder.path / "decoder")
    if trained.dp is not None:
        c.secure.add_timings({"decoder.dp_training": trained.dp.seconds})
    return trained.decoder, trained.to_json()


DECODER = Stage(
    name="decoder", pays=True, resumable=True, reads_private=lambda config: config.decoder.training != "public",
    describe=lambda c: f"{c.config.decoder.name} ({_DECODER_TRAINING[c.config.decoder.training]})",
    run=_run_decoder, load=lambda c, _: load_decoder(c.folder.path / "decoder"),
    after=lambda c: c.secure.checkpoint_path("decoder").unlink(missing_ok=True),
    # Public training alone is not enough: a retrieval decoder indexes the pool with the run's encoder, and a
    # generator learns the encoder's features, so the decoder is public only when the encoder is.
    outputs=("decoder",), public_when=lambda config: config.decoder.training == "public", inputs=(REPRESENTATION,))


# --- public features --------------------------------------------------------------------------------------------

def _run_public_features(c: RunContext) -> tuple[PublicFeatures, dict[str, Any]]:
    search, public = c.config.search, c.public
    encoder, decoder = c.products.representation, c.products.decoder
    assert public is not None  # the data checks refused a run without a public pool before any budget was spent
    fixed = pixel_directions(encoder, search.pixel_frequencies)
    dims = search.basis_dim + (0 if fixed is None else fixed.shape[1])
    rng = c.randomness.public("public_features")
    pool = decoder.pool_encodings()  # a retrieval decoder's index: the same encoder's features of public samples
    source = len(public) if pool is None else len(pool)
    chosen = np.sort(rng.choice(source, min(source, max(search.roundtrip_public, 2 * dims)), replace=False))
    if pool is None:
        _, features = bulk_encode(encoder, public[chosen], batch_size=256, progress=c.progress,
                                  executor=c.executor)  # public only
    else:  # reuse the index instead of a second encoder pass over the pool (docs/performance.md)
        features = pool[chosen]
    basis = PublicBasis.fit(features, search.basis_dim, fixed_directions=fixed)
    z = basis.reduce(features)
    clip_norm = basis.radius(features, search.clip_quantile)
    clip_radii = basis.leading_radii(features, search.clip_quantile)
    bandwidth = public_bandwidth(z, rng=rng)
    local = local_variances(z, rng=rng)
    pairs = surrogate_pairs(decoder, z, basis=basis, encoder=encoder)  # none for an exact round trip
    surrogate_r2 = pairs.fit().r2 if len(pairs.public_inputs) else None
    arrays = {f"basis_{k}": v for k, v in basis.to_arrays().items()}
    centres, width = None, 0.0
    if search.class_means == "votes":
        # The clusters are sharper on the whole retrieval pool than on the public features chosen above, so fewer
        # images of one class fall into another's cluster (measured in docs/search.md §8).
        clustered = z if pool is None else basis.reduce(pool)
        centres = public_clusters(clustered, min(len(clustered), search.vote_clusters(len(c.class_names))), rng=rng,
                                  directions=variance_directions(basis.variances, search.vote_cluster_variance))
        width = search.vote_softness * cluster_spread(clustered, centres)
        arrays["vote_centres"], arrays["vote_width"] = centres, np.array(width)
    atomic_write_npz(c.folder.path / PUBLIC_FEATURES_FILE, clip_norm=np.array(clip_norm), clip_radii=clip_radii,
                     bandwidth=np.array(bandwidth), local_variances=local, pairs_inputs=pairs.public_inputs,
                     pairs_outputs=pairs.public_outputs, **arrays)
    summary = {"public_features": len(chosen), "basis_dim": basis.dim,
               "basis_variance_share": float(basis.variances.sum()
                                             / max(np.var(unit_rows(features), axis=0, ddof=1).sum(), 1e-12)),
               "clip_norm": clip_norm, "rff_bandwidth": bandwidth, "surrogate_r2": surrogate_r2}
    if centres is not None:
        summary["vote_clusters"] = len(centres)
    return PublicFeatures(basis, pairs, clip_norm, bandwidth, clip_radii, local, centres, width), summary


PUBLIC_FEATURES = Stage(
    name="public_features", pays=False, resumable=True, reads_private=lambda config: False,
    describe=lambda c: "basis and round-trip surrogate from the public pool (free)",
    run=_run_public_features, load=lambda c, _: load_public_features(c.folder))


# --- release ----------------------------------------------------------------------------------------------------

_STATISTIC_NAMES = {"second_moment": "the class covariances", "rff": "the class mean embeddings (MMD)"}


def _run_release(c: RunContext) -> tuple[StatisticsRelease, dict[str, Any]]:
    search, public_side, private = c.config.search, c.products.public_features, c.private
    assert private is not None
    basis = public_side.basis
    _, private_features = c.products.representation.encode_both(private.samples, batch_size=256,
                                                                    progress=c.progress)
    # The frequencies are published in release.npz: drawn from their own public stream, never the noise's.
    rff = RandomFourierFeatures.draw(basis.dim, search.rff_features, bandwidth=public_side.bandwidth,
                                     rng=c.randomness.public("release"))
    settings = ReleaseSettings(num_classes=len(private.class_names), clip_norm=public_side.clip_norm, rff=rff,
                               shares=search.release_shares, public_variances=basis.variances,
                               min_snr=search.release_min_snr, clip_radii=public_side.clip_radii,
                               dim=search.release_dim, vote_centres=_vote_centres(c.config, public_side),
                               vote_width=public_side.vote_width)
    release, choice = CLASS_STATISTICS.release(basis.reduce(private_features), private.labels, settings=settings,
                                              ledger=c.ledger, noise=c.randomness.noise("release"))
    del private_features
    release.save(c.folder.path / "release.npz")
    if release.vote is not None:
        c.say(f"release: each class's mean is the centre of a public cluster (of {len(release.vote.centres)}), "
              "given to the classes by the exponential mechanism on their private samples' votes")
    elif choice.dropped:
        c.say(f"release: {' and '.join(_STATISTIC_NAMES[s] for s in choice.dropped)} left out — with about "
              f"{choice.typical_count:.0f} private samples per class their class means would be mostly noise; "
              "their budget went to the class means")
    if release.vote is None and choice.dim < choice.basis_dim:
        c.say(f"release: class means in the leading {choice.dim} of {choice.basis_dim} basis directions — with "
              f"about {choice.typical_count:.0f} private samples per class, the noise of a class mean outgrows the "
              "public spread beyond them")
    return release, {"noise_multiplier": release.noise_multiplier, "clip_norm": release.clip_norm,
                     "noisy_counts": (release.statistics.counts if release.vote is None
                                      else release.vote.counts).tolist(), "basis_dim": basis.dim,
                     "rff_bandwidth": public_side.bandwidth, "stage_epsilon": c.ledger.spent("release"),
                     "rule": choice.summary()}


def _vote_centres(config: RunConfig, public: PublicFeatures) -> np.ndarray | None:
    """The public centres the classes vote among, with ``search.class_means: votes`` (else None)."""
    if config.search.class_means != "votes":
        return None
    if public.vote_centres is None:
        raise ValueError("search.class_means is 'votes' but the public features stage saved no cluster centres "
                         "(a run folder made with 'sums'); start a new run folder")
    return public.vote_centres


RELEASE = Stage(
    name="release", pays=True, resumable=False, reads_private=lambda config: True,
    describe=lambda c: "DP class statistics of the private features (read once, through the mechanism)",
    run=_run_release, load=lambda c, _: StatisticsRelease.load(c.folder.path / "release.npz"))


# --- labels -----------------------------------------------------------------------------------------------------

def _run_labels(c: RunContext) -> tuple[PoolLabels | None, dict[str, Any]]:
    release, basis, decoder = c.products.release, c.products.public_features.basis, c.products.decoder
    in_task = in_task_of(c.config, release, basis, decoder)
    if in_task is None:
        return None, {"labeller": None}
    labels = label_pool(c.config, release, basis, decoder, seed=c.randomness.public_seed("labels"), in_task=in_task)
    assert labels is not None  # labels are made wherever an in-task estimate is: for territories
    in_task.save(c.folder.path / IN_TASK_FILE)
    labels.save(c.folder.path / POOL_LABELS_FILE)
    c.say(in_task.line(c.modality.noun))
    return labels, {"labeller": labels.labeller, "assigned": labels.assigned()}


_LABELLER_WORDS = {"class-model": "by the DP class model",
                   "pixel-cnn": "by the DP class model and a small CNN it teaches on the pool's pixels"}


def _describe_labels(c: RunContext) -> str:
    if not has_territories(c.config, c.products.decoder):
        return "nothing to label (the decoder draws new samples instead of choosing public ones)"
    return (f"labelling the public pool {_LABELLER_WORDS[c.config.pool_labeller]}, and finding which of it looks like "
            "your classes at all (post-processing, free)")


LABELS = Stage(
    name="labels", pays=False, resumable=False, reads_private=lambda config: False,
    describe=_describe_labels, run=_run_labels, load=lambda c, _: labeller_output(c.folder))


# --- verdict ----------------------------------------------------------------------------------------------------

def has_verdict(config: RunConfig) -> bool:
    """Whether the run's private samples judge the pool's labellings (a share of ε for the verdict)."""
    return config.privacy.split[VERDICT_STAGE] > 0


def _run_verdict(c: RunContext) -> tuple[PoolLabels | None, dict[str, Any]]:
    labels = c.products.labels
    if not has_verdict(c.config) or labels is None:
        return labels, {"generations": 0}
    assert c.private is not None
    basis, release, decoder = c.products.public_features.basis, c.products.release, c.products.decoder
    settings = VerdictSettings(step=c.config.search.verdict_step)
    path, noise = c.folder.path / VERDICT_FILE, c.randomness.noise(VERDICT_STAGE)
    # The ledger says how many selections were paid for. A kill between a charge and the save below loses that
    # generation's choice, never its price: the resumed verdict continues from the last saved choice and runs only
    # the generations the plan still pays for.
    state = VerdictState.from_json(read_json(path)) if path.exists() else VerdictState.start(len(c.class_names),
                                                                                           settings)
    rounds = c.config.search.verdict_generations - len(c.ledger.events(VERDICT_STAGE))
    if rounds > 0:  # else every planned selection is paid (a kill after the last charge): nothing left to read
        epsilon = VERDICT_ROUNDS.epsilon(c.ledger, rounds)
        _, private_features = c.products.representation.encode_both(c.private.samples, batch_size=256,
                                                                        progress=c.progress)

        def select(mechanism: Any, counts: np.ndarray) -> int:
            return mechanism.release(counts, ledger=c.ledger, stage=VERDICT_STAGE, noise=noise,
                                     description="verdict: one labelling of the pool among its neighbours")

        in_task = load_in_task(c.folder)
        state = run_verdict(labels, basis.reduce(decoder.pool_encodings()), territory_sizes(c.config, release, in_task),
                            eligible=eligible(in_task), private_view=basis.reduce(private_features),
                            private_labels=c.private.labels, rounds=rounds, epsilon=epsilon, select=select,
                            state=state, settings=settings, neighbouring=c.ledger.neighbouring,
                            on_generation=lambda s: atomic_write_json(path, s.to_json()))
        del private_features
    final = shifted_labels(labels, state.offsets)
    moved = float(np.mean(final.predicted != labels.predicted))
    c.say(f"verdict: {state.generation} generations chose per-class offsets "
          f"{', '.join(f'{v:+.2f}' for v in state.offsets)}; {moved:.1%} of the pool changed class")
    return final, {"generations": state.generation, "offsets": [float(v) for v in state.offsets],
                   "selection_epsilon": c.ledger.events(VERDICT_STAGE)[-1].epsilon,
                   "pool_relabelled": round(moved, 3),
                   "stage_epsilon": c.ledger.spent(VERDICT_STAGE)}


def _describe_verdict(c: RunContext) -> str:
    if not has_territories(c.config, c.products.decoder):
        return "nothing to judge (no pool labels: the decoder draws new samples)"
    if not has_verdict(c.config):
        # The default: the verdict's labellings were no better than the release's (docs/search.md §10).
        return ("off (privacy.split gives it no share of ε), so the pool keeps the release's labels: measured on "
                "the image demo, the verdict's best labelling, even without noise, moved them by under a point")
    return (f"the private samples choose among labellings of the pool, {c.config.search.verdict_generations} "
            "generations of the exponential mechanism")


VERDICT = Stage(
    name=VERDICT_STAGE, pays=True, resumable=True, reads_private=has_verdict,
    describe=_describe_verdict, run=_run_verdict, load=lambda c, _: load_pool_labels(c.folder))


# --- search -----------------------------------------------------------------------------------------------------

RANKED_FILE = "search/ranked.npz"


def _warn_thin_territories(c: RunContext, territories: ClassTerritories, release: StatisticsRelease) -> None:
    # Not errors (the run still delivers), but the user should know before sharing the set.
    modality = c.config.data.modality
    drawers = [name for name, traits in DECODER_TRAITS.items() if traits.makes(modality) and not traits.retrieval]
    in_task = load_in_task(c.folder)
    for line in thin_class_lines(
            c.class_names, territory_sizes=territories.sizes(), noun=c.modality.noun, drawers=drawers,
            delivered=delivered_counts(c.config, release, in_task),
            configured=configured_delivery_counts(c.config.search, release.statistics),
            mass=None if in_task is None or not in_task.separated else in_task.mass):
        c.say(line)


def _run_search(c: RunContext) -> tuple[SearchResult, dict[str, Any]]:
    config, search = c.config, c.config.search
    decoder, release, public_side = c.products.decoder, c.products.release, c.products.public_features
    basis = public_side.basis
    territories = class_territories(config, release, basis, decoder, c.products.verdict, load_in_task(c.folder))
    if territories is not None:
        c.folder.record("territories", sizes=territories.sizes(), **class_model_of(release, basis).summary())
        _warn_thin_territories(c, territories, release)
    model = round_trip_model(decoder, basis, public_side.pairs, territories)
    problem = build_problem(config, release, model, public=public_side, territories=territories)
    if search.evolve:
        result = _evolve(c, problem, exact=model.exact)
    else:
        start = problem.space.baseline()
        fitness = problem.evaluate(start).total
        result = SearchResult(vectors=start[None, :], fitness=np.array([fitness]), baseline_fitness=fitness,
                              generations=0)
    atomic_write_npz(c.folder.path / RANKED_FILE, vectors=result.vectors, fitness=result.fitness)
    return result, {"candidates": [{"fitness": float(f), "rank": i} for i, f in enumerate(result.fitness)],
                    "baseline_fitness": result.baseline_fitness, "generations": result.generations,
                    "evolved": search.evolve}


def _evolve(c: RunContext, problem: SearchProblem, *, exact: bool) -> SearchResult:
    """The evolution from the one-shot start, checkpointed every generation; its best individuals, best first.
    ``exact``: the problem's round trip is the decoder's own (retrieval), so it needs no real round-trip checks."""
    search, public_side = c.config.search, c.products.public_features
    encoder, decoder, basis = c.products.representation, c.products.decoder, public_side.basis

    def real_round_trip(z: np.ndarray) -> np.ndarray:
        return round_trip(z, basis=basis, decoder=decoder, encoder=encoder)[1]

    # A learned surrogate is checked against real round trips and refitted.
    outcome = run_search(problem, EvolutionSettings.from_config(search), seed=c.randomness.public_seed("search"),
                         folder=c.folder.path / "search", record=lambda r: c.folder.record("generation", **r),
                         round_trip=None if exact else real_round_trip,
                         surrogate_data=None if exact else public_side.pairs,
                         check_every=search.roundtrip_every, check_per_class=search.roundtrip_per_class,
                         progress=c.progress, executor=c.executor)
    ranked = rank_final(outcome.problem, outcome.engine, search.top_candidates)
    return SearchResult(vectors=np.stack([v for v, _ in ranked]), fitness=np.array([f for _, f in ranked]),
                        baseline_fitness=problem.evaluate(problem.space.baseline()).total,
                        generations=outcome.engine.generation)


def _load_search(c: RunContext, summary: dict[str, Any]) -> SearchResult:
    with np.load(c.folder.path / RANKED_FILE, allow_pickle=False) as arrays:
        return SearchResult(vectors=arrays["vectors"], fitness=arrays["fitness"],
                            baseline_fitness=float(summary["baseline_fitness"]),
                            generations=int(summary["generations"]))


SEARCH = Stage(
    name="search", pays=False, resumable=True, reads_private=lambda config: False,
    describe=lambda c: (f"evolution over the released statistics ({c.config.search.population} × up to "
                        f"{c.config.search.generations} generations)" if c.config.search.evolve else
                        "the one-shot start: the released class Gaussians, not evolved (search.evolve: false)"),
    run=_run_search, load=_load_search)


# --- delivery ---------------------------------------------------------------------------------------------------

def _run_delivery(c: RunContext) -> tuple[dict[str, Any], dict[str, Any]]:
    config, class_names = c.config, c.class_names
    encoder, decoder, release = c.products.representation, c.products.decoder, c.products.release
    public_side = c.products.public_features
    basis = public_side.basis
    # Class balance from the *noisy* counts (post-processing): exact private counts are not released.
    in_task = load_in_task(c.folder)
    counts = delivered_counts(config, release, in_task)
    territories = class_territories(config, release, basis, decoder, c.products.verdict, in_task)
    targets, space = search_targets(config, release, public_side, territories)
    delivered = decode_candidate(space, c.products.search.vectors[0], counts,
                                 oversample=config.search.delivery_oversample, rng=c.randomness.public("delivery"),
                                 basis=basis, encoder=encoder, decoder=decoder, targets=targets,
                                 territories=territories)
    labels, reencoded = delivered.labels, delivered.reencoded_classes
    written = c.modality.write_synthetic(c.folder.path / c.modality.delivered_name, delivered.samples, labels,
                                         class_names, c.layout, overwrite=True)  # the run's own folder
    write_synthetic_arrays(c.folder.path / "synthetic.npz", features=delivered.features,
                           coordinates=delivered.coordinates, labels=labels, class_names=class_names,
                           reencoded_classes=reencoded)
    records = generation_records(c.folder.records("generation"))
    if records:  # the search evolved (search.evolve); a one-shot start has no curve to draw
        write_fitness_curve(c.folder.path / "fitness_curve.png", records)
    summary = {"counts": [int(n) for n in counts], "delivered": written.relative_to(c.folder.path).as_posix(),
               "oversample": config.search.delivery_oversample,
               "reencode_agreement_drawn": delivered.drawn_agreement, "reencode_agreement": delivered.agreement,
               "reencode_cosine_mean": float(np.mean(delivered.cosine)),
               "reencode_agreement_per_class": [float(np.mean(reencoded[labels == k] == k))
                                                for k in range(len(class_names))], **decoder.delivery_notes}
    if in_task is not None:
        summary.update(in_task=in_task.summary(), pool=in_task.line(c.modality.noun))
    return summary, summary


DELIVERY = Stage(
    name="delivery", pays=False, resumable=True, reads_private=lambda config: False,
    describe=lambda c: "decoding the best candidate at full size and checking that each sample lands in its class",
    run=_run_delivery, load=lambda c, summary: summary)

#: The stages of a run with a public pool, in order.
STAGES: tuple[Stage, ...] = (REPRESENTATION, DECODER, PUBLIC_FEATURES, RELEASE, LABELS, VERDICT, SEARCH, DELIVERY)
