"""Stage 3 engine: a generic, deterministic evolutionary search over bounded real vectors.

It knows nothing about features, privacy or fitness: the caller asks for a
population, evaluates it and tells the fitness back (:class:`Evolution`).
Operators are pure functions registered by name in :data:`MUTATIONS` and
:data:`CROSSOVERS`, which ``SearchConfig`` names by key.

Modules (one concept each):

* ``bounds`` — the search box and its widened coarse-phase version;
* ``settings`` — the validated, frozen settings (from ``SearchConfig``);
* ``mutations`` / ``crossovers`` — the operators; ``registry`` — their names;
* ``selection`` — ranking (non-finite fitness last) and tournament selection;
* ``summary`` — the per-generation record;
* ``engine`` — the ask/tell loop, schedule, elitism, state dict;
* ``checkpoint`` — atomic npz + JSON checkpoints with the exact generator state.
"""

from pcevolve.evolution.bounds import Bounds
from pcevolve.evolution.checkpoint import (
    CheckpointError,
    generator_from_json,
    generator_state_to_json,
    load_state,
    save_state,
)
from pcevolve.evolution.crossovers import Crossover, interpolation_crossover, uniform_crossover
from pcevolve.evolution.engine import STATE_FORMAT, Evolution
from pcevolve.evolution.mutations import (
    DEFAULT_DIFFERENTIAL_SCALE,
    DEFAULT_POLYNOMIAL_ETA,
    Mutation,
    differential_mutation,
    gaussian_mutation,
    polynomial_mutation,
)
from pcevolve.evolution.registry import CROSSOVERS, MUTATIONS, resolve_crossover, resolve_mutation
from pcevolve.evolution.selection import clean_fitness, rank_order, tournament_select
from pcevolve.evolution.settings import EvolutionSettings
from pcevolve.evolution.summary import GenerationSummary, Phase

__all__ = [
    "CROSSOVERS",
    "DEFAULT_DIFFERENTIAL_SCALE",
    "DEFAULT_POLYNOMIAL_ETA",
    "MUTATIONS",
    "STATE_FORMAT",
    "Bounds",
    "CheckpointError",
    "Crossover",
    "EvolutionSettings",
    "Evolution",
    "GenerationSummary",
    "Mutation",
    "Phase",
    "clean_fitness",
    "differential_mutation",
    "gaussian_mutation",
    "generator_from_json",
    "generator_state_to_json",
    "interpolation_crossover",
    "load_state",
    "polynomial_mutation",
    "rank_order",
    "resolve_crossover",
    "resolve_mutation",
    "save_state",
    "tournament_select",
    "uniform_crossover",
]
