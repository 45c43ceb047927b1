"""Reference statistics of the DP targets, computed once when the targets are built.

All of them are functions of the targets' fields (means, covariances, the validation
sample drawn from N(μ_k, Σ_k), the projection directions), so they are post-processing
of the DP release too. Caching them keeps :func:`pcevolve.fitness.evaluate` fast.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from pcevolve.fitness.geometry import class_indices, knn_radii, mean_pairwise_distance, pairwise_distances


def _threshold(radii: np.ndarray, ratio: float) -> tuple[float, float]:
    tau = ratio * float(np.median(radii))
    return tau, float(np.mean(radii < tau))


@dataclass(frozen=True, eq=False)
class ReferenceStatistics:
    """Per-class quantities of the reference (validation) sample and of the DP Gaussians.

    Attributes:
        groups: Row indices of each class in the validation set.
        whitening: (K, P, P) A_k with A_k A_kᵀ = Σ_k⁻¹; the Mahalanobis radius is ‖(x − μ_k) A_k‖.
        mahalanobis: Sorted Mahalanobis radii of each class's validation sample to its own Gaussian.
        lda_weights: (P, K) and ``lda_bias`` (K,): the linear discriminant of the DP means with equal
            priors, score_k(x) = xᵀS⁻¹μ_k − ½ μ_kᵀS⁻¹μ_k, where S is the targets' public
            ``discriminant_covariance`` when given, else the pooled DP covariance mean_k Σ_k.
        mean_distance: (K,) mean pairwise distance within each class's validation sample.
        typical_distance: (K,) √(2 tr Σ_k), the RMS distance between two independent draws of class k.
        sorted_projections: Each class's validation sample projected on the directions, sorted per direction.
        projection_scale: (K,) RMS over directions of the projected validation sample's standard deviation.
    """

    groups: list[np.ndarray]
    whitening: np.ndarray
    mahalanobis: list[np.ndarray]
    lda_weights: np.ndarray
    lda_bias: np.ndarray
    mean_distance: np.ndarray
    typical_distance: np.ndarray
    sorted_projections: list[np.ndarray]
    projection_scale: np.ndarray
    _validation: list[np.ndarray] = field(repr=False)
    _knn_cache: dict[tuple[int, int, int], np.ndarray] = field(default_factory=dict, repr=False)
    _threshold_cache: dict[tuple[int, int, int, float], tuple[float, float]] = field(default_factory=dict,
                                                                                      repr=False)

    @classmethod
    def of(cls, *, means: np.ndarray, covariances: np.ndarray, validation_features: np.ndarray,
           validation_labels: np.ndarray, projections: np.ndarray,
           discriminant_covariance: np.ndarray | None = None) -> "ReferenceStatistics":
        k = means.shape[0]
        groups = class_indices(validation_labels, k)
        eigenvalues, vectors = np.linalg.eigh(covariances)
        whitening = vectors / np.sqrt(eigenvalues)[:, None, :]
        per_class = [validation_features[g] for g in groups]
        mahalanobis = [np.sort(np.linalg.norm((x - means[c]) @ whitening[c], axis=1)) for c, x in enumerate(per_class)]
        within = covariances.mean(axis=0) if discriminant_covariance is None else discriminant_covariance
        pooled_precision = np.linalg.inv(within)
        lda_weights = pooled_precision @ means.T
        lda_bias = -0.5 * np.einsum("kp,pk->k", means, lda_weights)
        mean_distance = np.array([mean_pairwise_distance(pairwise_distances(x)) for x in per_class])
        typical = np.sqrt(2.0 * np.trace(covariances, axis1=1, axis2=2))
        projected = [np.sort(x @ projections.T, axis=0) for x in per_class]
        scale = np.array([math.sqrt(float(np.mean(np.var(z, axis=0)))) for z in projected])
        return cls(groups=groups, whitening=whitening, mahalanobis=mahalanobis, lda_weights=lda_weights,
                   lda_bias=lda_bias, mean_distance=mean_distance, typical_distance=typical,
                   sorted_projections=projected, projection_scale=scale, _validation=per_class)

    def knn_radii(self, class_index: int, *, k: int, size: int) -> np.ndarray:
        """Sorted k-NN radii of the class's validation sample, split into disjoint chunks of ``size`` points.

        k-NN radii shrink as a sample grows, so a candidate of n points is compared with
        reference chunks of the same n (all ⌊V/n⌋ of them, pooled). ``size`` must not exceed V.
        """
        key = (class_index, k, size)
        if key not in self._knn_cache:
            x = self._validation[class_index]
            if not k < size <= x.shape[0]:
                raise ValueError(f"size must be in {k + 1}..{x.shape[0]} for k = {k}, got {size}")
            chunks = [x[start:start + size] for start in range(0, x.shape[0] - size + 1, size)]
            radii = np.sort(np.concatenate([knn_radii(pairwise_distances(c), k) for c in chunks]))
            radii.setflags(write=False)
            self._knn_cache[key] = radii
        return self._knn_cache[key]

    def knn_threshold(self, class_index: int, *, k: int, size: int, ratio: float) -> tuple[float, float]:
        """(τ, reference share): τ = ``ratio`` × median of :meth:`knn_radii`, and the share of those radii below τ.

        Cached: the search asks the same question at every evaluation.
        """
        key = (class_index, k, size, ratio)
        if key not in self._threshold_cache:
            self._threshold_cache[key] = _threshold(self.knn_radii(class_index, k=k, size=size), ratio)
        return self._threshold_cache[key]

    def mahalanobis_threshold(self, class_index: int, *, ratio: float) -> tuple[float, float]:
        """(τ, reference share) for the class's reference Mahalanobis radii, as in :meth:`knn_threshold`."""
        key = (class_index, -1, -1, ratio)
        if key not in self._threshold_cache:
            self._threshold_cache[key] = _threshold(self.mahalanobis[class_index], ratio)
        return self._threshold_cache[key]

    def validation_size(self, class_index: int) -> int:
        return int(self._validation[class_index].shape[0])
