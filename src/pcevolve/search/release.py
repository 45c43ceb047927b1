"""The one DP release the search is allowed to see, and its file form.

Per class, from the private features reduced to the public basis (z = Bᵀ(u − c), clipped to a
public radius C): noisy count, sum — over the leading basis directions the class sizes can pay
for (:mod:`pcevolve.search.release_rule`), clipped to the public radius of those coordinates —
and, when the sums cover the whole basis and the class sizes pay for them, the full second
moment Σ z zᵀ and the sum of random Fourier features of z. Two ``ClassStatisticsRelease`` events in
the ledger's ``release`` stage:
the counts first, then the rest on what the accountant says is left, so the two compose to the
stage's budget. Their neighbouring relation and sensitivity are stated in
:mod:`pcevolve.privacy.statistics`. After this call the search holds only the noisy result;
everything it computes from it is post-processing.

With ``search.class_means: votes`` the second event is not a Gaussian: the classes are given distinct public
clusters by one draw of the exponential mechanism on their private samples' votes
(:class:`~pcevolve.privacy.cluster_vote.ClusterVote`), on what the accountant says the counts left; the
chosen centres are the class means (no sums, second moments or RFF sums are released). In the statistics
the search reads, a class's "sum" is then its centre times its class size, with no additive noise.

The RFF bandwidth is the median pairwise distance of *public* coordinates and the frequencies
come from the run's public ``rff`` stream: neither depends on the private data, and neither
shares a generator with the release's noise (which is secure by default). The frequencies are
saved in ``release.npz``; drawn from the noise's own generator they would let anyone subtract
the noise (``pcevolve.randomness``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pcevolve.io import atomic_write_npz
from pcevolve.privacy import BudgetLedger, NoiseSource
from pcevolve.privacy.calibration import (
    gaussian_noise_multiplier,
    stage_gaussian_noise_multiplier,
)
from pcevolve.privacy.cluster_vote import ClusterVote
from pcevolve.privacy.events import ExponentialSelection, Neighbouring, PrivacyEvent
from pcevolve.privacy.statistics import (
    ClassStatisticsRelease,
    NoisyClassStatistics,
    RandomFourierFeatures,
)
from pcevolve.search.release_rule import (
    REST,
    ReleaseChoice,
    choose_components,
    typical_class_size,
)

STAGE = "release"


def public_bandwidth(public_coordinates: np.ndarray, *, rng: np.random.Generator, pairs: int = 20000) -> float:
    """Median distance between random pairs of public coordinates (the RBF length-scale ℓ)."""
    z = np.asarray(public_coordinates, dtype=np.float64)
    first, second = rng.integers(0, len(z), size=(2, pairs))
    keep = first != second
    distances = np.linalg.norm(z[first[keep]] - z[second[keep]], axis=1)
    return float(np.median(distances)) if distances.size else 1.0


#: Class sizes after a vote are floored here: every reader of the statistics (class model, fitness targets) then
#: takes each class's own mean — its centre — instead of falling back to pooled statistics for a tiny class.
_PROTOTYPE_MIN_COUNT = 2.0


@dataclass(frozen=True, eq=False)
class VoteChoice:
    """A vote's outcome: the public centres the classes voted among (M, P), each class's choice (K,), and the noisy
    class sizes released before it with their noise std."""

    centres: np.ndarray
    chosen: np.ndarray
    counts: np.ndarray
    count_noise_std: float

    @property
    def means(self) -> np.ndarray:
        """(K, P): the chosen centres, the classes' means."""
        return np.asarray(self.centres, dtype=np.float64)[np.asarray(self.chosen, dtype=np.int64)]

    def statistics(self) -> NoisyClassStatistics:
        """The statistics the search reads (post-processing): as counts, the class sizes estimated from the noisy
        counts (:meth:`~pcevolve.privacy.statistics.NoisyClassStatistics.class_sizes`, at least 2), marked
        noise-free so that nobody shrinks them again; as "sums", each chosen centre times its class size, also
        noise-free (the centre is public; its error is the choice's, not additive noise)."""
        counted = NoisyClassStatistics(counts=np.asarray(self.counts, dtype=np.float64), sums=None,
                                       second_moments=None, rff_sums=None,
                                       noise_stds={"count": float(self.count_noise_std)})
        sizes = counted.class_sizes(min_count=_PROTOTYPE_MIN_COUNT)
        return NoisyClassStatistics(counts=sizes, sums=self.means * sizes[:, None], second_moments=None,
                                    rff_sums=None, noise_stds={"count": 0.0, "sum": 0.0})


