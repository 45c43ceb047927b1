"""The one DP release the search is allowed to see (SPEC R5.6), and its file form.

Per class, from the private features reduced to the public basis (z = Bᵀ(u − c), clipped to a
public radius C): noisy count, sum, full second moment Σ z zᵀ, and the sum of random Fourier
features of z. One ``ClassStatisticsRelease`` — one Gaussian event in the ledger's ``fitness``
stage, calibrated by the accountant to the stage's remaining budget. Its neighbouring relation
and sensitivity are stated in :mod:`pcevolve.privacy.statistics`. After this call the search
holds only the noisy result; everything it computes from it is post-processing.

The RFF bandwidth is the median pairwise distance of *public* coordinates and the frequencies
come from the run's public ``rff`` stream: neither depends on the private data, and neither
shares a generator with the release's noise (which is secure by default). The frequencies are
saved in ``release.npz``; drawn from the noise's own generator they would let anyone subtract
the noise (``pcevolve.randomness``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pcevolve.io import atomic_write_npz
from pcevolve.privacy import BudgetLedger, NoiseSource
from pcevolve.privacy.statistics import (
    COMPONENTS,
    ClassStatisticsRelease,
    NoisyClassStatistics,
    RandomFourierFeatures,
)

STAGE = "fitness"


def public_bandwidth(public_coordinates: np.ndarray, *, rng: np.random.Generator, pairs: int = 20000) -> float:
    """Median distance between random pairs of public coordinates (the RBF length-scale ℓ)."""
    z = np.asarray(public_coordinates, dtype=np.float64)
    first, second = rng.integers(0, len(z), size=(2, pairs))
    keep = first != second
    distances = np.linalg.norm(z[first[keep]] - z[second[keep]], axis=1)
    return float(np.median(distances)) if distances.size else 1.0


@dataclass(frozen=True, eq=False)
class StatisticsRelease:
    """The released statistics with the public settings needed to use them."""

    statistics: NoisyClassStatistics
    rff: RandomFourierFeatures
    clip_norm: float
    noise_multiplier: float

    def save(self, path: str | os.PathLike[str]) -> Path:
        """One npz (no pickle), written atomically."""
        s = self.statistics
        arrays = {"counts": s.counts, "sums": s.sums, "second_moments": s.second_moments, "rff_sums": s.rff_sums,
                  "rff_frequencies": self.rff.frequencies, "rff_bandwidth": np.array(self.rff.bandwidth),
                  "clip_norm": np.array(self.clip_norm), "noise_multiplier": np.array(self.noise_multiplier),
                  "noise_std_names": np.array(list(s.noise_stds)), "noise_std_values": np.array(
                      [s.noise_stds[k] for k in s.noise_stds], dtype=np.float64)}
        return atomic_write_npz(path, **arrays)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "StatisticsRelease":
        with np.load(path, allow_pickle=False) as data:
            stds = {str(k): float(v) for k, v in zip(data["noise_std_names"], data["noise_std_values"], strict=True)}
            statistics = NoisyClassStatistics(counts=data["counts"], sums=data["sums"],
                                              second_moments=data["second_moments"], rff_sums=data["rff_sums"],
                                              noise_stds=stds)
            rff = RandomFourierFeatures(frequencies=data["rff_frequencies"], bandwidth=float(data["rff_bandwidth"]))
            return cls(statistics=statistics, rff=rff, clip_norm=float(data["clip_norm"]),
                       noise_multiplier=float(data["noise_multiplier"]))


def release_mechanism(ledger: BudgetLedger, *, num_classes: int, clip_norm: float, rff: RandomFourierFeatures,
                      shares: tuple[float, ...], noise_multiplier: float | None = None) -> ClassStatisticsRelease:
    """The release a run makes, calibrated against ``ledger``'s ``fitness`` stage (no data read, nothing charged).

    ``noise_multiplier=None``: the smallest noise whose single event costs at most the stage's
    remaining budget, found by the accountant. ``pcevolve budget plan`` calls this on a fresh
    ledger, so the noise it prints is the noise a run adds.
    """
    settings = dict(num_classes=num_classes, clip_norm=clip_norm, components=COMPONENTS, second_moment="full",
                    rff=rff, shares=dict(zip(COMPONENTS, shares, strict=True)), neighbouring=ledger.neighbouring)
    budget = ledger.remaining(STAGE)
    if noise_multiplier is None and budget > 0:
        return ClassStatisticsRelease.calibrated(budget, ledger.delta, **settings)
    # A zero budget has nothing to calibrate against: any release is refused by the ledger.
    return ClassStatisticsRelease(noise_multiplier=noise_multiplier or 1.0, **settings)


def release_statistics(private_coordinates: np.ndarray, labels: np.ndarray, *, num_classes: int,
                       clip_norm: float, rff: RandomFourierFeatures, shares: tuple[float, ...],
                       ledger: BudgetLedger, noise: NoiseSource,
                       noise_multiplier: float | None = None) -> StatisticsRelease:
    """Release the class statistics of private coordinates, paid from the ledger's ``fitness`` stage.

    Args:
        noise_multiplier: ``None`` (default): the smallest noise whose single event costs at most
            the stage's remaining budget, found by the accountant. A number: used as given, and
            the ledger refuses the release if it does not fit.

    Raises:
        BudgetExceeded: The ledger refused (no budget left, or a given noise multiplier costs
            too much); nothing is drawn.
    """
    release = release_mechanism(ledger, num_classes=num_classes, clip_norm=clip_norm, rff=rff, shares=shares,
                                noise_multiplier=noise_multiplier)
    noisy = release.release(private_coordinates, labels, ledger=ledger, stage=STAGE, noise=noise,
                            description="class statistics in the public basis: count, sum, second moment, RFF")
    return StatisticsRelease(statistics=noisy, rff=rff, clip_norm=clip_norm,
                             noise_multiplier=release.noise_multiplier)
