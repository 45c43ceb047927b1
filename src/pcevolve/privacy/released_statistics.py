"""What the class-statistics release gave the search, and its file form (``release.npz``).

Everything here holds released values only: the noisy statistics of :mod:`pcevolve.privacy.class_release` (or a
vote's choices among public centres) with the public settings needed to read them. Reading, saving and deriving
from them is post-processing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pcevolve.io import atomic_write_npz
from pcevolve.privacy.statistics import NoisyClassStatistics, RandomFourierFeatures

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
            ``None`` when the rule (:mod:`pcevolve.privacy.release_rule`) did not release them, and the sums'
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
