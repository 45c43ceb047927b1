"""Noise sources for mechanisms: a seeded generator (reproducible) or the OS's secure source.

Rules that must never change:

* Mechanisms draw noise only from a :class:`NoiseSource` handed to them, never
  from a global generator.
* :class:`GeneratorNoise` wraps an explicit ``numpy.random.Generator``: the same
  seed gives the same noise. It is for tests, audits and reproducible research;
  its output is predictable to anyone who knows the seed, so a ledger refuses it
  unless the ledger was made for reproducible (not DP) noise. Which source a run
  uses is decided in one place, ``pcevolve.randomness``.
* :class:`SecureNoise` draws every random bit from ``os.urandom`` (the kernel's
  CSPRNG) and turns it into floats with textbook transforms. It is not
  reproducible. Its limits, which hold for the seeded source too:

  - floating-point effects are not defended against: the doubles produced do
    not cover the real line uniformly (Mironov 2012, "On significance of the
    least significant bits for differential privacy"; Jin et al. 2022, "Are we
    there yet? Timing and floating-point attacks on differential privacy
    systems"), so a released value's low-order bits can in principle carry
    information about the exact value. No discrete or snapping mechanism is
    implemented;
  - the noise is bounded: uniforms have 53 bits, so a Gaussian draw never
    exceeds about 8.6 standard deviations (a tail of mass ~1e-17 per
    coordinate is missing, negligible against δ ≥ 1e-10 for up to 1e6
    coordinates per release);
  - timing side channels are not addressed.
"""

from __future__ import annotations

import abc
import math
import os

import numpy as np

_TWO_53 = float(2**53)


class NoiseSource(abc.ABC):
    """Where a mechanism's randomness comes from."""

    secure: bool = False

    @abc.abstractmethod
    def uniform(self, size: int | tuple[int, ...]) -> np.ndarray:
        """Independent uniforms in the open interval (0, 1)."""

    @abc.abstractmethod
    def normal(self, scale: float, size: int | tuple[int, ...]) -> np.ndarray:
        """Independent N(0, scale²) draws."""

    @abc.abstractmethod
    def laplace(self, scale: float, size: int | tuple[int, ...]) -> np.ndarray:
        """Independent Laplace(0, scale) draws."""


def check_positive(name: str, value: float) -> float:
    """``value`` as a float; ValueError naming ``name`` unless it is positive and finite."""
    number = float(value)
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return number


class GeneratorNoise(NoiseSource):
    """Noise from an explicit ``numpy.random.Generator`` (reproducible, not secure).

    Args:
        generator: The generator to draw from; it is used (and advanced) in place.
    """

    def __init__(self, generator: np.random.Generator) -> None:
        if not isinstance(generator, np.random.Generator):
            raise TypeError(f"expected numpy.random.Generator, got {type(generator).__name__}")
        self.generator = generator

    def uniform(self, size: int | tuple[int, ...]) -> np.ndarray:
        u = self.generator.random(size)
        # Generator.random is in [0, 1); map an exact 0 to the smallest positive double of the grid.
        return np.where(u == 0.0, 0.5 / _TWO_53, u)

    def normal(self, scale: float, size: int | tuple[int, ...]) -> np.ndarray:
        return self.generator.normal(0.0, check_positive("noise scale", scale), size)

    def laplace(self, scale: float, size: int | tuple[int, ...]) -> np.ndarray:
        return self.generator.laplace(0.0, check_positive("noise scale", scale), size)


class SecureNoise(NoiseSource):
    """Noise whose every bit comes from ``os.urandom``. See the module docstring for its limits."""

    secure = True

    def uniform(self, size: int | tuple[int, ...]) -> np.ndarray:
        shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
        count = int(np.prod(shape, dtype=np.int64))
        words = np.frombuffer(os.urandom(8 * count), dtype="<u8") >> np.uint64(11)  # 53 random bits
        # (k + 0.5) / 2**53 lies strictly inside (0, 1) and is exact in double precision.
        return ((words.astype(np.float64) + 0.5) / _TWO_53).reshape(shape)

    def normal(self, scale: float, size: int | tuple[int, ...]) -> np.ndarray:
        scale = check_positive("noise scale", scale)
        shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
        count = int(np.prod(shape, dtype=np.int64))
        pairs = (count + 1) // 2
        u1, u2 = self.uniform(pairs), self.uniform(pairs)
        radius = np.sqrt(-2.0 * np.log(u1))  # Box–Muller
        z = np.concatenate([radius * np.cos(2.0 * np.pi * u2), radius * np.sin(2.0 * np.pi * u2)])[:count]
        return scale * z.reshape(shape)

    def laplace(self, scale: float, size: int | tuple[int, ...]) -> np.ndarray:
        scale = check_positive("noise scale", scale)
        centred = self.uniform(size) - 0.5  # in (-1/2, 1/2), never exactly 0
        return -scale * np.sign(centred) * np.log1p(-2.0 * np.abs(centred))  # inverse CDF


def as_noise_source(noise: NoiseSource | np.random.Generator) -> NoiseSource:
    """Accept a :class:`NoiseSource` or wrap a ``numpy.random.Generator``."""
    if isinstance(noise, NoiseSource):
        return noise
    if isinstance(noise, np.random.Generator):
        return GeneratorNoise(noise)
    raise TypeError(f"noise must be a NoiseSource or numpy.random.Generator, got {type(noise).__name__}")
