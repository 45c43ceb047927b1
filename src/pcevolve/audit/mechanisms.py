"""``pcevolve audit --mechanisms``: every DP mechanism a run can use, audited at a config's parameters.

The parameters come from :func:`pcevolve.pipeline.plan.plan_budget` — the σ and ε a run of the config will use
for ``num_samples`` private samples (:func:`planned`) — or, for a finished run, from its ledger's events
(:func:`recorded`). A mechanism the config does not use is audited at a reference setting
(σ = 1, ε = 1) and marked so. Each game (:mod:`pcevolve.audit.games`) is played ``trials`` times on each of its
two neighbouring inputs with secure noise (:class:`~pcevolve.privacy.noise.SecureNoise`, as a run draws it), and
:func:`~pcevolve.privacy.audit.audit_trade_off` turns the scores into a lower bound at 95 % confidence. A bound
above the claim means the code releases more than its proof allows; a bound below it does not prove the claim.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.audit.games import (
    Game,
    cluster_vote_game,
    decoder_step_game,
    dpsgd_step_game,
    histogram_game,
    release_game,
    selection_game,
)
from pcevolve.privacy.audit import TradeOffBound, audit_trade_off
from pcevolve.privacy.noise import NoiseSource, SecureNoise

if TYPE_CHECKING:
    from pcevolve.config import RunConfig
    from pcevolve.privacy.events import Neighbouring
    from pcevolve.privacy.ledger import BudgetLedger

#: Runs per dataset of each kind of game by default, enough for a bound near the claim at a cost of minutes (the
#: bounds reached and the cost of a run are in docs/privacy.md §10.2). An exponential mechanism's rare outcome must
#: be counted: 40,000 up to ε = 2, and 200,000 above, where it must be rarer than
#: e^−ε for a mechanism twice as loose as claimed to show (games.gap_nats).
GAUSSIAN_TRIALS = 5_000
DPSGD_TRIALS = 20_000
SELECTION_TRIALS = 40_000
LARGE_SELECTION_TRIALS = 200_000
#: The reference parameters of a mechanism the config does not use.
REFERENCE_NOISE_MULTIPLIER = 1.0
REFERENCE_EPSILON = 1.0


@dataclass(frozen=True)
class MechanismAudit:
    """One mechanism's audit: the game as played and the bound it gave."""

    name: str
    setting: str
    deployed: bool
    bound: TradeOffBound
    seconds: float

    @property
    def passed(self) -> bool:
        return self.bound.passed

    def to_json(self) -> dict[str, Any]:
        return {"mechanism": self.name, "setting": self.setting, "deployed": self.deployed,
                "seconds": round(self.seconds, 1), **self.bound.to_json()}


@dataclass(frozen=True)
class Deployed:
    """The parameters of the mechanisms a run uses (``None``: the run does not use it).

    Attributes:
        release_noise: The release's noise multiplier, its Gaussian events as one (the counts' alone before a vote).
        release_epsilon: The accountant's ε of the release stage (when it is all Gaussian).
        vote_epsilon: The pure ε of the classes' vote.
        selection_epsilon / selections: The ε of each of the verdict's selections, and how many there are.
        representation_noise / decoder_noise: σ of each DP-SGD stage.
        histogram_noise, histograms: A run without a public pool: its marginals release's noise multiplier and the
            cells of each histogram it releases (:mod:`pcevolve.synthesis.release`).
        source: Where the numbers come from, in words.
    """

    release_noise: float | None = None
    release_epsilon: float | None = None
    vote_epsilon: float | None = None
    selection_epsilon: float | None = None
    selections: int = 0
    representation_noise: float | None = None
    decoder_noise: float | None = None
    histogram_noise: float | None = None
    histograms: tuple[int, ...] = ()
    source: str = "the run"


def planned(config: "RunConfig", num_samples: int) -> Deployed:
    """What a run of ``config`` on ``num_samples`` private samples will use: :func:`~pcevolve.pipeline.plan.plan_budget`
    (the functions a run calls)."""
    from pcevolve.pipeline.plan import MadeReleasePlan, ReleasePlan, plan_budget
    from pcevolve.privacy.class_release import CLASS_STATISTICS

    plan = plan_budget(config, num_samples)
    release, verdict = plan.release, plan.verdict
    stages = {name: stage.noise_multiplier for name, stage in (("representation", plan.representation),
                                                               ("decoder", plan.decoder))
              if stage is not None and not stage.refused}
    made = isinstance(release, MadeReleasePlan)
    parameters = CLASS_STATISTICS.parameters(() if made else plan.events_of(CLASS_STATISTICS.stage))
    return Deployed(
        release_noise=parameters.noise_multiplier,
        release_epsilon=release.epsilon if isinstance(release, ReleasePlan) else None,
        vote_epsilon=parameters.vote_epsilon,
        selection_epsilon=None if verdict is None else verdict.selection_epsilon,
        selections=0 if verdict is None else verdict.generations,
        representation_noise=stages.get("representation"), decoder_noise=stages.get("decoder"),
        histogram_noise=(release.noise_multipliers["marginals"] if isinstance(release, MadeReleasePlan) else None),
        histograms=_table_histograms(config) if isinstance(release, MadeReleasePlan) else (),
        source="the config's plan")


