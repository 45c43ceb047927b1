"""The three basic DP mechanisms. Each ``release`` charges the ledger first and draws noise only if accepted.

Rules that must never change:

* ``release`` validates its input, then calls ``ledger.charge`` — which raises
  :class:`~pcevolve.privacy.ledger_errors.BudgetExceeded` before any noise is drawn —
  and only then touches the noise source. A refused release leaves the noise
  source exactly as it was.
* A mechanism states the neighbouring relation its sensitivity refers to and
  refuses a ledger that uses another one.
* A mechanism hands its noise source to ``ledger.charge``, so a ledger that
  promises secure noise refuses a seeded source before anything is drawn.
* The sensitivity is the caller's claim about the exact query it passes in; each
  class says what the claim must cover. ``statistics.py`` builds the releases
  whose sensitivity pcevolve derives itself (by clipping).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from pcevolve.privacy.events import (
    ExponentialSelection,
    GaussianRelease,
    LaplaceRelease,
    Neighbouring,
    check_neighbouring,
)
from pcevolve.privacy.noise import NoiseSource, as_noise_source, check_positive

if TYPE_CHECKING:
    from pcevolve.privacy.ledger import BudgetLedger


def _exact_value(value: np.ndarray | float) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(array)):
        raise ValueError("the exact value to release contains NaN or inf")
    return array


def check_ledger_relation(mechanism: Neighbouring, ledger: "BudgetLedger") -> None:
    """Refuse a ledger that accounts for another neighbouring relation than the mechanism's sensitivity refers to."""
    if ledger.neighbouring != mechanism:
        raise ValueError(f"the mechanism's sensitivity is stated for {mechanism!r} neighbours but the ledger "
                         f"accounts for {ledger.neighbouring!r}")


def _shaped(array: np.ndarray) -> np.ndarray | float:
    return float(array) if array.ndim == 0 else array


