"""The search space: per class, a mean and coefficients along the class's principal directions.

The frame of class k comes from the DP release only (post-processing): its released mean μ̂_k
and the eigen-decomposition Σ̂_k = V_k diag(λ_k) V_kᵀ of its released covariance, with scales
s_k = √λ_k. An individual holds, for every class, P offsets o_k and P coefficients g_k; a sample
of class k is

    z = μ̂_k + V_k (s_k ∘ (o_k + g_k ∘ ε)),     ε ~ N(0, I_P),

so o moves the class mean along its principal directions (in units of that direction's spread)
and g stretches or shrinks each direction (a negative g, reachable in the engine's widened coarse
box, mirrors the symmetric draws and so acts like |g|). o = 0, g = 1 is exactly the DP Gaussian of the class —
the one-shot baseline — and the search starts from it. The vector layout is
[o_0, g_0, o_1, g_1, …], 2·K·P numbers.

Candidates are sampled with *fixed* ε per evaluation seed (common random numbers), so two
individuals are compared on the same draws and the fitness of an individual is a deterministic
function of its vector (fixed seeds give identical results).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pcevolve.evolution import Bounds


@dataclass(frozen=True, eq=False)
class ClassFrames:
    """Per-class mean (K, P), principal directions (K, P, P) as columns, and scales (K, P)."""

    means: np.ndarray
    directions: np.ndarray
    scales: np.ndarray

    @classmethod
    def from_gaussians(cls, means: np.ndarray, covariances: np.ndarray) -> "ClassFrames":
        """Frames of the released Gaussians (covariances must be symmetric PSD)."""
        eigenvalues, eigenvectors = np.linalg.eigh(np.asarray(covariances, dtype=np.float64))
        order = np.argsort(eigenvalues, axis=1)[:, ::-1]  # largest first
        eigenvalues = np.take_along_axis(eigenvalues, order, axis=1)
        eigenvectors = np.take_along_axis(eigenvectors, order[:, None, :], axis=2)
        return cls(means=np.asarray(means, dtype=np.float64), directions=eigenvectors,
                   scales=np.sqrt(np.maximum(eigenvalues, 0.0)))

    @property
    def num_classes(self) -> int:
        return int(self.means.shape[0])

    @property
    def dim(self) -> int:
        return int(self.means.shape[1])


@dataclass(frozen=True)
class SearchSpace:
    """Maps individual vectors to candidate synthetic features in the reduced space.

    Attributes:
        frames: The per-class frames from the DP release.
        offset_bound: |o| ≤ this (units of each direction's released spread).
        coefficient_bounds: g lies in [low, high].
    """

    frames: ClassFrames
    offset_bound: float = 1.0
    coefficient_bounds: tuple[float, float] = (0.0, 1.5)

    @property
    def size(self) -> int:
        return 2 * self.frames.num_classes * self.frames.dim

    def bounds(self) -> Bounds:
        k, p = self.frames.num_classes, self.frames.dim
        low_g, high_g = self.coefficient_bounds
        lower = np.tile(np.concatenate([np.full(p, -self.offset_bound), np.full(p, low_g)]), k)
        upper = np.tile(np.concatenate([np.full(p, self.offset_bound), np.full(p, high_g)]), k)
        return Bounds(lower=lower, upper=upper)

    def baseline(self) -> np.ndarray:
        """The individual equal to the released Gaussians (o = 0, g = 1)."""
        p = self.frames.dim
        return np.tile(np.concatenate([np.zeros(p), np.ones(p)]), self.frames.num_classes)

    def shift(self, individual: np.ndarray) -> float:
        """How far an individual moved from the released Gaussians: mean o² + mean (|g| − 1)², over every class and
        direction (units of each direction's released spread; a negative g draws like |g|). 0 at :meth:`baseline`."""
        offsets, coefficients = self.split(individual)
        return float(np.mean(offsets**2) + np.mean((np.abs(coefficients) - 1.0) ** 2))

    def split(self, individual: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Vector → (offsets (K, P), coefficients (K, P))."""
        vector = np.asarray(individual, dtype=np.float64)
        if vector.shape != (self.size,):
            raise ValueError(f"individual must have {self.size} entries, got shape {vector.shape}")
        blocks = vector.reshape(self.frames.num_classes, 2, self.frames.dim)
        return blocks[:, 0], blocks[:, 1]

    def noise(self, per_class: int, rng: np.random.Generator) -> np.ndarray:
        """Standard normal draws ε for ``per_class`` samples of every class: (K, per_class, P)."""
        return rng.standard_normal((self.frames.num_classes, per_class, self.frames.dim))

    def _class_samples(self, k: int, offsets: np.ndarray, coefficients: np.ndarray, draws: np.ndarray) -> np.ndarray:
        f = self.frames
        local = f.scales[k] * (offsets + coefficients * draws)  # (n, P) in class k's principal frame
        return f.means[k] + local @ f.directions[k].T

    def sample(self, individual: np.ndarray, noise: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Candidate coordinates (K·n, P) and labels (K·n,) for one individual and fixed draws (K, n, P)."""
        offsets, coefficients = self.split(individual)
        z = [self._class_samples(k, offsets[k], coefficients[k], noise[k]) for k in range(self.frames.num_classes)]
        labels = np.repeat(np.arange(self.frames.num_classes), noise.shape[1])
        return np.concatenate(z), labels

    def sample_counts(self, individual: np.ndarray, counts: np.ndarray,
                      rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``counts[k]`` fresh samples of class k (the delivered set's sizes may differ per class)."""
        offsets, coefficients = self.split(individual)
        counts = np.asarray(counts, dtype=np.int64)
        z = [self._class_samples(k, offsets[k], coefficients[k], rng.standard_normal((int(n), self.frames.dim)))
             for k, n in enumerate(counts)]
        return np.concatenate(z), np.repeat(np.arange(len(counts)), counts)
