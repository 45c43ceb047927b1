"""The release of class statistics: the one DP release the search is allowed to see.

Per class, from the private features reduced to the public basis (z = Bᵀ(u − c), clipped to a
public radius C): noisy count, sum — over the leading basis directions the class sizes can pay
for (:mod:`pcevolve.privacy.release_rule`), clipped to the public radius of those coordinates —
and, when the sums cover the whole basis and the class sizes pay for them, the full second
moment Σ z zᵀ and the sum of random Fourier features of z. Two Gaussian events in the ledger's
``release`` stage: the counts first, then the rest on what the accountant says is left, so the two
compose to the stage's budget. Their neighbouring relation and sensitivity are stated in
:mod:`pcevolve.privacy.statistics`. After this call the search holds only the noisy result;
everything it computes from it is post-processing.

With ``search.class_means: votes`` the second event is not a Gaussian: the classes are given distinct public
clusters by one draw of the exponential mechanism on their private samples' votes
(:class:`~pcevolve.privacy.cluster_vote.ClusterVote`), on what the accountant says the counts left; the
chosen centres are the class means (no sums, second moments or RFF sums are released).

:data:`CLASS_STATISTICS` states the stage's events once (:meth:`ClassStatisticsFamily.events`): the run releases
through them (:meth:`~ClassStatisticsFamily.release`), ``pcevolve budget plan`` charges them, and the audit reads
its parameters from them (:meth:`~ClassStatisticsFamily.parameters`), planned or recorded.

The RFF bandwidth and frequencies are public (the caller's ``settings``): neither depends on the private data,
and neither shares a generator with the release's noise (which is secure by default).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from pcevolve.privacy.calibration import gaussian_noise_multiplier, stage_gaussian_noise_multiplier
from pcevolve.privacy.cluster_vote import ClusterVote
from pcevolve.privacy.events import ExponentialSelection, GaussianRelease, Neighbouring, PrivacyEvent
from pcevolve.privacy.ledger import BudgetLedger
from pcevolve.privacy.noise import NoiseSource
from pcevolve.privacy.release_rule import REST, ReleaseChoice, choose_components, typical_class_size
from pcevolve.privacy.released_statistics import StatisticsRelease, VoteChoice, pad_columns
from pcevolve.privacy.statistics import (
    ClassStatisticsRelease,
    NoisyClassStatistics,
    RandomFourierFeatures,
    component_noise_stds,
)

STAGE = "release"


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


@dataclass(frozen=True)
class ReleaseParameters:
    """What the audit plays the release at, read off the stage's events (planned or recorded).

    ``noise_multiplier``: the Gaussian events as one (the counts' alone before a vote); ``vote_epsilon``: the
    classes' vote's pure ε (``None``: no vote)."""

    noise_multiplier: float | None
    vote_epsilon: float | None


class ClassStatisticsFamily:
    """The release stage's mechanism family: its events stated once, the release made through them."""

    stage = STAGE

    def events(self, ledger: BudgetLedger, count_share: float, *, votes: bool,
               noise_multiplier: float | None = None) -> Iterator[tuple[str, PrivacyEvent]]:
        """The stage's events in the order they are charged, each named.

        Each is calibrated on ``ledger`` as it stands when it is asked for, so a caller charges one before asking
        for the next; the Gaussian pair is calibrated whole before the first is given (from the counts' charge
        until ``release.npz`` is saved a kill loses the budget, so only the draws sit in that window).

        Args:
            count_share: The counts' share (``search.release_shares[0]``): of a shared Gaussian's noise, or, before
                a vote, of the ε left of the stage.
            votes: The class means are a vote among public clusters (``search.class_means: votes``).
            noise_multiplier: ``None``: the events spend what is left of the stage, calibrated by the accountant;
                a number: the release's noise as one Gaussian (the counts' alone before a vote), as given.
        """
        budget = ledger.remaining(STAGE)
        if votes:
            if noise_multiplier is None:
                noise_multiplier = gaussian_noise_multiplier(count_share * budget, ledger.delta,
                                                             neighbouring=ledger.neighbouring,
                                                             pld_discretization=ledger.pld_discretization) \
                    if budget > 0 else 1.0
            yield "counts", GaussianRelease(noise_multiplier)
            yield "vote", ExponentialSelection(vote_epsilon(ledger))
            return
        if noise_multiplier is not None:
            z_count, z_rest = split_noise_multiplier(noise_multiplier, count_share)
        else:
            # A zero budget has nothing to calibrate against: any release is refused by the ledger.
            whole = gaussian_noise_multiplier(budget, ledger.delta, neighbouring=ledger.neighbouring,
                                              pld_discretization=ledger.pld_discretization) if budget > 0 else 1.0
            z_count = split_noise_multiplier(whole, count_share)[0]
            z_rest = stage_gaussian_noise_multiplier(ledger, STAGE, planned=(GaussianRelease(z_count),)) \
                if budget > 0 else 1.0
        yield "counts", GaussianRelease(z_count)
        yield "the rest", GaussianRelease(z_rest)

    def parameters(self, events: Iterable[PrivacyEvent]) -> ReleaseParameters:
        """The release's noise and vote, from the stage's events as :meth:`events` states them."""
        events = list(events)
        gaussians = [event.noise_multiplier for event in events if isinstance(event, GaussianRelease)]
        votes = [event.epsilon for event in events if isinstance(event, ExponentialSelection)]
        noise = None
        if gaussians:
            noise = gaussians[0] if votes else combined_noise_multiplier(*gaussians)
        return ReleaseParameters(noise, max(votes) if votes else None)

    def release(self, private_coordinates: np.ndarray, labels: np.ndarray, *, settings: ReleaseSettings,
                ledger: BudgetLedger, noise: NoiseSource,
                noise_multiplier: float | None = None) -> tuple[StatisticsRelease, ReleaseChoice]:
        """Release the class statistics of private coordinates through the events of :meth:`events`.

        First the counts (share ``settings.count_share``), then the statistics the rule of
        :mod:`pcevolve.privacy.release_rule` keeps for the noisy counts (or the classes' vote), on what is left.

        Args:
            noise_multiplier: ``None`` (default): the whole release spends the stage's remaining budget,
                calibrated by the accountant. A number: the noise of the release as one Gaussian, split
                between the two events; the ledger refuses what does not fit.

        Raises:
            BudgetExceeded: The ledger refused (no budget left, or a given noise multiplier costs
                too much); nothing is drawn for the refused event.
        """
        events = self.events(ledger, settings.count_share, votes=settings.votes, noise_multiplier=noise_multiplier)
        _, count_event = next(events)
        counting = ClassStatisticsRelease(num_classes=settings.num_classes, clip_norm=settings.clip_norm,
                                          noise_multiplier=_stated(count_event, GaussianRelease).noise_multiplier,
                                          components=("count",), neighbouring=ledger.neighbouring)
        counted = counting.release(private_coordinates, labels, ledger=ledger, stage=STAGE, noise=noise,
                                   description="class sizes (before the vote for each class's public cluster)"
                                   if settings.votes else "class sizes (the first of the two class-statistics "
                                                          "events)")
        _, second = next(events)
        if settings.votes:
            return _vote(private_coordinates, labels, counting, counted, settings=settings, ledger=ledger,
                         noise=noise, epsilon=_stated(second, ExponentialSelection).epsilon)
        z_rest = _stated(second, GaussianRelease).noise_multiplier
        choice = choose(counted.counts, settings, noise_multiplier=z_rest, neighbouring=ledger.neighbouring)
        mechanism = rest_mechanism(choice, settings, noise_multiplier=z_rest, neighbouring=ledger.neighbouring)
        coordinates = np.asarray(private_coordinates)[:, :choice.dim]
        rest = mechanism.release(coordinates, labels, ledger=ledger, stage=STAGE, noise=noise,
                                 description=f"class statistics in {choice.dim} of the {choice.basis_dim} public "
                                             f"basis directions: {', '.join(choice.components)}")
        statistics = NoisyClassStatistics(counts=counted.counts, sums=pad_columns(rest.sums, choice.basis_dim),
                                          second_moments=rest.second_moments, rff_sums=rest.rff_sums,
                                          noise_stds={**counted.noise_stds, **rest.noise_stds})
        return StatisticsRelease(statistics=statistics, rff=settings.rff, clip_norm=settings.radius(choice.dim),
                                 noise_multiplier=combined_noise_multiplier(counting.noise_multiplier, z_rest),
                                 dim=choice.dim), choice


#: The release stage's mechanism family: what the run, the plan and the audit all read.
CLASS_STATISTICS = ClassStatisticsFamily()


def _stated(event: PrivacyEvent, kind: type) -> "PrivacyEvent":
    """``event``, checked to be of the kind the release draws next (a family's events out of step with its release
    would charge one mechanism and draw another)."""
    if not isinstance(event, kind):
        raise TypeError(f"the release stage stated a {type(event).__name__} where it draws a {kind.__name__}")
    return event


def _vote(private_coordinates: np.ndarray, labels: np.ndarray, counting: ClassStatisticsRelease,
          counted: NoisyClassStatistics, *, settings: ReleaseSettings, ledger: BudgetLedger, noise: NoiseSource,
          epsilon: float) -> tuple[StatisticsRelease, ReleaseChoice]:
    """The classes' public clusters by :class:`~pcevolve.privacy.cluster_vote.ClusterVote` at the stated ε."""
    centres = np.asarray(settings.vote_centres, dtype=np.float64)
    vote = ClusterVote(epsilon, ledger.neighbouring, width=settings.vote_width)
    chosen = vote.select(private_coordinates, labels, centres, classes=settings.num_classes, ledger=ledger,
                         stage=STAGE, noise=noise,
                         description=f"a public cluster for each class among {len(centres)} (exponential mechanism)")
    choice = VoteChoice(centres=centres, chosen=chosen, counts=counted.counts,
                        count_noise_std=counted.noise_stds["count"])
    p = centres.shape[1]
    rule = ReleaseChoice(components=("vote",), shares={"vote": 1.0}, signal_to_noise={},
                         typical_count=typical_class_size(counted.counts), dim=p, basis_dim=p)
    return StatisticsRelease(statistics=choice.statistics(), rff=settings.rff, clip_norm=settings.clip_norm,
                             noise_multiplier=counting.noise_multiplier, dim=p, vote=choice), rule


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
    """:func:`~pcevolve.privacy.release_rule.choose_components` with a run's settings."""
    return choose_components(noisy_counts, noise_multiplier=noise_multiplier, shares=settings.rest_shares(),
                             clip_norm=settings.clip_norm, public_variances=settings.public_variances,
                             rff_features=settings.rff.num_features // 2, neighbouring=neighbouring,
                             min_snr=settings.min_snr, clip_radii=settings.clip_radii, dim=settings.dim)


@dataclass(frozen=True)
class UnitNoise:
    """Every statistic's noise at a clip radius of 1 and a class of one sample, every statistic kept: what
    ``pcevolve budget plan`` shows of the rule (:mod:`pcevolve.privacy.release_rule`) before any count is known.

    ``stds``: per component (units of C, C², 1); ``kept_from``: the smallest typical class size at which the rule
    keeps the second moment (in units of C² / v₁) and the RFF sum; ``sum_alone``: a class sum's noise std per
    coordinate when the sums take the whole second event (the dimension rule's view)."""

    stds: dict[str, float]
    kept_from: dict[str, float]
    sum_alone: float


def unit_noise(count_noise: float, rest_noise: float, *, shares: tuple[float, float, float, float], dim: int,
               rff_features: int, min_snr: float, neighbouring: Neighbouring) -> UnitNoise:
    """:class:`UnitNoise` for the two events' noise multipliers and the release's public settings (``dim``: the
    basis size, ``rff_features``: m)."""
    rff = RandomFourierFeatures(frequencies=np.zeros((rff_features, dim)), bandwidth=1.0)
    settings = ReleaseSettings(num_classes=1, clip_norm=1.0, rff=rff, shares=shares, public_variances=np.ones(dim),
                               min_snr=0.0)
    every = choose(np.ones(1), settings, noise_multiplier=rest_noise, neighbouring=neighbouring)
    counts = {"count": count_noise_std(count_noise, neighbouring)}
    rest = rest_mechanism(every, settings, noise_multiplier=rest_noise, neighbouring=neighbouring).noise_stds()
    # A statistic is kept when signal · n̂ / std ≥ min_snr (release_rule.py), i.e. from n̂ = min_snr / ratio.
    kept_from = {c: min_snr / every.signal_to_noise[c] for c in ("second_moment", "rff")}
    sum_alone = component_noise_stds(rest_noise, {"sum": 1.0}, clip_norm=1.0, neighbouring=neighbouring)["sum"]
    return UnitNoise({**counts, **rest}, kept_from, sum_alone)


def count_noise_std(noise_multiplier: float, neighbouring: Neighbouring) -> float:
    """The noise std on each released class size of a counts event at ``noise_multiplier``."""
    return component_noise_stds(noise_multiplier, {"count": 1.0}, clip_norm=1.0, neighbouring=neighbouring)["count"]


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
