"""Distinguishing games for the DP mechanisms a run can use, played through the deployed code with the deployed noise.

A game fixes two neighbouring inputs D and D′ — D′ holds one worst-case record more (add/remove) or one record
replaced by it (replace-one) — and one run of the mechanism on either gives a real score; the runner
(:mod:`pcevolve.audit.mechanisms`) plays it many times and bounds the mechanism's privacy from the scores
(:func:`pcevolve.privacy.audit.audit_trade_off`). What each game runs:

* **release**: :meth:`pcevolve.privacy.class_release.ClassStatisticsFamily.release` — the run's two class-statistics
  events (noisy class sizes, then the sums, second moments and RFF sums the rule keeps), clipping included. The
  worst-case record lies 100 clip radii out along the first basis direction. Score: the likelihood-ratio statistic,
  the released values' distance from D's exact ones projected on D′'s shift, each coordinate over its noise variance.
  Exact values come from the same code with the noise switched off (:class:`NoNoise`), so a bug that changes them
  (clipping skipped) shows in the shift as well as in the trials.
* **cluster vote**: :class:`pcevolve.privacy.cluster_vote.ClusterVote` — two classes among three public centres;
  D′ adds a record of class 0 at a centre its class rarely gets. Score: class 0 got that centre.
* **exponential selection** (the verdict's): :class:`pcevolve.privacy.mechanisms.ExponentialMechanism` with
  monotone counts — D′ adds a record the first of two candidates gets right. Score: the first was chosen.
* **decoder DP-SGD step**: :func:`pcevolve.decoders.dp.per_sample_gradients` and
  :meth:`pcevolve.privacy.dpsgd.DPSGDMechanism.noisy_gradient` (materialised per-sample gradients), the same way.
* **DP-SGD step**: the representation's step, :func:`pcevolve.encoders.per_sample.per_sample_norms_and_clipped_sum`
  (ghost-norm clipping) and :meth:`pcevolve.privacy.dpsgd.DPSGDMechanism.noisy_gradient_from_norms` on a small
  projector of the deployed layer kinds, with the canary in the batch (the Gaussian core of a step; the sampling's
  amplification is the accountant's, from dp-accounting). The canary input is scaled up 100-fold, so its gradient
  is far above the clip norm. Score: the noisy sum projected on D′'s shift.

The games charge a :class:`TallyLedger`, which records each run's events and refuses seeded noise when secure noise
is promised, but composes nothing: the audit measures what a mechanism *releases*; the ledger's arithmetic is
the accountant's, recomputed by the ledger's own tests and by ``pcevolve ledger verify``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.privacy.audit import Model
from pcevolve.privacy.events import ExponentialSelection, GaussianRelease, Neighbouring, PrivacyEvent
from pcevolve.privacy.noise import NoiseSource

if TYPE_CHECKING:
    from pcevolve.privacy.class_release import ReleaseSettings


class NoNoise(NoiseSource):
    """Draws nothing: a mechanism run through it returns its exact value (the game's reference points only)."""

    def uniform(self, size: int | tuple[int, ...]) -> np.ndarray:
        return np.full(size, 0.5)

    def normal(self, scale: float, size: int | tuple[int, ...]) -> np.ndarray:
        return np.zeros(size)

    def laplace(self, scale: float, size: int | tuple[int, ...]) -> np.ndarray:
        return np.zeros(size)


@dataclass
class TallyLedger:
    """A stand-in for :class:`~pcevolve.privacy.ledger.BudgetLedger` in games: accepts every charge and keeps it.

    Attributes:
        neighbouring: The relation the mechanisms must state.
        delta: The run's δ.
        secure: Refuse a charge whose noise source is not secure (as a run's ledger does).
        events: Every event charged, in order.
    """

    neighbouring: Neighbouring
    delta: float
    secure: bool = True
    pld_discretization: float = 1e-3
    events: list[PrivacyEvent] = field(default_factory=list)

    @property
    def reproducible_noise(self) -> bool:
        return not self.secure

    def remaining(self, stage: str | None = None) -> float:
        return math.inf

    def can_afford(self, stage: str, event: PrivacyEvent) -> bool:
        return True

    def check_noise(self, noise: NoiseSource) -> None:
        if self.secure and not noise.secure:
            raise ValueError(f"this game promises secure noise; {type(noise).__name__} is reproducible")

    def charge(self, stage: str, event: PrivacyEvent, *, description: str = "",
               noise: NoiseSource | None = None) -> None:
        if noise is not None:
            self.check_noise(noise)
        self.events.append(event)


@dataclass(frozen=True)
class Game:
    """One mechanism's distinguishing game.

    Attributes:
        name: The mechanism, as the report names it.
        setting: Its parameters in words (σ, ε, where they come from).
        model: ``"gdp"`` (Gaussian: the claim is μ) or ``"pure"`` (exponential: the claim is ε).
        claimed_epsilon: The accountant's ε for one run of the game's events, at ``delta`` (pure ε for ``"pure"``).
        claimed_mu: The μ of the game's Gaussian events (``"gdp"``).
        delta: The run's δ.
        deployed: The config uses this mechanism with these parameters (else a reference setting).
        play: ``play(neighbour, noise)``: one run on D (``False``) or D′ (``True``), its score.
        trials: Runs per dataset the runner plays by default.
    """

    name: str
    setting: str
    model: Model
    claimed_epsilon: float
    claimed_mu: float | None
    delta: float
    deployed: bool
    play: Callable[[bool, NoiseSource], float]
    trials: int


# --------------------------------------------------------------------------- the release of class statistics

#: How far out the release's worst-case record lies, in clip radii: far enough that skipped clipping shows.
CANARY_RADII = 100.0


def release_game(*, noise_multiplier: float, settings: "ReleaseSettings", num_samples: int, delta: float,
                 neighbouring: Neighbouring, claimed_epsilon: float, deployed: bool, trials: int,
                 rng: np.random.Generator, setting: str) -> Game:
    """The class-statistics release at one noise multiplier (both events as one Gaussian; split as a run splits it).

    D: ``num_samples`` records spread over the classes, Gaussian in the basis with the settings' public variances.
    D′: D plus a record of class 0 at ``CANARY_RADII`` clip radii along the first direction (add/remove), or D
    with its last record (of another class) replaced by that one (replace-one).
    """
    from pcevolve.privacy.class_release import CLASS_STATISTICS

    classes, dim = settings.num_classes, len(settings.public_variances)
    labels = np.arange(num_samples) % classes
    if neighbouring == "replace_one" and labels[-1] == 0:
        labels[-1] = 1  # the replaced record changes class: the replace-one worst case
    coordinates = rng.normal(size=(num_samples, dim)) * np.sqrt(settings.public_variances)
    canary = np.zeros(dim)
    canary[0] = CANARY_RADII * settings.clip_norm
    if neighbouring == "add_remove":
        coords_p, labels_p = np.vstack([coordinates, canary]), np.append(labels, 0)
    else:
        coords_p, labels_p = coordinates.copy(), labels.copy()
        coords_p[-1], labels_p[-1] = canary, 0
    inputs = {False: (coordinates, labels), True: (coords_p, labels_p)}

    def run(neighbour: bool, noise: NoiseSource) -> Any:
        ledger = TallyLedger(neighbouring, delta, secure=noise.secure)
        points, classes_of = inputs[neighbour]
        release, _ = CLASS_STATISTICS.release(points, classes_of, settings=settings, ledger=ledger, noise=noise,
                                             noise_multiplier=noise_multiplier)
        return release.statistics

    exact = {side: _released_arrays(run(side, NoNoise())) for side in (False, True)}

    def play(neighbour: bool, noise: NoiseSource) -> float:
        statistics = run(neighbour, noise)
        released = _released_arrays(statistics)
        score = 0.0
        for name, values in released.items():
            base, shifted = exact[False].get(name), exact[True].get(name)
            if base is None or shifted is None or base.shape != values.shape or shifted.shape != values.shape:
                continue  # the rule kept another set on this run's noisy counts: a function of the output still
            variance = statistics.noise_stds[_STD_OF[name]] ** 2
            score += float(np.sum((values - base) * (shifted - base))) / variance
        return score

    return Game(name="class statistics release (Gaussian)", setting=setting, model="gdp",
                claimed_epsilon=claimed_epsilon, claimed_mu=1.0 / noise_multiplier, delta=delta, deployed=deployed,
                play=play, trials=trials)


_STD_OF = {"counts": "count", "sums": "sum", "second_moments": "second_moment", "rff_sums": "rff"}


# --------------------------------------------------------------------------- a table's histograms (no public pool)


def histogram_game(*, noise_multiplier: float, histograms: tuple[int, ...], num_samples: int, delta: float,
                   neighbouring: Neighbouring, claimed_epsilon: float, deployed: bool, trials: int,
                   rng: np.random.Generator, setting: str) -> Game:
    """The release a table without a public pool makes of its rows (class sizes and each class's column histograms,
    :class:`~pcevolve.privacy.histograms.HistogramRelease`) at one noise multiplier.

    D: ``num_samples`` rows, each in a random cell of each histogram of ``histograms`` cells. D′: D plus one more row
    (add/remove), or D with its last row moved to other cells (replace-one). Score: the released counts' distance
    from D's exact ones projected on D′'s shift, over the noise variance (the likelihood ratio's statistic).
    """
    from pcevolve.privacy.histograms import HistogramRelease

    mechanism = HistogramRelease(histograms, noise_multiplier, neighbouring)
    cells = np.stack([rng.integers(0, size, num_samples) for size in histograms], axis=1)
    extra = np.array([[(int(cells[-1, j]) + 1) % size if size > 1 else 0 for j, size in enumerate(histograms)]])
    neighbour = np.vstack([cells, extra]) if neighbouring == "add_remove" else np.vstack([cells[:-1], extra])
    exact = {False: mechanism.exact(cells), True: mechanism.exact(neighbour)}
    shift = exact[True] - exact[False]
    inputs = {False: cells, True: neighbour}

    def play(side: bool, noise: NoiseSource) -> float:
        ledger = TallyLedger(neighbouring, delta, secure=noise.secure)
        released = np.concatenate(mechanism.release(inputs[side], ledger=ledger, stage="release", noise=noise,
                                                    description="game"))
        return float(np.dot(released - exact[False], shift)) / mechanism.noise_std ** 2

    return Game(name="table histograms release (Gaussian)", setting=setting, model="gdp",
                claimed_epsilon=claimed_epsilon, claimed_mu=1.0 / noise_multiplier, delta=delta, deployed=deployed,
                play=play, trials=trials)


def _released_arrays(statistics: Any) -> dict[str, np.ndarray]:
    """The released numbers by field, each once (a second moment's upper triangle: its lower one is a copy)."""
    arrays = {}
    for name in _STD_OF:
        value = getattr(statistics, name, None)
        if value is None:
            continue
        value = np.asarray(value, dtype=np.float64)
        if name == "second_moments" and value.ndim == 3:
            rows, cols = np.triu_indices(value.shape[1])
            value = value[:, rows, cols]
        arrays[name] = value
    return arrays


# --------------------------------------------------------------------------- exponential mechanisms

def gap_nats(epsilon: float, trials: int) -> float:
    """How far (in nats of selection weight) the rarely-chosen outcome lies behind under D.

    Its probability p ≈ e^−gap must be small for its ratio between D′ and D to approach e^ε, yet common enough to be
    counted in ``trials`` / 2 runs — also under a mechanism twice as sharp as claimed, which doubles the gap: gap =
    ε + 1 nats, within [1, log(trials / 60)] (at ε = 0.2: p ≈ 0.23, and 0.08 twice as sharp).
    """
    return max(1.0, min(epsilon + 1.0, math.log(max(trials, 180) / 60.0)))


def _gap_units(epsilon: float, trials: int, spread: float) -> int:
    """The gap of :func:`gap_nats` in whole utility units (votes or counts), each worth ε / ``spread`` nats."""
    return max(1, round(gap_nats(epsilon, trials) * spread / epsilon))


def cluster_vote_game(*, epsilon: float, width: float, delta: float, neighbouring: Neighbouring, deployed: bool,
                      trials: int, setting: str) -> Game:
    """:class:`~pcevolve.privacy.cluster_vote.ClusterVote` for two classes among three public centres.

    D: class 0 has gap/ε (times 2 under replace-one, rounded; :func:`gap_nats`) records at centre 1, class 1 as
    many at centre 2.
    D′: one more class-0 record at centre 0 (add/remove), or one of class 1's records replaced by it (replace-one).
    """
    from pcevolve.privacy.cluster_vote import ClusterVote

    scale = 1.0 if neighbouring == "add_remove" else 2.0
    votes = _gap_units(epsilon, trials, scale)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    points = np.vstack([np.repeat(centres[1:2], votes, axis=0), np.repeat(centres[2:3], votes, axis=0)])
    labels = np.repeat([0, 1], votes)
    if neighbouring == "add_remove":
        points_p, labels_p = np.vstack([points, centres[0]]), np.append(labels, 0)
    else:
        points_p, labels_p = points.copy(), labels.copy()
        points_p[-1], labels_p[-1] = centres[0], 0
    inputs = {False: (points, labels), True: (points_p, labels_p)}
    vote = ClusterVote(epsilon, neighbouring, width=width)

    def play(neighbour: bool, noise: NoiseSource) -> float:
        ledger = TallyLedger(neighbouring, delta, secure=noise.secure)
        points_of, labels_of = inputs[neighbour]
        chosen = vote.select(points_of, labels_of, centres, classes=2, ledger=ledger, stage="audit", noise=noise)
        return float(chosen[0] == 0)

    return Game(name="cluster vote (exponential mechanism)", setting=setting, model="pure",
                claimed_epsilon=_pure_epsilon(ExponentialSelection(epsilon)), claimed_mu=None, delta=delta,
                deployed=deployed, play=play, trials=trials)


def selection_game(*, epsilon: float, delta: float, neighbouring: Neighbouring, monotone: bool, deployed: bool,
                   trials: int, setting: str) -> Game:
    """:class:`~pcevolve.privacy.mechanisms.ExponentialMechanism` between two candidates with count utilities.

    D: the second candidate gets gap/ε (×2 if not monotone, rounded; :func:`gap_nats`) more records right than the
    first. D′: one more record that only the first gets right (add/remove), or one the second got right replaced by
    it (replace-one).
    """
    from pcevolve.privacy.mechanisms import ExponentialMechanism

    spread = 1.0 if monotone else 2.0
    gap = float(_gap_units(epsilon, trials, spread))
    utilities = {False: np.array([0.0, gap]),
                 True: np.array([1.0, gap]) if neighbouring == "add_remove" else np.array([1.0, gap - 1.0])}
    mechanism = ExponentialMechanism(epsilon, neighbouring=neighbouring, monotone=monotone)

    def play(neighbour: bool, noise: NoiseSource) -> float:
        ledger = TallyLedger(neighbouring, delta, secure=noise.secure)
        return float(mechanism.release(utilities[neighbour], ledger=ledger, stage="audit", noise=noise) == 0)

    return Game(name="exponential selection" + (" (monotone counts)" if monotone else ""), setting=setting,
                model="pure", claimed_epsilon=_pure_epsilon(mechanism.event), claimed_mu=None, delta=delta,
                deployed=deployed, play=play, trials=trials)


def _pure_epsilon(event: ExponentialSelection) -> float:
    return float(event.epsilon) * int(getattr(event, "count", 1))


# --------------------------------------------------------------------------- one DP-SGD step

def dpsgd_step_game(*, noise_multiplier: float, delta: float, neighbouring: Neighbouring, deployed: bool,
                    trials: int, setting: str, batch: int = 6) -> Game:
    """One representation DP-SGD step (ghost-norm clipping, Gaussian noise) with the canary in the batch.

    The projector has the deployed layer kinds (pointwise and depthwise convolutions, a linear head) at a small size;
    D is a batch of ``batch`` public-noise activations, D′ adds the canary (add/remove) or replaces the last by it
    (replace-one). The step's claim, μ = 1/σ, holds for every clip norm C, so the game takes C a tenth of the
    canary's gradient norm: clipped, the canary moves the sum by C; unclipped (a bug), by ten times that.
    """
    import torch
    import torch.nn.functional as F
    from torch import nn

    from pcevolve.encoders.contrastive import MomentumCopy
    from pcevolve.encoders.ghost_norms import GhostNorms
    from pcevolve.encoders.per_sample import Projector, per_sample_norms_and_clipped_sum
    from pcevolve.privacy.dpsgd import DPSGDMechanism

    generator = torch.Generator().manual_seed(7)  # the game's public inputs and weights
    torch_state = torch.random.get_rng_state()
    torch.manual_seed(7)  # layer initialisation draws from torch's global generator; restored below
    # The layer kinds of the backbone's trainable blocks and head, each with its own ghost-norm rule: pointwise and
    # depthwise convolutions, then a linear head. Small, so that thousands of steps take seconds.
    top = nn.Sequential(nn.Conv2d(8, 16, 1, bias=False), nn.ReLU(),
                        nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False), nn.ReLU(),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten())
    head = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16))
    projector = Projector(top, head).double()
    torch.random.set_rng_state(torch_state)
    key = MomentumCopy(projector, momentum=0.9)
    activations = torch.rand(2 * (batch + 1), 8, 4, 4, generator=generator, dtype=torch.float64)
    views_a, views_b = activations[:batch + 1], activations[batch + 1:]
    negatives = F.normalize(torch.randn(40, 16, generator=generator, dtype=torch.float64), dim=1)
    rows = _canary_rows(batch, neighbouring)
    ghost = GhostNorms(projector)
    temperature = 0.1

    def gradients(neighbour: bool) -> tuple[torch.Tensor, Callable[[torch.Tensor], list[torch.Tensor]]]:
        chosen = rows[neighbour]
        norms, clipped_sum, _ = per_sample_norms_and_clipped_sum(projector, ghost, key, views_a[chosen],
                                                                 views_b[chosen], negatives, temperature=temperature)
        cache: dict[bytes, list[torch.Tensor]] = {}

        def once(factors: torch.Tensor) -> list[torch.Tensor]:  # the backward graph can be walked once
            token = factors.detach().numpy().tobytes()
            if token not in cache:
                cache[token] = [t.detach().clone() for t in clipped_sum(factors)]
            return cache[token]

        return norms.detach(), once

    prepared = {side: gradients(side) for side in (False, True)}

    def noisy_sum(mechanism: DPSGDMechanism, neighbour: bool, noise: NoiseSource) -> list[torch.Tensor]:
        norms, clipped_sum = prepared[neighbour]
        return mechanism.noisy_gradient_from_norms(norms, clipped_sum, noise)[0]

    return _gradient_step_game(
        "DP-SGD step (ghost-norm clipping)", noisy_sum, canary_norm=float(prepared[True][0][-1]),  # D′'s last row
        noise_multiplier=noise_multiplier, batch=batch, delta=delta, neighbouring=neighbouring, deployed=deployed,
        trials=trials, setting=setting)