@dataclass(frozen=True, eq=False)
class StatisticsRelease:
    """The released statistics with the public settings needed to use them.

    Attributes:
        statistics: The noisy statistics over the whole basis; ``second_moments`` / ``rff_sums`` are
            ``None`` when the rule (:mod:`pcevolve.search.release_rule`) did not release them, and the sums'
            coordinates past ``dim`` are 0 — the public centre, all that is known of a class there.
        rff: The public random Fourier features (released or not, they are public).
        clip_norm: C, the radius the released coordinates were clipped to.
        noise_multiplier: Of the whole release as one Gaussian: the two events' noise multipliers
            z₁, z₂ compose to (z₁⁻² + z₂⁻²)^{-1/2}.
        dim: d̂, the leading basis directions the sums were released in.
    """

    statistics: NoisyClassStatistics
    rff: RandomFourierFeatures
    clip_norm: float
    noise_multiplier: float
    dim: int
    vote: VoteChoice | None = None

    def save(self, path: str | os.PathLike[str]) -> Path:
        """One npz (no pickle), written atomically; statistics not released are absent, and the sums are saved
        as released (their first d̂ coordinates) with the basis size to pad them back. After a vote the centres
        and the choices are saved instead of sums."""
        s = self.statistics
        released = {"counts": s.counts, "sums": s.sums[:, :self.dim], "second_moments": s.second_moments,
                    "rff_sums": s.rff_sums}
        stds = dict(s.noise_stds)
        if self.vote is not None:  # what was released: the noisy counts and the choices among public centres
            released = {"counts": self.vote.counts, "vote_centres": self.vote.centres, "vote_chosen": self.vote.chosen}
            stds = {"count": self.vote.count_noise_std}
        arrays = {**{k: v for k, v in released.items() if v is not None},
                  "rff_frequencies": self.rff.frequencies, "rff_bandwidth": np.array(self.rff.bandwidth),
                  "clip_norm": np.array(self.clip_norm), "noise_multiplier": np.array(self.noise_multiplier),
                  "basis_dim": np.array(s.sums.shape[1]),
                  "noise_std_names": np.array(list(stds)), "noise_std_values": np.array(list(stds.values()),
                                                                                         dtype=np.float64)}
        return atomic_write_npz(path, **arrays)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "StatisticsRelease":
        with np.load(path, allow_pickle=False) as data:
            stds = {str(k): float(v) for k, v in zip(data["noise_std_names"], data["noise_std_values"], strict=True)}
            rff = RandomFourierFeatures(frequencies=data["rff_frequencies"], bandwidth=float(data["rff_bandwidth"]))
            common = {"rff": rff, "clip_norm": float(data["clip_norm"]),
                      "noise_multiplier": float(data["noise_multiplier"])}
            if "vote_chosen" in data:
                vote = VoteChoice(centres=data["vote_centres"], chosen=data["vote_chosen"], counts=data["counts"],
                                  count_noise_std=stds["count"])
                return cls(statistics=vote.statistics(), dim=vote.centres.shape[1], vote=vote, **common)
            optional = {k: (data[k] if k in data else None) for k in ("second_moments", "rff_sums")}
            sums = data["sums"]
            basis_dim = int(data["basis_dim"]) if "basis_dim" in data else sums.shape[1]
            statistics = NoisyClassStatistics(counts=data["counts"], sums=pad_columns(sums, basis_dim),
                                              noise_stds=stds, **optional)
            return cls(statistics=statistics, dim=sums.shape[1], **common)


def pad_columns(values: np.ndarray, width: int) -> np.ndarray:
    """(K, d) → (K, width) with zeros after the first d columns (a class's unreleased coordinates sit at the
    public centre)."""
    padded = np.zeros((values.shape[0], width), dtype=np.float64)
    padded[:, :values.shape[1]] = values
    return padded


