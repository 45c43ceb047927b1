"""How a run's search is assembled from its saved outputs: pure functions of the config, the DP release and public
data, shared by the run's stages (:mod:`pcevolve.pipeline.stages`), a resumed run, the audit and the benchmarks.

The public features (basis, round-trip pairs, clip radius, bandwidth), the pool labels and the class territories cut
by them, the DP class model, and the search problem: each is rebuilt exactly from the files a run saved
(``public_features.npz``, ``release.npz``, ``pool_labels.npz``, ``verdict.json``, the decoder's pool), so that a
resumed run and a benchmark reading a finished run folder get the same objects as the run that made them. Only the
public random streams are drawn here (from ``seed``); no mechanism noise and no private data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.encoders.pixel_view import PixelLayout
from pcevolve.fitness import FitnessTargets
from pcevolve.io import read_json
from pcevolve.randomness import run_randomness
from pcevolve.run_folder import RunFolder
from pcevolve.search.basis import PublicBasis
from pcevolve.search.class_model import ClassModel
from pcevolve.search.delivery import configured_delivery_counts
from pcevolve.search.in_task import InTask, eligible, estimate_in_task, in_task_counts
from pcevolve.search.pool_labels import PoolLabels, co_trained, softmax
from pcevolve.search.problem import SearchProblem
from pcevolve.privacy.released_statistics import StatisticsRelease
from pcevolve.search.roundtrip import ExactRoundTrip, RoundTripSurrogate, SurrogateData
from pcevolve.search.space import ClassFrames, SearchSpace
from pcevolve.decoders.territories import ClassTerritories
from pcevolve.search.territory import cut_territories
from pcevolve.search.verdict import shifted_labels

if TYPE_CHECKING:
    from pcevolve.config import RunConfig
    from pcevolve.decoders import Decoder


PUBLIC_FEATURES_FILE = "public_features.npz"


@dataclass(frozen=True)
class PublicFeatures:
    """What the search takes from the public pool: the basis, the round trip's public pairs, the clip radius of
    the release (``clip_radii[d - 1]``: of the leading d coordinates; ``clip_norm`` of all), the bandwidth of
    its random features and the public spread within groups of similar features (``local_variances``,
    :func:`~pcevolve.search.basis.local_variances`; a run saved before it existed reads the basis variances), and
    with ``search.class_means: votes`` the public cluster centres the classes vote among (``vote_centres``,
    :func:`~pcevolve.privacy.cluster_vote.public_clusters`) and the kernel width of their partial votes
    (``vote_width``; a run saved before it existed reads 0, whole votes)."""

    basis: PublicBasis
    pairs: SurrogateData
    clip_norm: float
    bandwidth: float
    clip_radii: np.ndarray | None = None
    local_variances: np.ndarray | None = None
    vote_centres: np.ndarray | None = None
    vote_width: float = 0.0

    @property
    def class_spread(self) -> np.ndarray:
        """(P, P): what a class's covariance is taken to be when neither the release nor territories give it."""
        return np.diag(self.basis.variances if self.local_variances is None else self.local_variances)


def load_public_features(folder: RunFolder) -> PublicFeatures:
    """The public features a run saved (``public_features.npz``)."""
    with np.load(folder.path / PUBLIC_FEATURES_FILE, allow_pickle=False) as data:
        arrays = dict(data)
    basis = PublicBasis.from_arrays({k[len("basis_"):]: v for k, v in arrays.items() if k.startswith("basis_")})
    pairs = SurrogateData(arrays["pairs_inputs"], arrays["pairs_outputs"], {})
    return PublicFeatures(basis, pairs, float(arrays["clip_norm"]), float(arrays["bandwidth"]),
                          arrays.get("clip_radii"), arrays.get("local_variances"), arrays.get("vote_centres"),
                          float(arrays.get("vote_width", 0.0)))