def recorded(ledger: "BudgetLedger") -> Deployed:
    """What a finished run used, read from its ledger's events: the σ and ε it was charged for."""
    from pcevolve.privacy.class_release import CLASS_STATISTICS
    from pcevolve.privacy.events import SubsampledGaussianSteps
    from pcevolve.privacy.selection_rounds import VERDICT_ROUNDS

    def of(stage: str, kind: type = object) -> list[Any]:
        return [event for event in ledger.events(stage) if isinstance(event, kind)] if stage in ledger.stages else []

    release = CLASS_STATISTICS.parameters(of(CLASS_STATISTICS.stage))
    selection_epsilon, selections = VERDICT_ROUNDS.parameters(of(VERDICT_ROUNDS.stage))
    steps = {stage: of(stage, SubsampledGaussianSteps) for stage in ("representation", "decoder")}
    gaussian = release.noise_multiplier is not None and release.vote_epsilon is None
    return Deployed(
        release_noise=release.noise_multiplier,
        release_epsilon=ledger.spent(CLASS_STATISTICS.stage) if gaussian else None,
        vote_epsilon=release.vote_epsilon,
        selection_epsilon=selection_epsilon, selections=selections,
        representation_noise=min((e.noise_multiplier for e in steps["representation"]), default=None),
        decoder_noise=min((e.noise_multiplier for e in steps["decoder"]), default=None),
        source="the run's ledger")


def mechanism_games(config: "RunConfig", num_samples: int, *, scale: float = 1.0,
                    deployed: Deployed | None = None) -> list[Game]:
    """The games of every mechanism, at the parameters ``deployed`` gives them (default: :func:`planned` for
    ``config`` and ``num_samples``); a mechanism it does not use is played at a reference setting.

    ``num_samples`` is also the size of the release game's simulated private set. ``scale`` multiplies every game's
    trial count (tests use a fraction).
    """
    used = planned(config, num_samples) if deployed is None else deployed
    privacy = config.privacy
    delta, relation = privacy.delta, privacy.neighbouring
    gaussian_trials = max(20, int(GAUSSIAN_TRIALS * scale))
    dpsgd_trials = max(20, int(DPSGD_TRIALS * scale))

    def selection_trials(epsilon: float) -> int:
        return max(20, int((SELECTION_TRIALS if epsilon <= 2 else LARGE_SELECTION_TRIALS) * scale))
    rng = np.random.default_rng(config.seed)  # the games' public inputs
    games: list[Game] = []
    unused = "not used by this run" if deployed is not None else "not used by this config"

    if config.makes_samples:  # a table without a pool releases histograms, not class statistics of features
        if deployed is not None:
            used = dataclasses.replace(used, **{key: getattr(planned(config, num_samples), key) for key in
                                                ("histogram_noise", "histograms", "release_noise")})
        z = used.histogram_noise or REFERENCE_NOISE_MULTIPLIER
        games.append(histogram_game(
            noise_multiplier=z, histograms=used.histograms or (2, 16, 16), num_samples=num_samples, delta=delta,
            neighbouring=relation, claimed_epsilon=_gaussian_claim(z, delta, relation),
            deployed=used.histogram_noise is not None, trials=gaussian_trials, rng=rng,
            setting=(f"{used.source}: the marginals' release, σ = {z:.4f}" if used.histogram_noise is not None else
                     f"{unused}: reference σ = {REFERENCE_NOISE_MULTIPLIER:g}")))
        used = dataclasses.replace(used, release_noise=None, release_epsilon=None)
    settings = _release_settings(config, rng)
    if used.release_noise is not None and used.vote_epsilon is None:
        z = used.release_noise
        setting = f"{used.source}: the release's events as one Gaussian, σ = {z:.4f}"
    elif used.release_noise is not None:
        # The run releases only the class sizes at this σ; the game releases every statistic at it (stricter).
        z, setting = used.release_noise, (f"{used.source}: the class sizes' σ = {used.release_noise:.4f} (before "
                                          "the vote), every statistic released at it")
    else:
        z, setting = REFERENCE_NOISE_MULTIPLIER, f"{unused}: reference σ = {REFERENCE_NOISE_MULTIPLIER:g}"
    claimed = used.release_epsilon if used.release_epsilon is not None else _gaussian_claim(z, delta, relation)
    games.append(release_game(noise_multiplier=z, settings=settings, num_samples=num_samples, delta=delta,
                              neighbouring=relation, claimed_epsilon=claimed, deployed=used.release_noise is not None,
                              trials=gaussian_trials, rng=rng, setting=setting))
    vote = used.vote_epsilon
    games.append(cluster_vote_game(
        epsilon=vote or REFERENCE_EPSILON, width=1.0, delta=delta, neighbouring=relation, deployed=vote is not None,
        trials=selection_trials(vote or REFERENCE_EPSILON),
        setting=(f"{used.source}: the vote, ε = {vote:.4f}" if vote is not None else
                 f"{unused}: reference ε = {REFERENCE_EPSILON:g}")))
    selection = used.selection_epsilon
    games.append(selection_game(
        epsilon=selection or REFERENCE_EPSILON, delta=delta, neighbouring=relation,
        monotone=relation == "add_remove", deployed=selection is not None,
        trials=selection_trials(selection or REFERENCE_EPSILON),
        setting=(f"{used.source}: each of the verdict's {used.selections} selections, ε = {selection:.4f}"
                 if selection is not None else f"the verdict's kind; {unused}: reference ε = {REFERENCE_EPSILON:g}")))
    # Each DP-SGD stage has its own step code: ghost-norm clipping for the representation, materialised per-sample
    # gradients for the decoder.
    for name, sigma, make in (("representation", used.representation_noise, dpsgd_step_game),
                              ("decoder", used.decoder_noise, decoder_step_game)):
        if sigma is not None:
            games.append(make(noise_multiplier=sigma, delta=delta, neighbouring=relation, deployed=True,
                              trials=dpsgd_trials,
                              setting=f"{used.source}: one {name} step, σ = {sigma:.4f}, the canary in the batch"))
        else:
            games.append(make(noise_multiplier=REFERENCE_NOISE_MULTIPLIER, delta=delta, neighbouring=relation,
                              deployed=False, trials=dpsgd_trials,
                              setting=f"{unused}: reference σ = {REFERENCE_NOISE_MULTIPLIER:g}"))
    return games


