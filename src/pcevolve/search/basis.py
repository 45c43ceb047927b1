"""The reduced space the search moves in: a principal basis of the *public* pool's features.

Encoder features are compared by direction (the decoder and the re-encode check both normalise
them), so every feature is first scaled to unit length u = φ / ‖φ‖. The basis is the top-P
principal directions of the public pool's unit features, centred on their mean c:

    z = Bᵀ(u − c)          (reduce: feature → P coordinates)
    φ ≈ c + B z            (expand: coordinates → a feature direction for the decoder)

Only public images enter the fit, so the basis costs no privacy budget; applying it to private
features is part of the DP release that follows (the release clips the coordinates).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pcevolve.similarity import unit_vectors
from pcevolve.privacy.cluster_vote import nearest_centre


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Each row scaled to unit L2 norm (zero rows stay zero), in float64."""
    return unit_vectors(np.asarray(x, dtype=np.float64))


#: Public variances are floored at this fraction of the largest one.
VARIANCE_FLOOR = 1e-9


def _principal_axes_of_span(centred: np.ndarray, principal: np.ndarray,
                            fixed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An orthonormal basis of span(principal ∪ fixed), along the principal axes of ``centred`` within that span
    (most public variance first), and the singular values of ``centred`` along them."""
    fixed = np.asarray(fixed, dtype=np.float64)
    if fixed.ndim != 2 or fixed.shape[0] != principal.shape[0]:
        raise ValueError(f"fixed directions must be ({principal.shape[0]}, m), got {fixed.shape}")
    rest = fixed - principal @ (principal.T @ fixed)
    left, strengths, _ = np.linalg.svd(rest, full_matrices=False)  # an orthonormal basis of what is new in them
    span = np.concatenate([principal, left[:, strengths > 1e-9 * max(1.0, float(strengths.max(initial=0.0)))]],
                          axis=1)
    projected = centred @ span
    eigenvalues, axes = np.linalg.eigh(projected.T @ projected)  # (m, m) whatever the number of public rows
    order = np.argsort(eigenvalues)[::-1]
    return span @ axes[:, order], np.sqrt(np.clip(eigenvalues[order], 0.0, None))


@dataclass(frozen=True, eq=False)
class PublicBasis:
    """Centre c (d,), orthonormal directions B (d, P) and the public variance along each (P,)."""

    centre: np.ndarray
    directions: np.ndarray
    variances: np.ndarray

    @classmethod
    def fit(cls, public_features: np.ndarray, dim: int, *, fixed_directions: np.ndarray | None = None) -> "PublicBasis":
        """Principal directions of the public pool's unit features.

        ``fixed_directions`` (d, m): directions chosen without any data (e.g. the pixel view's low spatial
        frequencies, :mod:`pcevolve.encoders.pixel_view`) that join the top ``dim`` principal directions. The
        basis then spans both, turned to the public pool's principal axes *within* that span, so its directions
        still come in order of public variance and the public covariance in it is diagonal. Neither step reads
        private data.

        Raises:
            ValueError: Fewer than two public features, or ``dim`` larger than the feature size.
        """
        units = unit_rows(public_features)
        if units.ndim != 2 or len(units) < 2:
            raise ValueError(f"need at least two public features (n, d), got shape {units.shape}")
        if not 1 <= dim <= units.shape[1]:
            raise ValueError(f"basis_dim must lie in 1..{units.shape[1]}, got {dim}")
        centre = units.mean(axis=0)
        _, singular, vt = np.linalg.svd(units - centre, full_matrices=False)
        directions, singular = vt[:dim].T, singular[:dim]
        if fixed_directions is not None:
            directions, singular = _principal_axes_of_span(units - centre, directions, fixed_directions)
        # Sign convention (largest entry positive) so the basis does not flip between LAPACK builds.
        signs = np.sign(directions[np.abs(directions).argmax(axis=0), np.arange(directions.shape[1])])
        directions = directions * np.where(signs == 0, 1.0, signs)
        variances = singular**2 / (len(units) - 1)
        # Floored just above 0: a direction the pool never varies along (a fixed direction such as the difference of
        # two colour channels that are always equal) must not read as a class model with a zero variance.
        variances = np.maximum(variances, VARIANCE_FLOOR * max(float(variances[0]), 1e-12))
        return cls(centre=centre, directions=directions, variances=variances)

    @property
    def dim(self) -> int:
        return int(self.directions.shape[1])

    @property
    def feature_dim(self) -> int:
        return int(self.directions.shape[0])

    def reduce(self, features: np.ndarray) -> np.ndarray:
        """Features (n, d) → coordinates (n, P)."""
        return (unit_rows(features) - self.centre) @ self.directions

    def expand(self, coordinates: np.ndarray) -> np.ndarray:
        """Coordinates (n, P) → feature directions (n, d), unit length."""
        return unit_rows(self.centre + np.asarray(coordinates, dtype=np.float64) @ self.directions.T)

    def radius(self, public_features: np.ndarray, quantile: float) -> float:
        """The ``quantile`` of ‖z‖ over public features: a clip norm chosen without private data."""
        return float(np.quantile(np.linalg.norm(self.reduce(public_features), axis=1), quantile))

    def leading_radii(self, public_features: np.ndarray, quantile: float) -> np.ndarray:
        """(P,): the ``quantile`` of the norm of the leading d coordinates, d = 1 … P (non-decreasing in d)."""
        z = self.reduce(public_features)
        return np.quantile(np.sqrt(np.cumsum(z**2, axis=1)), quantile, axis=0)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"centre": self.centre, "directions": self.directions, "variances": self.variances}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "PublicBasis":
        return cls(centre=np.asarray(arrays["centre"]), directions=np.asarray(arrays["directions"]),
                   variances=np.asarray(arrays["variances"]))


def local_variances(coordinates: np.ndarray, *, rng: np.random.Generator, group_size: int = 50,
                    iterations: int = 20) -> np.ndarray:
    """(P,): the public spread along each basis direction *within* groups of similar public features.

    A class's own covariance is not released when the class is too small to pay for it; the whole public pool's
    variance would stand in for it, but that also holds the differences *between* the kinds of things the pool
    shows (in a pool of shoes, bags and shirts, the difference between a shoe and a shirt), far wider than one
    kind varies by. So the public coordinates are split into groups of about ``group_size`` by k-means (Lloyd's
    iterations from centres drawn with ``rng``), and the variance is taken about each feature's group centre.
    Public data only.
    """
    z = np.asarray(coordinates, dtype=np.float64)
    groups = max(1, len(z) // group_size)
    centres = z[rng.choice(len(z), groups, replace=False)]
    for _ in range(iterations):
        nearest = nearest_centre(z, centres)
        for g in range(groups):
            members = z[nearest == g]
            if len(members):
                centres[g] = members.mean(axis=0)
    residuals = z - centres[nearest_centre(z, centres)]
    return (residuals**2).sum(axis=0) / max(1, len(z) - groups)


def public_bandwidth(public_coordinates: np.ndarray, *, rng: np.random.Generator, pairs: int = 20000) -> float:
    """Median distance between random pairs of public coordinates (the RBF length-scale ℓ)."""
    z = np.asarray(public_coordinates, dtype=np.float64)
    first, second = rng.integers(0, len(z), size=(2, pairs))
    keep = first != second
    distances = np.linalg.norm(z[first[keep]] - z[second[keep]], axis=1)
    return float(np.median(distances)) if distances.size else 1.0
