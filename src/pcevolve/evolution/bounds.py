"""Per-parameter box bounds of the search space."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Bounds:
    """A box ``lower <= x <= upper`` over ``D`` real parameters.

    Both arrays are stored as read-only float64 copies of shape ``(D,)``, so a
    ``Bounds`` cannot change under an engine that holds it.

    Raises:
        ValueError: Shapes differ or are not 1-d and non-empty, a value is not
            finite, or ``lower < upper`` fails for some parameter.
    """

    lower: np.ndarray
    upper: np.ndarray

    def __post_init__(self) -> None:
        lower = np.array(self.lower, dtype=np.float64)
        upper = np.array(self.upper, dtype=np.float64)
        if lower.ndim != 1 or lower.size == 0 or lower.shape != upper.shape:
            raise ValueError(f"bounds need two non-empty 1-d arrays of one shape, got {lower.shape} and {upper.shape}")
        if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
            raise ValueError("bounds must be finite")
        bad = np.flatnonzero(~(lower < upper))
        if bad.size:
            raise ValueError(f"lower must be < upper for every parameter; fails at indices {bad[:10].tolist()}")
        lower.flags.writeable = False
        upper.flags.writeable = False
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    @classmethod
    def uniform(cls, low: float, high: float, dim: int) -> "Bounds":
        """The same interval ``[low, high]`` for each of ``dim`` parameters."""
        return cls(np.full(dim, low, dtype=np.float64), np.full(dim, high, dtype=np.float64))

    @property
    def dim(self) -> int:
        """The number of parameters ``D``."""
        return int(self.lower.shape[0])

    @property
    def span(self) -> np.ndarray:
        """``upper - lower`` per parameter (always > 0)."""
        return self.upper - self.lower

    @property
    def centre(self) -> np.ndarray:
        """The midpoint of each interval."""
        return (self.lower + self.upper) / 2.0

    def clip(self, x: np.ndarray) -> np.ndarray:
        """``x`` (shape ``(..., D)``) clipped into the box; a new array."""
        return np.clip(np.asarray(x, dtype=np.float64), self.lower, self.upper)

    def contains(self, x: np.ndarray) -> bool:
        """Whether every row of ``x`` lies inside the box (edges included)."""
        x = np.asarray(x, dtype=np.float64)
        return bool(np.all(x >= self.lower) and np.all(x <= self.upper))

    def widened(self, factor: float) -> "Bounds":
        """The box scaled by ``factor >= 1`` around its centre (used by the coarse phase).

        Raises:
            ValueError: ``factor`` is not a finite number >= 1.
        """
        if not np.isfinite(factor) or factor < 1.0:
            raise ValueError(f"widening factor must be a finite number >= 1, got {factor}")
        if factor == 1.0:
            return self
        half = self.span * (factor / 2.0)
        centre = self.centre
        # min/max guard against rounding: the wide box must always contain this one.
        return Bounds(np.minimum(centre - half, self.lower), np.maximum(centre + half, self.upper))

    def __eq__(self, other: object) -> bool:
        # The generated __eq__ would compare arrays elementwise and fail on truth-testing.
        if not isinstance(other, Bounds):
            return NotImplemented
        return bool(np.array_equal(self.lower, other.lower) and np.array_equal(self.upper, other.upper))

    __hash__ = None  # type: ignore[assignment]  # holds arrays; equal boxes need not hash alike
