"""What one generation of the search recorded."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

Phase = Literal["coarse", "fine"]


@dataclass(frozen=True)
class GenerationSummary:
    """The record of generation ``generation``: how it scored and how its offspring were bred.

    Fitness statistics are over the finite fitness values only; ``None`` means the
    generation had none. Diversity is the mean over parameters of the population's
    std divided by the (true) span.

    Attributes:
        generation: Index of the evaluated population (0 = the initial one).
        phase: ``"coarse"`` or ``"fine"``: the phase of this generation, whose box the
            population lies in and whose rate the breeding step from it uses.
        best_fitness / mean_fitness / std_fitness: Over this generation's finite fitness.
        best_so_far: Best finite fitness over generations ``0 .. generation``.
        invalid: Individuals whose fitness was NaN or infinite (ranked worst).
        diversity: Mean per-parameter std / span of this population.
        mutation_rate: Per-gene rate used to breed the next generation from this one
            (``converging_rate`` when ``adaptive``); ``None`` when the search ended here.
        periodic: Whether the periodic mutation round ran in that breeding step.
        adaptive: Whether diversity was under the threshold, so the converging rate applied.
        improved: Whether this generation counted as an improvement for ``patience``.
    """

    generation: int
    phase: Phase
    best_fitness: float | None
    mean_fitness: float | None
    std_fitness: float | None
    best_so_far: float | None
    invalid: int
    diversity: float
    mutation_rate: float | None
    periodic: bool
    adaptive: bool
    improved: bool

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (floats as floats, no NaN) that :meth:`from_json` restores exactly."""
        return asdict(self)

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> "GenerationSummary":
        """Inverse of :meth:`to_json`."""
        names = {field.name for field in fields(cls)}
        if set(document) != names:
            raise ValueError(f"generation summary needs keys {sorted(names)}, got {sorted(document)}")
        return cls(**document)
