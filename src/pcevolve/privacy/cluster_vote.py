"""Each class picks the public cluster its private samples fall in most often, by the exponential mechanism.

With a handful of private samples per class, a released class *mean* is mostly noise: ten clipped
vectors summed and noised at ε = 1 give a mean whose noise is several times its length. A *choice*
among a few public candidates is far cheaper: the public pool is split into M clusters beforehand
(public data only), every private sample of class k votes for the cluster whose centre is nearest to
it, and the classes are given distinct clusters by the exponential mechanism on those votes. A chosen
centre — a public point — then stands for its class's mean.

* **Candidates.** The assignments σ of the K classes to K *distinct* clusters (classes must not share a
  centre, or their means would coincide). They depend on no private data.
* **Utility.** U(σ) = Σ_k u_k(σ(k)), with u_k(m) = Σ over class-k private samples x of w(x, m): the votes
  the assignment honours. A sample gives its nearest centre a whole vote, w = 1, and with a kernel width τ > 0
  every other centre m a part of one, w(x, m) = exp(−(‖x − c_m‖² − ‖x − c_nearest‖²) / τ) ∈ (0, 1]: a sample
  that lies between two clusters says so, and classes whose images vote for the same clusters are told apart
  by how clearly they do (τ = 0: whole votes only). τ is public (:func:`cluster_spread` of the public points).
* **Neighbouring relation and sensitivity.** Add/remove-one: adding or removing a record (x, y) changes
  row y of the votes by its weights w(x, ·) ∈ [0, 1], so U(σ) changes by w(x, σ(y)) ∈ [0, 1] for every σ,
  always in the same direction (monotone, ΔU ≤ 1). Replace-one: one record's weights leave row y and another's
  join row y', so U changes by w' − w ∈ [−1, 1] (ΔU = 1, not monotone).
* **The draw.** σ with probability ∝ exp(ε · U(σ) / a), a = 1 under add/remove (monotone utility; Dwork &
  Roth 2014, §3.4) and a = 2 under replace-one: ε-DP, and ε-bounded-range, which the accountant uses for its
  zCDP bound. Every class draws within this one selection, so it costs ε once, not K times.
* **Exact sampling.** There are M!/(M − K)! assignments (360,360 for 5 classes among 15 clusters). The
  sum of exp(εU/a) over the assignments of a set S of classes into the first j clusters satisfies a
  recurrence over j (cluster j is unused, or taken by one class of S), so its logarithm for every S and j
  takes M · 2^K · K steps; σ is then drawn cluster by cluster from the last to the first, each step with its
  exact conditional probability (one uniform per cluster). Up to :data:`MAX_CLASSES` classes.
* **Event.** ``ExponentialSelection(ε)``, charged before the private data is read.

The votes (the utility's inputs) are read from the private data only after the ledger accepted the
charge (:func:`vote_weights`); the candidates (the centres) must come from the public pool (:func:`public_clusters`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pcevolve.catalog.search import MAX_VOTE_CLASSES
from pcevolve.privacy.events import (
    ExponentialSelection,
    Neighbouring,
    check_neighbouring,
)
from pcevolve.privacy.mechanisms import check_ledger_relation
from pcevolve.privacy.noise import NoiseSource, as_noise_source

if TYPE_CHECKING:
    from pcevolve.privacy.ledger import BudgetLedger

#: Classes the exact sampler takes (its table has 2^K entries per cluster); catalogued, so that the config can
#: refuse more without importing the vote.
MAX_CLASSES = MAX_VOTE_CLASSES


def public_clusters(public_coordinates: np.ndarray, clusters: int, *, rng: np.random.Generator,
                    directions: int | None = None) -> np.ndarray:
    """(M, P) centres of M k-means clusters of public coordinates (k-means++ starts, 10 restarts seeded from ``rng``).

    ``directions``: find the clusters in the leading ``directions`` columns only (None: all); a centre is then its
    members' mean in every column.
    """
    z = np.asarray(public_coordinates, dtype=np.float64)
    if not 1 <= clusters <= len(z):
        raise ValueError(f"cannot make {clusters} clusters of {len(z)} public points")
    used = z.shape[1] if directions is None else int(directions)
    if not 1 <= used <= z.shape[1]:
        raise ValueError(f"cannot cluster in {used} of {z.shape[1]} directions")
    seed = int(rng.integers(0, 2**31 - 1))
    from sklearn.cluster import KMeans  # here: reading a config or a ledger must not wait for scikit-learn

    members = KMeans(clusters, n_init=10, random_state=seed).fit(z[:, :used]).labels_
    sizes = np.bincount(members, minlength=clusters)
    sums = np.zeros((clusters, z.shape[1]))
    np.add.at(sums, members, z)
    return sums / np.maximum(sizes, 1)[:, None]


def variance_directions(variances: np.ndarray, share: float) -> int:
    """The fewest leading directions whose variances (largest first) hold ``share`` of their total."""
    v = np.asarray(variances, dtype=np.float64)
    cumulative = np.cumsum(v) / v.sum()
    return int(min(len(v), np.searchsorted(cumulative, share - 1e-12) + 1))


def nearest_centre(coordinates: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Index of the nearest centre (Euclidean) of every row."""
    return _squared_distances(coordinates, centres).argmin(axis=1)