@dataclass(frozen=True)
class ReleaseSettings:
    """The public settings of a run's release (``search`` section of the config).

    ``clip_radii``: C(d) of the leading d coordinates, d = 1 … P (``clip_norm`` is C(P)); ``None`` keeps
    the sums over the whole basis. ``dim``: a fixed number of released directions instead of the rule.
    ``vote_centres``: (M, P) public cluster centres; given, the classes vote among them instead of releasing sums,
    with partial votes of kernel width ``vote_width`` (public; 0: whole votes only).
    """

    num_classes: int
    clip_norm: float
    rff: RandomFourierFeatures
    shares: tuple[float, float, float, float]
    public_variances: np.ndarray
    min_snr: float
    clip_radii: np.ndarray | None = None
    dim: int | None = None
    vote_centres: np.ndarray | None = None
    vote_width: float = 0.0

    @property
    def votes(self) -> bool:
        """The class means are chosen among ``vote_centres`` (``search.class_means: votes``)."""
        return self.vote_centres is not None

    def radius(self, dim: int) -> float:
        """C(d): the clip radius of the leading ``dim`` coordinates."""
        # The whole basis reads clip_norm itself, not clip_radii[-1] (the same quantile, summed in another order):
        # a release over every direction is clipped exactly as before the dimension rule existed.
        if self.clip_radii is None or dim == len(self.public_variances):
            return float(self.clip_norm)
        return float(self.clip_radii[dim - 1])

    @property
    def count_share(self) -> float:
        return float(self.shares[0])

    def rest_shares(self) -> dict[str, float]:
        return dict(zip(REST, self.shares[1:], strict=True))


def split_noise_multiplier(noise_multiplier: float, count_share: float) -> tuple[float, float]:
    """The two events' noise multipliers whose composition is one Gaussian of ``noise_multiplier``:
    z / √w for the counts (share w) and z / √(1 − w) for the rest."""
    return noise_multiplier / math.sqrt(count_share), noise_multiplier / math.sqrt(1.0 - count_share)


def combined_noise_multiplier(*noise_multipliers: float) -> float:
    """The noise multiplier of one Gaussian release equivalent to these composed: (Σ z_i⁻²)^{-1/2}."""
    return math.fsum(z ** -2 for z in noise_multipliers) ** -0.5


def count_mechanism(ledger: BudgetLedger, settings: ReleaseSettings,
                    noise_multiplier: float | None = None) -> ClassStatisticsRelease:
    """The first event: the per-class counts, with share ``count_share`` of the stage (no data read).

    ``noise_multiplier=None``: the share of the smallest noise whose single Gaussian fits the
    stage's remaining budget, found by the accountant; a number: that release's noise as given.
    """
    budget = ledger.remaining(STAGE)
    if noise_multiplier is None:
        # A zero budget has nothing to calibrate against: any release is refused by the ledger.
        noise_multiplier = gaussian_noise_multiplier(budget, ledger.delta, neighbouring=ledger.neighbouring,
                                                     pld_discretization=ledger.pld_discretization) \
            if budget > 0 else 1.0
    z_count, _ = split_noise_multiplier(noise_multiplier, settings.count_share)
    return ClassStatisticsRelease(num_classes=settings.num_classes, clip_norm=settings.clip_norm,
                                  noise_multiplier=z_count, components=("count",), neighbouring=ledger.neighbouring)


def vote_count_mechanism(ledger: BudgetLedger, settings: ReleaseSettings,
                         noise_multiplier: float | None = None) -> ClassStatisticsRelease:
    """The counts before a vote: a Gaussian whose own ε is ``count_share`` of what is left of the stage
    (``noise_multiplier``: as given instead). The vote takes the rest, so the counts' share is of ε, not of a
    shared Gaussian's noise as in :func:`count_mechanism`: at 10 samples per class and ε = 1 that would cost a
    fifth of the stage for class sizes whose noise (std ≈ 17) is larger than the classes."""
    budget = ledger.remaining(STAGE)
    if noise_multiplier is None:
        noise_multiplier = gaussian_noise_multiplier(settings.count_share * budget, ledger.delta,
                                                     neighbouring=ledger.neighbouring,
                                                     pld_discretization=ledger.pld_discretization) \
            if budget > 0 else 1.0
    return ClassStatisticsRelease(num_classes=settings.num_classes, clip_norm=settings.clip_norm,
                                  noise_multiplier=noise_multiplier, components=("count",),
                                  neighbouring=ledger.neighbouring)