def pixel_directions(encoder: Any, frequencies: int) -> np.ndarray | None:
    """The pixel view's ``frequencies`` × ``frequencies`` lowest spatial frequencies as directions of the encoder's
    search features (data-free), or None when not asked for (``search.pixel_frequencies`` 0)."""
    if frequencies == 0:
        return None
    layout = PixelLayout.of(encoder.meta)
    if layout is None:  # the config check refuses this before anything runs
        raise ValueError("search.pixel_frequencies needs an encoder with a pixel view (representation.pixel_view)")
    return layout.cosine_directions(frequencies, encoder.feature_dim)


POOL_LABELS_FILE = "pool_labels.npz"
IN_TASK_FILE = "in_task.npz"  # the labels stage's in-task estimate (search/in_task.py)
VERDICT_FILE = "verdict.json"  # the private verdict's per-class offsets (pipeline/stages.py's verdict stage)


def label_pool(config: RunConfig, release: StatisticsRelease, basis: PublicBasis, decoder: Decoder, *,
               seed: int, in_task: InTask | None) -> PoolLabels | None:
    """The run's labels of a retrieval decoder's pool (:mod:`pcevolve.search.pool_labels`), or None without
    territories; ``in_task`` (:func:`in_task_of`) sizes the pixel CNN's classes as the territories. Reads the release
    and public data only; deterministic for ``seed`` on a CPU."""
    if not has_territories(config, decoder):
        return None
    coordinates = basis.reduce(decoder.pool_encodings())
    model = class_model_of(release, basis)
    first = PoolLabels.from_class_model(model, coordinates)
    if config.pool_labeller == "class-model":
        return first
    return co_trained(decoder.pool_samples(), first, model.scores(coordinates),
                      per_class=territory_sizes(config, release, in_task),
                      outside_share=config.search.labeller_outside,
                      seed=seed, flip=config.augment.flip)


def load_in_task(folder: RunFolder) -> InTask | None:
    """The in-task estimate the labels stage saved, or None (no territories, or a run made before it existed: the
    whole pool then stays a candidate, as it was)."""
    path = folder.path / IN_TASK_FILE
    return InTask.load(path) if path.exists() else None


def labeller_output(folder: RunFolder) -> PoolLabels | None:
    """The labels stage's own pool labels (before any verdict), or None when the run has no territories."""
    path = folder.path / POOL_LABELS_FILE
    return PoolLabels.load(path) if path.exists() else None


def load_pool_labels(folder: RunFolder) -> PoolLabels | None:
    """The pool labels a run's territories are cut by (None: the run has no territories): the labels stage's,
    moved by the private verdict's offsets when the run has a verdict (``verdict.json``)."""
    labels = labeller_output(folder)
    path = folder.path / VERDICT_FILE
    if labels is None or not path.exists():
        return labels
    return shifted_labels(labels, np.asarray(read_json(path)["offsets"], dtype=np.float64))


def class_model_of(release: StatisticsRelease, basis: PublicBasis) -> ClassModel:
    """The run's DP class model: the release's means with the public variances of the basis (post-processing)."""
    return ClassModel.from_release(release.statistics, basis.variances, released_dim=release.dim)


def has_territories(config: RunConfig, decoder: Decoder) -> bool:
    """Whether the run cuts class territories: a retrieval decoder (it has a pool) and ``search.territory`` > 0."""
    return config.search.territory > 0 and decoder.pool_encodings() is not None


def in_task_of(config: RunConfig, release: StatisticsRelease, basis: PublicBasis, decoder: Decoder) -> InTask | None:
    """Which of a retrieval decoder's pool looks like the task's classes at all (:mod:`pcevolve.search.in_task`), or
    None without territories; the whole pool with ``search.in_task`` off. Post-processing; deterministic. The labels
    stage computes it once and saves it (:data:`IN_TASK_FILE`, :func:`load_in_task`)."""
    if not has_territories(config, decoder):
        return None
    coordinates = basis.reduce(decoder.pool_encodings())
    posterior = softmax(class_model_of(release, basis).scores(coordinates))
    if not config.search.in_task:
        return InTask.everything(posterior)
    return estimate_in_task(release.statistics, release.rff, coordinates, posterior)


