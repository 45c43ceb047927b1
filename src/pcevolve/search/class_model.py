"""The DP class model: which class a point of the search space belongs to, from the release alone.

A linear discriminant of the released class means μ_k = sum_k / count_k with a *public* within-class
covariance S (the public pool's variances v_j along the basis directions, which include the spread
between classes and so err on the broad side):

    score_k(z) = zᵀ S⁻¹ μ_k − ½ μ_kᵀ S⁻¹ μ_k

The released means carry Gaussian noise of standard deviation s = σ_sum / count_k on every
coordinate. Along a basis direction whose public variance v_j is not well above s², the noisy
means differ by noise, not by class, and a discriminant that trusts them there labels at random:
at small ε the same discriminant labels far better on the leading directions alone (measured in
docs/search.md §5). So the model is noise-aware, with two rules that read only the release's own
noise level and public variances (post-processing):

* **directions kept**: those with v_j ≥ :data:`SIGNAL_TO_NOISE` · s² (at least :data:`MIN_DIMS`, never
  more than the release covers);
* **shrinkage** λ = clip(2 s² / v_last, :data:`MIN_SHRINKAGE`, :data:`MAX_SHRINKAGE`) of S towards
  its mean variance, S = (1 − λ) diag(v) + λ mean(v) I, where v_last is the smallest kept variance.

Both constants were read off a scan on the demo: at large ε nothing is dropped and the shrinkage
stays at its floor, at small ε most directions go and the shrinkage is strong, and at every ε scanned
the rules label about as well as the scan's best setting (measured in docs/search.md §5).

The confidence of a prediction is the margin between the two best scores over the distance to the
predicted class's mean (in S's metric): a point between two classes, or far from every class (an
image of a class outside the task), scores low.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pcevolve.privacy.statistics import NoisyClassStatistics

#: A direction is kept when its public variance is at least this many times the means' noise variance.
SIGNAL_TO_NOISE = 3.0
#: Never fewer directions than this (or than the basis has).
MIN_DIMS = 8
MIN_SHRINKAGE = 0.1
MAX_SHRINKAGE = 0.8
#: The variance given to dropped directions: large enough that their weight in the discriminant is nil.
_DROPPED = 1e6


@dataclass(frozen=True, eq=False)
class ClassModel:
    """Noise-aware linear discriminant of DP class means (see the module docstring).

    Attributes:
        means: (K, P) released class means.
        covariance: (P, P) the discriminant's S, diagonal; dropped directions carry a huge variance.
        kept: How many leading basis directions the model uses.
        shrinkage: λ.
        mean_noise_std: s, the noise standard deviation of one coordinate of a class mean.
    """

    means: np.ndarray
    covariance: np.ndarray
    kept: int
    shrinkage: float
    mean_noise_std: float

    @classmethod
    def from_release(cls, statistics: NoisyClassStatistics, public_variances: np.ndarray, *,
                     min_count: float = 2.0, released_dim: int | None = None) -> ClassModel:
        """The model of one release, given the public variances along the basis directions (largest first).

        ``released_dim``: the sums cover only the leading directions (:mod:`pcevolve.privacy.release_rule`); the
        model never uses more than those.
        """
        if statistics.sums is None or "sum" not in statistics.noise_stds:
            raise ValueError("the class model needs the release's noisy sums and their noise level")
        counts = statistics.class_sizes(min_count=min_count)
        means = np.asarray(statistics.sums, dtype=np.float64) / counts[:, None]
        variances = np.asarray(public_variances, dtype=np.float64)
        if variances.shape != (means.shape[1],) or np.any(variances <= 0) or np.any(np.diff(variances) > 1e-12):
            raise ValueError(f"public_variances must be {means.shape[1]} positive values, largest first")
        # The typical class: noise of a mean with the median noisy count.
        noise = float(statistics.noise_stds["sum"]) / float(np.median(counts))
        kept = int(np.sum(variances >= SIGNAL_TO_NOISE * noise**2))
        released = len(variances) if released_dim is None else int(released_dim)
        kept = min(len(variances), released, max(kept, MIN_DIMS))
        shrinkage = float(np.clip(2.0 * noise**2 / variances[kept - 1], MIN_SHRINKAGE, MAX_SHRINKAGE))
        diagonal = np.full(len(variances), _DROPPED * float(variances[0]))
        diagonal[:kept] = (1.0 - shrinkage) * variances[:kept] + shrinkage * float(np.mean(variances[:kept]))
        return cls(means=means, covariance=np.diag(diagonal), kept=kept, shrinkage=shrinkage,
                   mean_noise_std=noise)

    @property
    def num_classes(self) -> int:
        return int(self.means.shape[0])

    def scores(self, coordinates: np.ndarray) -> np.ndarray:
        """(n, P) → (n, K) discriminant scores."""
        precision = 1.0 / np.diag(self.covariance)
        weights = self.means * precision
        bias = -0.5 * np.sum(weights * self.means, axis=1)
        return np.asarray(coordinates, dtype=np.float64) @ weights.T + bias

    def predict(self, coordinates: np.ndarray) -> np.ndarray:
        return np.argmax(self.scores(coordinates), axis=1)

    def confidence(self, coordinates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(predicted class, confidence) per row: score margin over the distance to the predicted mean."""
        z = np.asarray(coordinates, dtype=np.float64)
        scores = self.scores(z)
        predicted = np.argmax(scores, axis=1)
        top = np.sort(scores, axis=1)
        margin = top[:, -1] - top[:, -2] if scores.shape[1] > 1 else top[:, -1]
        k = self.kept
        gap = z[:, :k] - self.means[predicted, :k]
        distance = np.sqrt(np.sum(gap**2 / np.diag(self.covariance)[:k], axis=1))
        return predicted, margin / np.maximum(distance, 1e-12)

    def summary(self) -> dict[str, float | int]:
        """Public description (a function of the release and public variances only)."""
        return {"kept_directions": self.kept, "shrinkage": self.shrinkage, "mean_noise_std": self.mean_noise_std}