@dataclass(frozen=True)
class _AdditiveNoiseMechanism:
    """Shared body of the additive-noise mechanisms: validate, charge the ledger, then add noise.

    Subclasses state the neighbouring relation, the sensitivity norm and the event; the
    order here (validate → charge → draw) is what makes a refused release draw nothing.
    """

    sensitivity: float
    noise_multiplier: float
    neighbouring: Neighbouring = field(default="add_remove", kw_only=True)

    def __post_init__(self) -> None:
        check_positive("sensitivity", self.sensitivity)
        check_positive("noise_multiplier", self.noise_multiplier)
        check_neighbouring(self.neighbouring)

    @property
    def event(self) -> GaussianRelease | LaplaceRelease:
        raise NotImplementedError

    def _draw(self, source: NoiseSource, shape: tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError

    def release(
        self, value: np.ndarray | float, *, ledger: "BudgetLedger", stage: str,
        noise: NoiseSource | np.random.Generator, description: str = "",
    ) -> np.ndarray | float:
        """Charge the ledger, then return ``value`` plus noise (same shape; float for scalars).

        Raises:
            BudgetExceeded: the ledger refused; no noise was drawn.
        """
        exact = _exact_value(value)
        source = as_noise_source(noise)
        check_ledger_relation(self.neighbouring, ledger)
        ledger.charge(stage, self.event, description=description or self.event.kind.replace("_", " "), noise=source)
        return _shaped(exact + self._draw(source, exact.shape))


@dataclass(frozen=True)
class GaussianMechanism(_AdditiveNoiseMechanism):
    """Adds N(0, (noise_multiplier · sensitivity)²) independently to every coordinate of a query.

    Neighbouring relation: ``neighbouring`` (default add/remove-one; replace-one
    supported). ``sensitivity`` must bound the L2 distance between the exact query
    values on any two neighbouring datasets under that relation — e.g. for a sum of
    per-sample vectors clipped to norm C it is C under add/remove-one and 2C under
    replace-one (one clipped vector leaves, one arrives). One release is a
    ``GaussianRelease(noise_multiplier)`` event: its privacy loss depends only on
    std / sensitivity.

    Attributes:
        sensitivity: L2 sensitivity Δ₂ of the query under ``neighbouring``.
        noise_multiplier: Noise std divided by Δ₂.
        neighbouring: The relation Δ₂ refers to.
    """

    @property
    def noise_std(self) -> float:
        """Standard deviation of the noise on each coordinate."""
        return self.noise_multiplier * self.sensitivity

    @property
    def event(self) -> GaussianRelease:
        return GaussianRelease(self.noise_multiplier)

    def _draw(self, source: NoiseSource, shape: tuple[int, ...]) -> np.ndarray:
        return source.normal(self.noise_std, shape)


@dataclass(frozen=True)
class LaplaceMechanism(_AdditiveNoiseMechanism):
    """Adds Laplace(0, noise_multiplier · sensitivity) independently to every coordinate of a query.

    Neighbouring relation: ``neighbouring`` (default add/remove-one; replace-one
    supported). ``sensitivity`` must bound the **L1** distance between the exact
    query values on neighbouring datasets under that relation — e.g. a histogram
    of counts has L1 sensitivity 1 under add/remove-one and 2 under replace-one.
    One release is (1 / noise_multiplier)-DP; the accountant composes it through
    its privacy loss distribution.

    Attributes:
        sensitivity: L1 sensitivity Δ₁ of the query under ``neighbouring``.
        noise_multiplier: Laplace scale divided by Δ₁.
        neighbouring: The relation Δ₁ refers to.
    """

    @property
    def noise_scale(self) -> float:
        """Laplace scale b on each coordinate (std is b·√2)."""
        return self.noise_multiplier * self.sensitivity

    @property
    def event(self) -> LaplaceRelease:
        return LaplaceRelease(self.noise_multiplier)

    def _draw(self, source: NoiseSource, shape: tuple[int, ...]) -> np.ndarray:
        return source.laplace(self.noise_scale, shape)


@dataclass(frozen=True)
class ExponentialMechanism:
    """Selects candidate r with probability ∝ exp(ε · u(r) / (2 Δu)) from a fixed candidate set.

    Neighbouring relation: ``neighbouring`` (default add/remove-one; replace-one
    supported). ``utility_sensitivity`` Δu must bound |u(D, r) − u(D', r)| for every
    candidate r and neighbouring D, D' under that relation; e.g. Δu = 1 for
    utilities in [0, 1] (PCEvolve-style selection). The candidate set itself must
    not depend on the private data. The selection is ε-DP and ε-bounded-range,
    hence ε²/8-zCDP; it is an ``ExponentialSelection(epsilon)`` event.

    ``monotone``: the utilities move together — going from D to a neighbour D' moves every candidate's
    utility the same way (each up by 0 to Δu, or each down by 0 to Δu), as a count of the private records
    a candidate gets right does when a record is added or removed. Then probabilities ∝ exp(ε · u / Δu)
    are still ε-DP and ε-bounded-range (the log-probability of every candidate moves by ε·Δ(u)/Δu minus one
    common normaliser term, both within [0, ε] or both within [−ε, 0]; McSherry & Talwar 2007, Dwork &
    Roth 2014 §3.4), so the selection is twice as sharp for the same ε. Replace-one moves one candidate's
    count up and another's down, so it is refused there.

    Attributes:
        epsilon: The selection's pure ε.
        utility_sensitivity: Δu under ``neighbouring``.
        neighbouring: The relation Δu refers to.
        monotone: The utilities are monotone in the data as above (add/remove only).
    """

    epsilon: float
    utility_sensitivity: float = field(default=1.0, kw_only=True)
    neighbouring: Neighbouring = field(default="add_remove", kw_only=True)
    monotone: bool = field(default=False, kw_only=True)

    def __post_init__(self) -> None:
        check_positive("epsilon", self.epsilon)
        check_positive("utility_sensitivity", self.utility_sensitivity)
        check_neighbouring(self.neighbouring)
        if self.monotone and self.neighbouring != "add_remove":
            raise ValueError("a monotone exponential mechanism needs add/remove neighbours: replacing a record can "
                             "raise one candidate's utility and lower another's")

    @property
    def event(self) -> ExponentialSelection:
        return ExponentialSelection(self.epsilon)

    def probabilities(self, utilities: np.ndarray) -> np.ndarray:
        """Selection probabilities for the given utilities (pure function; no privacy cost by itself)."""
        scores = _exact_value(utilities)
        if scores.ndim != 1 or scores.size == 0:
            raise ValueError(f"utilities must be a non-empty 1-D array, got shape {scores.shape}")
        spread = 1.0 if self.monotone else 2.0
        logits = self.epsilon * scores / (spread * self.utility_sensitivity)
        weights = np.exp(logits - logits.max())
        return weights / weights.sum()

    def release(
        self, utilities: np.ndarray, *, ledger: "BudgetLedger", stage: str,
        noise: NoiseSource | np.random.Generator, description: str = "",
    ) -> int:
        """Charge the ledger, then return the index of the selected candidate.

        Raises:
            BudgetExceeded: the ledger refused; no randomness was drawn.
        """
        probabilities = self.probabilities(utilities)
        source = as_noise_source(noise)
        check_ledger_relation(self.neighbouring, ledger)
        ledger.charge(stage, self.event, description=description or "exponential selection", noise=source)
        cumulative = np.cumsum(probabilities)
        u = float(source.uniform(1)[0]) * cumulative[-1]
        return int(min(np.searchsorted(cumulative, u, side="right"), probabilities.size - 1))
