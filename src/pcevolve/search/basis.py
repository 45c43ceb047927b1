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

from pcevolve.decoders.check import unit_vectors


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Each row scaled to unit L2 norm (zero rows stay zero), in float64."""
    return unit_vectors(np.asarray(x, dtype=np.float64))


@dataclass(frozen=True, eq=False)
class PublicBasis:
    """Centre c (d,), orthonormal directions B (d, P) and the public variance along each (P,)."""

    centre: np.ndarray
    directions: np.ndarray
    variances: np.ndarray

    @classmethod
    def fit(cls, public_features: np.ndarray, dim: int) -> "PublicBasis":
        """Principal directions of the public pool's unit features.

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
        # Sign convention (largest entry positive) so the basis does not flip between LAPACK builds.
        directions = vt[:dim].T
        signs = np.sign(directions[np.abs(directions).argmax(axis=0), np.arange(dim)])
        directions = directions * np.where(signs == 0, 1.0, signs)
        return cls(centre=centre, directions=directions, variances=singular[:dim] ** 2 / (len(units) - 1))

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