def _squared_distances(coordinates: np.ndarray, centres: np.ndarray) -> np.ndarray:
    z = np.asarray(coordinates, dtype=np.float64)
    c = np.asarray(centres, dtype=np.float64)
    return (z**2).sum(axis=1)[:, None] - 2.0 * z @ c.T + (c**2).sum(axis=1)[None, :]


def cluster_spread(public_coordinates: np.ndarray, centres: np.ndarray) -> float:
    """The mean squared distance of public points to their nearest centre (the scale of the vote's kernel width)."""
    return float(np.mean(np.maximum(_squared_distances(public_coordinates, centres).min(axis=1), 0.0)))


def vote_weights(coordinates: np.ndarray, centres: np.ndarray, width: float) -> np.ndarray:
    """(n, M) w(x, m) of the module docstring: 1 for the nearest centre, exp(−excess squared distance / ``width``)
    for the others; ``width`` 0: 1 for the nearest centre only. Every entry lies in [0, 1]."""
    distances = _squared_distances(coordinates, centres)
    if width <= 0:
        weights = np.zeros_like(distances)
        weights[np.arange(len(distances)), distances.argmin(axis=1)] = 1.0
        return weights
    return np.exp(-np.maximum(distances - distances.min(axis=1, keepdims=True), 0.0) / width)


def class_votes(weights: np.ndarray, labels: np.ndarray, *, classes: int) -> np.ndarray:
    """(K, M) u_k(m): the weights of the class-k samples summed. Private."""
    votes = np.zeros((classes, weights.shape[1]))
    np.add.at(votes, np.asarray(labels, dtype=np.int64), weights)
    return votes


def assignment_log_sums(log_weights: np.ndarray) -> np.ndarray:
    """F[j, S] = log Σ exp(Σ_{k∈S} L[k, σ(k)]) over the ways σ to give the classes in S (a bit set) distinct clusters
    among the first j; shape (M + 1, 2^K). ``log_weights`` L is (K, M)."""
    classes, clusters = log_weights.shape
    states = np.arange(1 << classes)
    table = np.full((clusters + 1, 1 << classes), -np.inf)
    table[0, 0] = 0.0
    for j in range(clusters):
        row = table[j].copy()  # cluster j unused
        for k in range(classes):
            holding = states[(states >> k) & 1 == 1]  # the sets with class k, which may take cluster j
            row[holding] = np.logaddexp(row[holding], table[j, holding ^ (1 << k)] + log_weights[k, j])
        table[j + 1] = row
    return table