def rest_noise_multiplier(ledger: BudgetLedger, settings: ReleaseSettings,
                          noise_multiplier: float | None = None, *, counts: PrivacyEvent | None = None) -> float:
    """The second event's noise multiplier: what is left of the stage after the counts, by the ledger's
    accountant (``noise_multiplier=None``), or the rest's part of a given single-release noise.

    ``counts``: the counts' event when it is not charged yet (the release calibrates both before either charge).
    """
    if noise_multiplier is not None:
        return split_noise_multiplier(noise_multiplier, settings.count_share)[1]
    if ledger.remaining(STAGE) <= 0:
        return 1.0  # nothing to calibrate against: the ledger refuses the counts before any noise is drawn
    return stage_gaussian_noise_multiplier(ledger, STAGE, planned=() if counts is None else (counts,))


def release_noise(ledger: BudgetLedger, settings: ReleaseSettings,
                  noise_multiplier: float | None = None) -> tuple[ClassStatisticsRelease, float]:
    """The two events' noise, both calibrated before either is charged: the counts' mechanism
    (:func:`count_mechanism`) and the rest's noise multiplier (:func:`rest_noise_multiplier`). What a run releases
    with and what ``pcevolve budget plan`` charges, so that the two cannot drift apart."""
    counting = count_mechanism(ledger, settings, noise_multiplier)
    return counting, rest_noise_multiplier(ledger, settings, noise_multiplier, counts=counting.event)


def rest_mechanism(choice: ReleaseChoice, settings: ReleaseSettings, *, noise_multiplier: float,
                   neighbouring: Neighbouring) -> ClassStatisticsRelease:
    """The second event: the statistics the rule kept, in their shares, at the given noise multiplier, clipped to
    the radius of the released directions."""
    return ClassStatisticsRelease(num_classes=settings.num_classes, clip_norm=settings.radius(choice.dim),
                                  noise_multiplier=noise_multiplier, components=choice.components,
                                  second_moment="full", rff=settings.rff, shares=choice.shares,
                                  neighbouring=neighbouring)


def choose(noisy_counts: np.ndarray, settings: ReleaseSettings, *, noise_multiplier: float,
           neighbouring: Neighbouring) -> ReleaseChoice:
    """:func:`~pcevolve.search.release_rule.choose_components` with a run's settings."""
    return choose_components(noisy_counts, noise_multiplier=noise_multiplier, shares=settings.rest_shares(),
                             clip_norm=settings.clip_norm, public_variances=settings.public_variances,
                             rff_features=settings.rff.num_features // 2, neighbouring=neighbouring,
                             min_snr=settings.min_snr, clip_radii=settings.clip_radii, dim=settings.dim)