def play(game: Game, *, trials: int | None = None, alpha: float = 0.05,
         noise: Callable[[], NoiseSource] | None = None, progress: bool = False) -> MechanismAudit:
    """Play ``game`` ``trials`` times on each input (its default if ``None``) and bound it.

    ``noise`` makes the source every run draws from; default :class:`~pcevolve.privacy.noise.SecureNoise`, as a
    run's mechanisms draw (tests pass a seeded one where they need a result that repeats). ``progress``: a bar (or
    lines) on standard error, one step per run.
    """
    import time

    from pcevolve.progress import progress_bar

    count = game.trials if trials is None else trials
    source = (noise or SecureNoise)()
    started = time.perf_counter()
    bar = progress_bar(2 * count, game.name, "runs", enabled=progress)
    scores: dict[bool, np.ndarray] = {}
    try:
        for side in (False, True):
            played = []
            for _ in range(count):
                played.append(game.play(side, source))
                bar.update(1)
            scores[side] = np.array(played)
    finally:
        bar.close()
    bound = audit_trade_off(scores[False], scores[True], model=game.model, claimed_epsilon=game.claimed_epsilon,
                            claimed_mu=game.claimed_mu, alpha=alpha, delta=game.delta)
    return MechanismAudit(game.name, game.setting, game.deployed, bound, time.perf_counter() - started)


def _table_histograms(config: "RunConfig") -> tuple[int, ...]:
    """The cells of each histogram a run without a pool releases in its marginals (K, then K × bins per column)."""
    from pcevolve.data.table_schema import TableSchema
    from pcevolve.synthesis.bins import width_bins

    assert config.data.schema_file is not None and config.data.classes is not None
    classes = len(config.data.classes)
    schema = TableSchema.load(config.data.schema_file)
    return (classes, *(classes * width_bins(column, config.synthesis.bins).size for column in schema.columns))


def _release_settings(config: "RunConfig", rng: np.random.Generator) -> Any:
    """The release's settings for the game: the config's statistics, shares and rule over a public basis whose
    variances fall off as a run's principal directions do; clip radius 1 (the bound scales with it)."""
    from pcevolve.privacy.statistics import RandomFourierFeatures
    from pcevolve.privacy.class_release import ReleaseSettings

    search = config.search
    dim = config.basis_size
    variances = 1.0 / np.arange(1, dim + 1) / dim
    rff = RandomFourierFeatures.draw(dim, search.rff_features, bandwidth=float(np.sqrt(variances.sum())), rng=rng)
    # The classes are the user's declaration; a config that leaves them to the image folders is audited with 2.
    classes = len(config.data.classes) if config.data.classes else 2
    return ReleaseSettings(num_classes=classes, clip_norm=1.0, rff=rff, shares=search.release_shares,
                           public_variances=variances, min_snr=search.release_min_snr, dim=search.release_dim)


def _gaussian_claim(noise_multiplier: float, delta: float, relation: "Neighbouring") -> float:
    """The accountant's ε of one Gaussian release of this noise multiplier."""
    from pcevolve.privacy.accounting import account
    from pcevolve.privacy.events import GaussianRelease

    return float(account([GaussianRelease(noise_multiplier)], delta=delta, neighbouring=relation).epsilon)
