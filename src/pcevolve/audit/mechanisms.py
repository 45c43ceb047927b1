"""``pcevolve audit --mechanisms``: every DP mechanism a run can use, audited at a config's parameters.

The parameters come from :func:`pcevolve.pipeline.plan.plan_budget` — the σ and ε a run of the config will use
for ``num_samples`` private samples. A mechanism the config does not use is audited at a reference setting
(σ = 1, ε = 1) and marked so. Each game (:mod:`pcevolve.audit.games`) is played ``trials`` times on each of its
two neighbouring inputs with secure noise (:class:`~pcevolve.privacy.noise.SecureNoise`, as a run draws it), and
:func:`~pcevolve.privacy.audit.audit_trade_off` turns the scores into a lower bound at 95 % confidence. A bound
above the claim means the code releases more than its proof allows; a bound below it does not prove the claim.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.audit.games import (
    Game,
    cluster_vote_game,
    decoder_step_game,
    dpsgd_step_game,
    release_game,
    selection_game,
)
from pcevolve.privacy.audit import TradeOffBound, audit_trade_off
from pcevolve.privacy.noise import NoiseSource, SecureNoise

if TYPE_CHECKING:
    from pcevolve.config import RunConfig
    from pcevolve.privacy.events import Neighbouring

#: Runs per dataset of each kind of game by default. The release's μ bound comes within about 10 % of μ at 5,000
#: (17 ms a run at the demo's size); a DP-SGD step of the game's projector takes about 1 ms. An exponential
#: mechanism's rare outcome must be counted: 40,000 up to ε = 2, and 200,000 above, where it must be rarer than
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


def mechanism_games(config: "RunConfig", num_samples: int, *, scale: float = 1.0) -> list[Game]:
    """The games of every mechanism, at the parameters ``config`` gives them for ``num_samples`` private samples.

    ``scale`` multiplies every game's trial count (tests use a fraction).
    """
    from pcevolve.pipeline.plan import ReleasePlan, VotePlan, plan_budget

    plan = plan_budget(config, num_samples)
    privacy = config.privacy
    delta, relation = privacy.delta, privacy.neighbouring
    gaussian_trials = max(20, int(GAUSSIAN_TRIALS * scale))
    dpsgd_trials = max(20, int(DPSGD_TRIALS * scale))

    def selection_trials(epsilon: float) -> int:
        return max(20, int((SELECTION_TRIALS if epsilon <= 2 else LARGE_SELECTION_TRIALS) * scale))
    rng = np.random.default_rng(config.seed)  # the games' public inputs
    games: list[Game] = []

    release = plan.release
    settings = _release_settings(config, rng)
    if isinstance(release, ReleasePlan):
        z, deployed = release.noise_multiplier, True
        setting = f"the run's two events as one Gaussian, σ = {z:.4f}"
    elif isinstance(release, VotePlan):
        # The run releases only the class sizes at this σ; the game releases every statistic at it (stricter).
        z, deployed = release.count_noise_multiplier, True
        setting = f"the class sizes' σ = {z:.4f} (before the vote), every statistic released at it"
    else:
        z, deployed = REFERENCE_NOISE_MULTIPLIER, False
        setting = f"not used by this config: reference σ = {z:g}"
    claimed = release.epsilon if isinstance(release, ReleasePlan) else _gaussian_claim(z, delta, relation)
    games.append(release_game(noise_multiplier=z, settings=settings, num_samples=num_samples, delta=delta,
                              neighbouring=relation, claimed_epsilon=claimed, deployed=deployed,
                              trials=gaussian_trials, rng=rng, setting=setting))
    if isinstance(release, VotePlan):
        games.append(cluster_vote_game(epsilon=release.vote_epsilon, width=1.0, delta=delta, neighbouring=relation,
                                       deployed=True, trials=selection_trials(release.vote_epsilon),
                                       setting=f"the run's vote, ε = {release.vote_epsilon:.4f}"))
    else:
        games.append(cluster_vote_game(epsilon=REFERENCE_EPSILON, width=1.0, delta=delta, neighbouring=relation,
                                       deployed=False, trials=selection_trials(REFERENCE_EPSILON),
                                       setting=f"not used by this config: reference ε = {REFERENCE_EPSILON:g}"))
    verdict = plan.verdict
    monotone = relation == "add_remove"
    if verdict is not None:
        games.append(selection_game(epsilon=verdict.selection_epsilon, delta=delta, neighbouring=relation,
                                    monotone=monotone, deployed=True,
                                    trials=selection_trials(verdict.selection_epsilon),
                                    setting=f"each of the verdict's {verdict.generations} selections, "
                                            f"ε = {verdict.selection_epsilon:.4f}"))
    else:
        games.append(selection_game(epsilon=REFERENCE_EPSILON, delta=delta, neighbouring=relation, monotone=monotone,
                                    deployed=False, trials=selection_trials(REFERENCE_EPSILON),
                                    setting=f"the verdict's kind; not used by this config: reference ε = "
                                            f"{REFERENCE_EPSILON:g}"))
    # Each DP-SGD stage has its own step code: ghost-norm clipping for the representation, materialised per-sample
    # gradients for the decoder.
    for name, stage, make in (("representation", plan.representation, dpsgd_step_game),
                              ("decoder", plan.decoder, decoder_step_game)):
        if stage is not None and not stage.refused:
            games.append(make(noise_multiplier=stage.noise_multiplier, delta=delta, neighbouring=relation,
                              deployed=True, trials=dpsgd_trials,
                              setting=f"one {name} step, σ = {stage.noise_multiplier:.4f}, the canary in the batch"))
        else:
            z = REFERENCE_NOISE_MULTIPLIER
            games.append(make(noise_multiplier=z, delta=delta, neighbouring=relation, deployed=False,
                              trials=dpsgd_trials, setting=f"not used by this config: reference σ = {z:g}"))
    return games


def play(game: Game, *, trials: int | None = None, alpha: float = 0.05,
         noise: Callable[[], NoiseSource] = SecureNoise) -> MechanismAudit:
    """Play ``game`` ``trials`` times on each input (its default if ``None``) and bound it."""
    import time

    count = game.trials if trials is None else trials
    source = noise()
    started = time.perf_counter()
    scores = {side: np.array([game.play(side, source) for _ in range(count)]) for side in (False, True)}
    bound = audit_trade_off(scores[False], scores[True], model=game.model, claimed_epsilon=game.claimed_epsilon,
                            claimed_mu=game.claimed_mu, alpha=alpha, delta=game.delta)
    return MechanismAudit(game.name, game.setting, game.deployed, bound, time.perf_counter() - started)


def _release_settings(config: "RunConfig", rng: np.random.Generator) -> Any:
    """The release's settings for the game: the config's statistics, shares and rule over a public basis whose
    variances fall off as a run's principal directions do; clip radius 1 (the bound scales with it)."""
    from pcevolve.privacy.statistics import RandomFourierFeatures
    from pcevolve.search.release import ReleaseSettings

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
