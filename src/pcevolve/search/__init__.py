"""Stage 3: the evolutionary search over the synthetic set's distribution parameters.

Modules, one concept each:

* ``basis`` — the public principal basis the search moves in (free);
* ``release`` — the one DP release of per-class statistics in that basis (the ledger's release stage);
* ``space`` — individuals: per-class offsets and coefficients along the released principal directions;
* ``roundtrip`` — decode → re-encode, real and by a public surrogate (the decoder in the loop);
* ``problem`` — an individual's fitness on fixed draws (common random numbers);
* ``runner`` — the checkpointed loop, per-generation records, final ranking by DP fitness.

See ``docs/search.md`` for what the search evaluates and ``docs/privacy.md`` §3.6 for why it is DP.
"""

from pcevolve.search.basis import PublicBasis
from pcevolve.search.problem import SearchProblem
from pcevolve.search.release import StatisticsRelease, release_statistics
from pcevolve.search.roundtrip import RoundTripSurrogate, SurrogateData, round_trip
from pcevolve.search.runner import SearchOutcome, generation_records, rank_final, run_search
from pcevolve.search.space import ClassFrames, SearchSpace

__all__ = [
    "ClassFrames",
    "PublicBasis",
    "RoundTripSurrogate",
    "SearchOutcome",
    "SearchProblem",
    "SearchSpace",
    "StatisticsRelease",
    "SurrogateData",
    "generation_records",
    "rank_final",
    "release_statistics",
    "round_trip",
    "run_search",
]