def delivered_counts(config: RunConfig, release: StatisticsRelease, in_task: InTask | None) -> np.ndarray:
    """Samples delivered per class: the configured size split by the noisy counts
    (:func:`~pcevolve.search.delivery.configured_delivery_counts`), and, when the in-task estimate sets part of the
    pool aside, never more than ``search.in_task_fraction`` of each class's in-task mass (:func:`in_task_counts`)."""
    counts = configured_delivery_counts(config.search, release.statistics)
    if in_task is None or not in_task.separated:
        return counts
    return in_task_counts(counts, in_task.mass, fraction=config.search.in_task_fraction)


def territory_sizes(config: RunConfig, release: StatisticsRelease, in_task: InTask | None) -> np.ndarray:
    """Each class's territory size: ``search.territory`` × its delivered count (:func:`delivered_counts`)."""
    return np.ceil(config.search.territory * delivered_counts(config, release, in_task)).astype(np.int64)


def class_territories(config: RunConfig, release: StatisticsRelease, basis: PublicBasis,
                      decoder: Decoder, labels: PoolLabels | None, in_task: InTask | None) -> ClassTerritories | None:
    """Each class's part of a retrieval decoder's pool (``search.territory`` per delivered sample), cut by the
    run's pool ``labels`` (:func:`label_pool`, saved by the labels stage) from the pool samples that look like the
    task at all (``in_task``: :func:`in_task_of`, saved by the labels stage; None: the whole pool); None without
    territories.

    A pure function of the config, the release, the basis, the decoder's pool and the labels: a resumed run and a
    benchmark reading the run folder (:func:`load_pool_labels`) get the same territories.
    """
    if not has_territories(config, decoder):
        return None
    if labels is None:
        raise ValueError("territories need the run's pool labels (the labels stage saved none)")
    sizes = territory_sizes(config, release, in_task)
    return cut_territories(basis.reduce(decoder.pool_encodings()), labels, sizes,
                               eligible=eligible(in_task))


def search_targets(config: RunConfig, release: StatisticsRelease, public: PublicFeatures,
                   territories: ClassTerritories | None) -> tuple[FitnessTargets, SearchSpace]:
    """The DP fitness targets and the search space around the released Gaussians (pure: same inputs, same draws).

    The label discriminant (consistency term, delivery check) is the run's DP class model
    (:mod:`pcevolve.search.class_model`): public variances of the basis, not the noisy DP class
    covariances, kept to the directions where the released means rise above their noise. Without
    released second moments a class's covariance is its territory's spread when there are
    territories (:mod:`pcevolve.search.territory`), else the public spread within groups of similar
    public features (:attr:`PublicFeatures.class_spread`).
    """
    targets = FitnessTargets.from_release(release.statistics, release.rff,
                                          validation_per_class=config.search.validation_per_class,
                                          rng=run_randomness(config).public("search"),
                                          discriminant_covariance=class_model_of(release, public.basis).covariance,
                                          public_covariance=public.class_spread if territories is None
                                          else territories.spreads)
    return targets, SearchSpace(ClassFrames.from_gaussians(targets.means, targets.covariances))


def build_problem(config: RunConfig, release: StatisticsRelease,
                  surrogate: RoundTripSurrogate | ExactRoundTrip | None, *, public: PublicFeatures,
                  territories: ClassTerritories | None) -> SearchProblem:
    """The search problem of a run: DP targets, the space around the released Gaussians, fixed draws.

    A pure function of the config, the release, the public features, the round-trip model and the
    territories (:func:`class_territories`, themselves a pure function of the run), so a resumed run (or
    a benchmark reading a finished run folder) rebuilds exactly the same problem.
    """
    search = config.search
    targets, space = search_targets(config, release, public, territories)
    return SearchProblem.build(space, targets, search.weights, surrogate, per_class=search.candidate_per_class,
                               eval_seeds=search.eval_seeds, seed=run_randomness(config).public_seed("search"))