def decoder_step_game(*, noise_multiplier: float, delta: float, neighbouring: Neighbouring, deployed: bool,
                      trials: int, setting: str, batch: int = 6) -> Game:
    """One decoder DP-SGD step: per-sample gradients by ``torch.func``
    (:func:`pcevolve.decoders.dp.per_sample_gradients`), each clipped, summed and noised by
    :meth:`pcevolve.privacy.dpsgd.DPSGDMechanism.noisy_gradient`, with the canary in the batch.

    A small feature → pixel-logit network (linear layers, as the decoder's head); D: ``batch`` public-noise features
    and images, D′ adds a canary whose feature is scaled up 100-fold and whose image is all ink (or replaces the last
    record by it). As in :func:`dpsgd_step_game`, C is a tenth of the canary's gradient norm.
    """
    import torch
    from torch import nn

    from pcevolve.decoders.dp import per_sample_gradients
    from pcevolve.privacy.dpsgd import DPSGDMechanism

    generator = torch.Generator().manual_seed(11)
    torch_state = torch.random.get_rng_state()
    torch.manual_seed(11)  # layer initialisation draws from torch's global generator; restored below
    network = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 36))
    torch.random.set_rng_state(torch_state)
    features = torch.randn(batch + 1, 8, generator=generator)
    images = torch.rand(batch + 1, 36, generator=generator)
    features[batch], images[batch] = 100.0 * features[batch], 1.0
    rows = _canary_rows(batch, neighbouring)
    grads = {side: per_sample_gradients(network, features[chosen], images[chosen]) for side, chosen in rows.items()}

    def noisy_sum(mechanism: DPSGDMechanism, neighbour: bool, noise: NoiseSource) -> list[torch.Tensor]:
        return mechanism.noisy_gradient(grads[neighbour], noise)[0]

    return _gradient_step_game(
        "decoder DP-SGD step (per-sample gradients)", noisy_sum,
        canary_norm=float(torch.sqrt(sum(g[-1].pow(2).sum() for g in grads[True]))),
        noise_multiplier=noise_multiplier, batch=batch, delta=delta, neighbouring=neighbouring, deployed=deployed,
        trials=trials, setting=setting)