@dataclass(frozen=True)
class ClusterVote:
    """The selection of the module docstring, for K classes among M public centres.

    Attributes:
        epsilon: The pure ε of the whole assignment.
        neighbouring: The relation the guarantee refers to (the ledger must use the same).
        width: τ, the public kernel width of the partial votes (0: whole votes only).
    """

    epsilon: float
    neighbouring: Neighbouring = "add_remove"
    width: float = 0.0

    def __post_init__(self) -> None:
        if not (np.isfinite(self.epsilon) and self.epsilon > 0):
            raise ValueError(f"epsilon must be positive and finite, got {self.epsilon!r}")
        if not (np.isfinite(self.width) and self.width >= 0):
            raise ValueError(f"width must be zero or positive, got {self.width!r}")
        check_neighbouring(self.neighbouring)

    @property
    def event(self) -> ExponentialSelection:
        return ExponentialSelection(float(self.epsilon))

    @property
    def scale(self) -> float:
        """a of the module docstring: 1 under add/remove (monotone votes), 2 under replace-one."""
        return 1.0 if self.neighbouring == "add_remove" else 2.0

    def log_weights(self, votes: np.ndarray) -> np.ndarray:
        """(K, M): ε · u_k(m) / a, so that log P(σ) = Σ_k of these at σ(k), less the log of their sum over σ."""
        return self.epsilon * np.asarray(votes, dtype=np.float64) / self.scale

    def draw(self, votes: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        """The assignment (K,) for exact ``votes`` (K, M), whole or partial, from M uniforms in (0, 1): cluster by
        cluster, last first, cluster j is left unused or given to one class still unassigned, with its exact
        conditional probability."""
        weights = self.log_weights(votes)
        classes, clusters = weights.shape
        table = assignment_log_sums(weights)
        chosen = np.full(classes, -1, dtype=np.int64)
        remaining = (1 << classes) - 1
        for j in range(clusters - 1, -1, -1):
            if remaining == 0:
                break
            options = [(-1, table[j, remaining])]  # cluster j unused
            options += [(k, table[j, remaining ^ (1 << k)] + weights[k, j])
                        for k in range(classes) if (remaining >> k) & 1]
            logs = np.array([value for _, value in options])
            cumulative = np.cumsum(np.exp(logs - table[j + 1, remaining]))
            u = float(uniforms[j]) * cumulative[-1]
            k = options[int(min(np.searchsorted(cumulative, u, side="right"), len(options) - 1))][0]
            if k >= 0:
                chosen[k] = j
                remaining ^= 1 << k
        return chosen

    def select(self, private_coordinates: np.ndarray, labels: np.ndarray, centres: np.ndarray, *,
               classes: int, ledger: "BudgetLedger", stage: str, noise: NoiseSource | np.random.Generator,
               description: str = "") -> np.ndarray:
        """Charge the ledger, then return the chosen centre index of every class (K,), all distinct.

        Raises:
            ValueError: fewer centres than classes, more than :data:`MAX_CLASSES` classes, or labels outside
                0 … K−1 (before any charge).
            BudgetExceeded: the ledger refused; nothing was read or drawn.
        """
        centres = np.asarray(centres, dtype=np.float64)
        labels = np.asarray(labels, dtype=np.int64)
        if len(centres) < classes:
            raise ValueError(f"{classes} classes need at least {classes} public clusters, got {len(centres)}")
        if classes > MAX_CLASSES:
            raise ValueError(f"the vote takes at most {MAX_CLASSES} classes, got {classes}; use "
                             "search.class_means: sums")
        if labels.size and (labels.min() < 0 or labels.max() >= classes):
            raise ValueError(f"labels must lie in 0 … {classes - 1}")
        source = as_noise_source(noise)
        check_ledger_relation(self.neighbouring, ledger)
        ledger.charge(stage, self.event, noise=source,
                      description=description or f"a public cluster for each of {classes} classes (vote)")
        votes = class_votes(vote_weights(private_coordinates, centres, self.width), labels, classes=classes)
        return self.draw(votes, source.uniform(len(centres)))