def release_statistics(private_coordinates: np.ndarray, labels: np.ndarray, *, settings: ReleaseSettings,
                       ledger: BudgetLedger, noise: NoiseSource,
                       noise_multiplier: float | None = None) -> tuple[StatisticsRelease, ReleaseChoice]:
    """Release the class statistics of private coordinates in two events of the ledger's ``release`` stage.

    First the counts (share ``settings.count_share``), then the statistics the rule of
    :mod:`pcevolve.search.release_rule` keeps for the noisy counts, on what is left of the stage.

    Args:
        noise_multiplier: ``None`` (default): the whole release spends the stage's remaining budget,
            calibrated by the accountant. A number: the noise of the release as one Gaussian, split
            between the two events; the ledger refuses what does not fit.

    Raises:
        BudgetExceeded: The ledger refused (no budget left, or a given noise multiplier costs
            too much); nothing is drawn for the refused event.
    """
    if settings.votes:
        return _release_votes(private_coordinates, labels, settings=settings, ledger=ledger, noise=noise,
                              noise_multiplier=noise_multiplier)
    # Both noise levels are calibrated before the first charge: from that charge until release.npz is saved, a
    # kill loses the budget (it cannot be paid twice), so only the draws themselves sit in that window.
    counting, z_rest = release_noise(ledger, settings, noise_multiplier)
    counted = counting.release(private_coordinates, labels, ledger=ledger, stage=STAGE, noise=noise,
                               description="class sizes (the first of the two class-statistics events)")
    choice = choose(counted.counts, settings, noise_multiplier=z_rest, neighbouring=ledger.neighbouring)
    mechanism = rest_mechanism(choice, settings, noise_multiplier=z_rest, neighbouring=ledger.neighbouring)
    coordinates = np.asarray(private_coordinates)[:, :choice.dim]
    rest = mechanism.release(coordinates, labels, ledger=ledger, stage=STAGE, noise=noise,
                             description=f"class statistics in {choice.dim} of the {choice.basis_dim} public basis "
                                         f"directions: {', '.join(choice.components)}")
    statistics = NoisyClassStatistics(counts=counted.counts, sums=pad_columns(rest.sums, choice.basis_dim),
                                      second_moments=rest.second_moments, rff_sums=rest.rff_sums,
                                      noise_stds={**counted.noise_stds, **rest.noise_stds})
    return StatisticsRelease(statistics=statistics, rff=settings.rff, clip_norm=settings.radius(choice.dim),
                             noise_multiplier=combined_noise_multiplier(counting.noise_multiplier, z_rest),
                             dim=choice.dim), choice


def _release_votes(private_coordinates: np.ndarray, labels: np.ndarray, *, settings: ReleaseSettings,
                   ledger: BudgetLedger, noise: NoiseSource,
                   noise_multiplier: float | None) -> tuple[StatisticsRelease, ReleaseChoice]:
    """The counts (:func:`vote_count_mechanism`), then the classes' public clusters by
    :class:`~pcevolve.privacy.cluster_vote.ClusterVote` on the ε the accountant says is left of the stage."""
    centres = np.asarray(settings.vote_centres, dtype=np.float64)
    counting = vote_count_mechanism(ledger, settings, noise_multiplier)
    counted = counting.release(private_coordinates, labels, ledger=ledger, stage=STAGE, noise=noise,
                               description="class sizes (before the vote for each class's public cluster)")
    vote = ClusterVote(vote_epsilon(ledger), ledger.neighbouring, width=settings.vote_width)
    chosen = vote.select(private_coordinates, labels, centres, classes=settings.num_classes, ledger=ledger,
                         stage=STAGE, noise=noise,
                         description=f"a public cluster for each class among {len(centres)} (exponential mechanism)")
    choice = VoteChoice(centres=centres, chosen=chosen, counts=counted.counts,
                        count_noise_std=counted.noise_stds["count"])
    statistics = choice.statistics()
    p = centres.shape[1]
    rule = ReleaseChoice(components=("vote",), shares={"vote": 1.0}, signal_to_noise={},
                         typical_count=typical_class_size(counted.counts), dim=p, basis_dim=p)
    return StatisticsRelease(statistics=statistics, rff=settings.rff, clip_norm=settings.clip_norm,
                             noise_multiplier=counting.noise_multiplier, dim=p, vote=choice), rule


def vote_epsilon(ledger: BudgetLedger) -> float:
    """The largest ε of one exponential selection the ledger accepts in the release stage now: what is left of the
    stage and of the total (a pure ε adds to the accountant's PLD bound as it is), less rounding."""
    epsilon = min(ledger.remaining(STAGE), ledger.remaining())
    for _ in range(8):
        if epsilon <= 0 or ledger.can_afford(STAGE, ExponentialSelection(epsilon)):
            break
        epsilon *= 1.0 - 1e-9
    # Nothing left: the smallest selection, which the ledger then refuses with its own account of the stage.
    return epsilon if epsilon > 0 else _NO_EPSILON


_NO_EPSILON = 1e-12
