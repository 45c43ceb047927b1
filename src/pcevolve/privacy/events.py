"""Privacy events: immutable records of what a mechanism released, in the form the accountant needs.

Rules that must never change:

* An event is data. It holds the parameters that determine the privacy loss and
  nothing else: never the released value, never private data.
* Noise parameters are stated **relative to the sensitivity under the ledger's
  neighbouring relation** (``add_remove`` or ``replace_one``). For a mechanism
  applied once to the whole dataset the privacy loss depends only on that ratio,
  so the accountant can treat such events the same way under either relation.
  Subsampled events (DP-SGD) are the exception: there the relation changes the
  analysis, and the accountant is told which one holds (see ``accounting.py``).
* Events validate their parameters when built, so a malformed event can never
  reach the accountant or the ledger file.
* Each event has a repetition count. Two events that differ only in that count
  compose to one event with the counts added; the accountant relies on this to
  account for a history independently of how it was split into charges.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeAlias

Neighbouring: TypeAlias = Literal["add_remove", "replace_one"]
NEIGHBOURING_RELATIONS: tuple[Neighbouring, ...] = ("add_remove", "replace_one")


def check_neighbouring(value: str) -> Neighbouring:
    """Return ``value`` if it names a supported neighbouring relation, else raise ``ValueError``."""
    if value not in NEIGHBOURING_RELATIONS:
        raise ValueError(f"unknown neighbouring relation {value!r}; expected one of {NEIGHBOURING_RELATIONS}")
    return value  # type: ignore[return-value]


def _positive_finite(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number) or number <= 0.0:
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return number


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return value


@dataclass(frozen=True)
class PrivacyEvent:
    """Base of all events. Subclasses are frozen dataclasses with a unique ``kind``."""

    kind: ClassVar[str] = ""
    #: The field that holds the repetition count; None for an event that cannot be repeated.
    repetition_field: ClassVar[str | None] = None

    @property
    def repetitions(self) -> int:
        """How many times the mechanism described by this event was applied."""
        return 1 if self.repetition_field is None else getattr(self, self.repetition_field)

    def with_repetitions(self, repetitions: int) -> "PrivacyEvent":
        """The same mechanism applied ``repetitions`` times."""
        if self.repetition_field is not None:
            return dataclasses.replace(self, **{self.repetition_field: repetitions})
        if repetitions != 1:
            raise ValueError(f"{self.kind} events cannot be repeated")
        return self

    def parameters(self) -> dict[str, Any]:
        """The event's fields as a JSON-ready mapping (without ``kind``)."""
        return dataclasses.asdict(self)

    def describe(self) -> str:
        """Short human-readable form, e.g. ``gaussian_release(noise_multiplier=3.7, count=2)``."""
        args = ", ".join(f"{key}={value:.6g}" if isinstance(value, float) else f"{key}={value}"
                         for key, value in self.parameters().items())
        return f"{self.kind}({args})"


@dataclass(frozen=True)
class GaussianRelease(PrivacyEvent):
    """``count`` releases, each adding N(0, (noise_multiplier · Δ₂)²) to every coordinate of a query.

    Δ₂ is the query's L2 sensitivity under the ledger's neighbouring relation. The
    privacy loss of one release depends only on ``noise_multiplier`` = std / Δ₂.
    """

    kind: ClassVar[str] = "gaussian_release"
    repetition_field: ClassVar[str] = "count"
    noise_multiplier: float
    count: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_multiplier", _positive_finite("noise_multiplier", self.noise_multiplier))
        _positive_int("count", self.count)


@dataclass(frozen=True)
class LaplaceRelease(PrivacyEvent):
    """``count`` releases, each adding Laplace(0, noise_multiplier · Δ₁) to every coordinate.

    Δ₁ is the query's L1 sensitivity under the ledger's neighbouring relation; one
    release is (1 / noise_multiplier)-DP.
    """

    kind: ClassVar[str] = "laplace_release"
    repetition_field: ClassVar[str] = "count"
    noise_multiplier: float
    count: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_multiplier", _positive_finite("noise_multiplier", self.noise_multiplier))
        _positive_int("count", self.count)


@dataclass(frozen=True)
class ExponentialSelection(PrivacyEvent):
    """``count`` selections by the exponential mechanism, each ε-DP (sampling ∝ exp(ε·u / (2Δu))).

    Such a selection is also ε-bounded-range, hence ε²/8-zCDP (Cesar & Rogers 2021);
    the accountant uses both facts (see ``accounting.py``).
    """

    kind: ClassVar[str] = "exponential_selection"
    repetition_field: ClassVar[str] = "count"
    epsilon: float
    count: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _positive_finite("epsilon", self.epsilon))
        _positive_int("count", self.count)


@dataclass(frozen=True)
class SubsampledGaussianSteps(PrivacyEvent):
    """``steps`` DP-SGD steps: Poisson sampling at rate q, per-sample clip C, noise N(0, (σC)²) on the sum.

    ``noise_multiplier`` is σ = noise std / C, with C the per-sample clipping norm
    (the most one record can add to the gradient sum), as in Opacus.
    """

    kind: ClassVar[str] = "subsampled_gaussian_steps"
    repetition_field: ClassVar[str] = "steps"
    sampling_probability: float
    noise_multiplier: float
    steps: int = 1

    def __post_init__(self) -> None:
        q = _positive_finite("sampling_probability", self.sampling_probability)
        if q > 1.0:
            raise ValueError(f"sampling_probability must be at most 1, got {self.sampling_probability!r}")
        object.__setattr__(self, "sampling_probability", q)
        object.__setattr__(self, "noise_multiplier", _positive_finite("noise_multiplier", self.noise_multiplier))
        _positive_int("steps", self.steps)


@dataclass(frozen=True)
class PostProcessing(PrivacyEvent):
    """A step that reads only earlier releases or public data. Costs nothing; recorded for transparency."""

    kind: ClassVar[str] = "post_processing"


EVENT_TYPES: Mapping[str, type[PrivacyEvent]] = {
    cls.kind: cls
    for cls in (GaussianRelease, LaplaceRelease, ExponentialSelection, SubsampledGaussianSteps, PostProcessing)
}


def event_to_json(event: PrivacyEvent) -> dict[str, Any]:
    """Serialise an event as ``{"kind": ..., **parameters}``."""
    if type(event) not in EVENT_TYPES.values():
        raise TypeError(f"not a pcevolve privacy event: {event!r}")
    return {"kind": event.kind, **event.parameters()}


def event_from_json(data: Mapping[str, Any]) -> PrivacyEvent:
    """Rebuild an event written by :func:`event_to_json`, validating every field.

    Raises:
        ValueError: unknown kind, missing or unknown fields, or an invalid value.
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"an event must be a JSON object, got {type(data).__name__}")
    fields = dict(data)
    kind = fields.pop("kind", None)
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown event kind {kind!r}; expected one of {sorted(EVENT_TYPES)}")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(fields) - names)
    if unknown:
        raise ValueError(f"{kind} event has unknown fields {unknown}")
    try:
        return cls(**fields)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"invalid {kind} event {dict(data)!r}: {exc}") from None