def _canary_rows(batch: int, neighbouring: Neighbouring) -> dict[bool, list[int]]:
    """The rows of D (``False``: the ``batch`` records) and D′ (``True``: the canary, row ``batch``, added — or in
    place of the last record under replace-one), the canary last in both cases."""
    return {False: list(range(batch)),
            True: list(range(batch + 1)) if neighbouring == "add_remove" else [*range(batch - 1), batch]}


def _gradient_step_game(name: str, noisy_sum: Callable[[Any, bool, NoiseSource], list[Any]], *,
                        canary_norm: float, noise_multiplier: float, batch: int, delta: float,
                        neighbouring: Neighbouring, deployed: bool, trials: int, setting: str) -> Game:
    """A DP-SGD step's game: one paid step of a :class:`~pcevolve.privacy.dpsgd.DPSGDMechanism` per run, clipping
    at a tenth of the canary's gradient norm, scored by the noisy sum projected on D′'s shift.

    ``noisy_sum(mechanism, neighbour, noise)`` runs the step's code on D or D′ and returns its noisy mean gradient per
    parameter.
    """
    from pcevolve.privacy.dpsgd import DPSGDMechanism

    # q·n = 1 so that the step's output is the noisy sum itself; the accountant's event is not used by the game.
    mechanism = DPSGDMechanism(sampling_probability=1.0 / batch, noise_multiplier=noise_multiplier,
                               clip_norm=canary_norm / 10.0, num_samples=batch)

    def step(neighbour: bool, noise: NoiseSource) -> np.ndarray:
        ledger = TallyLedger(neighbouring, delta, secure=noise.secure)
        mechanism.charge(ledger, "audit", 1, noise=noise)
        scale = mechanism.sampling_probability * mechanism.num_samples
        noisy = noisy_sum(mechanism, neighbour, noise)
        return np.concatenate([t.reshape(-1).numpy() for t in noisy]).astype(np.float64) * scale

    base, shifted = step(False, NoNoise()), step(True, NoNoise())

    def play(neighbour: bool, noise: NoiseSource) -> float:
        return float(np.dot(step(neighbour, noise) - base, shifted - base))

    # Replacing a sample moves the clipped sum by up to 2C (one gradient leaves, one arrives): μ doubles.
    mu = (1.0 if neighbouring == "add_remove" else 2.0) / noise_multiplier
    return Game(name=name, setting=setting, model="gdp", claimed_epsilon=_gaussian_epsilon(1.0 / mu, delta),
                claimed_mu=mu, delta=delta, deployed=deployed, play=play, trials=trials)


def _gaussian_epsilon(noise_multiplier: float, delta: float) -> float:
    """The accountant's ε of one Gaussian of this noise multiplier (sensitivity 1, add/remove)."""
    from pcevolve.privacy.accounting import account

    return float(account([GaussianRelease(noise_multiplier)], delta=delta).epsilon)


__all__ = ["CANARY_RADII", "Game", "NoNoise", "TallyLedger", "cluster_vote_game", "decoder_step_game",
           "dpsgd_step_game", "gap_nats", "release_game", "selection_game"]
