"""Shared scenario of the fitness tests: K Gaussian classes whose best linear rule needs their covariance.

The classes share a high-variance direction v that also separates their means, so a
classifier that ignores the covariance (e.g. one trained on the class means alone) does
clearly worse than one trained on a sample with the right spread.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from pcevolve.fitness import FitnessTargets
from pcevolve.privacy import BudgetLedger, ClassStatisticsRelease, NoiseSource, RandomFourierFeatures
from pcevolve.privacy.noise import GeneratorNoise

K, P, V, N_PRIVATE, N_CANDIDATE, RFF_FREQUENCIES = 5, 16, 200, 150, 100, 128
CLIP = 4.0
COMPONENTS = ("count", "sum", "second_moment", "rff")


class ZeroNoise(NoiseSource):
    """No randomness: a release through it returns the exact statistics (tests only)."""

    def uniform(self, size):
        return np.full(size, 0.5)

    def normal(self, scale, size):
        return np.zeros(size)

    def laplace(self, scale, size):
        return np.zeros(size)


@functools.lru_cache(maxsize=None)
def truth() -> tuple[np.ndarray, np.ndarray]:
    """True class means (K, P) and covariances (K, P, P)."""
    rng = np.random.default_rng(20240601)
    v = np.zeros(P)
    v[-1] = 1.0
    means = np.zeros((K, P))
    signs = np.array([1.5, -1.0, 0.5, -1.5, 1.0])
    for k in range(K):
        means[k, k] = 0.3
        means[k] += 0.3 * signs[k] * v
    covariances = np.empty((K, P, P))
    for k in range(K):
        a = rng.normal(scale=0.05, size=(P, P))
        covariances[k] = 0.01 * np.eye(P) + a @ a.T / P + 0.5 * np.outer(v, v)
    return means, covariances


def draw(means: np.ndarray, covariances: np.ndarray, per_class: int, rng: np.random.Generator):
    """``per_class`` draws from each N(means[k], covariances[k]) and their labels."""
    x = np.concatenate([rng.multivariate_normal(means[k], covariances[k], per_class) for k in range(len(means))])
    return x, np.repeat(np.arange(len(means)), per_class)


@functools.lru_cache(maxsize=None)
def private_data() -> tuple[np.ndarray, np.ndarray]:
    means, covariances = truth()
    return draw(means, covariances, N_PRIVATE, np.random.default_rng(7))


@functools.lru_cache(maxsize=None)
def rff() -> RandomFourierFeatures:
    return RandomFourierFeatures.draw(P, RFF_FREQUENCIES, bandwidth=0.8, rng=np.random.default_rng(11))


def roomy_ledger() -> BudgetLedger:
    return BudgetLedger(1e9, 1e-5, {"release": 1e9}, reproducible_noise=True)


def release(*, noise_multiplier: float = 1.0, noise: NoiseSource | None = None, features=None, labels=None,
            second_moment: str = "full"):
    """A class-statistics release of the private data (exact, with its noise std record cleared, by default)."""
    x, y = private_data() if features is None else (features, labels)
    mechanism = ClassStatisticsRelease(num_classes=K, clip_norm=CLIP, noise_multiplier=noise_multiplier,
                                       components=COMPONENTS, second_moment=second_moment, rff=rff())
    noisy = mechanism.release(x, y, ledger=roomy_ledger(), stage="release", noise=noise or ZeroNoise())
    return noisy if noise is not None else dataclasses.replace(noisy, noise_stds={})


def noisy_release(noise_multiplier: float, seed: int = 0):
    return release(noise_multiplier=noise_multiplier, noise=GeneratorNoise(np.random.default_rng(seed)))


@functools.lru_cache(maxsize=None)
def exact_targets() -> FitnessTargets:
    return FitnessTargets.from_release(release(), rff(), validation_per_class=V, rng=np.random.default_rng(3))


def candidates(targets: FitnessTargets, seed: int = 5) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """A good candidate (drawn from the targets' Gaussians) and constructed bad ones."""
    rng = np.random.default_rng(seed)
    good, labels = draw(targets.means, targets.covariances, N_CANDIDATE, rng)
    centres = np.repeat(targets.means, N_CANDIDATE, axis=0)
    modes = np.concatenate([
        np.repeat(rng.multivariate_normal(targets.means[k], targets.covariances[k], 3), [34, 33, 33], axis=0)
        for k in range(K)])
    shift = rng.normal(size=(K, P))
    shift *= 0.6 / np.linalg.norm(shift, axis=1, keepdims=True)
    return {
        "good": (good, labels),
        "collapsed_means": (centres.copy(), labels),
        "collapsed_modes": (modes + rng.normal(scale=1e-4, size=modes.shape), labels),
        "label_swapped": (good, (labels + 1) % K),
        "shifted": (good + np.repeat(shift, N_CANDIDATE, axis=0), labels),
        "shrunk": (centres + 0.3 * (good - centres), labels),
    }
