"""Stage 3: the evolutionary search over the synthetic set's distribution parameters.

Modules, one concept each:

* ``basis`` — the public principal basis the search moves in (free);
* ``space`` — individuals: per-class offsets and coefficients along the released principal directions;
* ``roundtrip`` — decode → re-encode, real and by a public surrogate (the decoder in the loop);
* ``problem`` — an individual's fitness on fixed draws (common random numbers);
* ``runner`` — the checkpointed loop, per-generation records, final ranking by DP fitness;
* ``assembly`` — a run's search rebuilt from its saved outputs; ``delivery`` — the delivered draw, decoded.

The one DP release the search reads (per-class statistics in the basis) is made in
:mod:`pcevolve.privacy.class_release`. See ``docs/search.md`` for what the search evaluates and ``docs/privacy.md``
§3.6 for why it is DP.
"""

from pcevolve.lazy_exports import lazy_exports

# Imported on first use: `pcevolve budget plan` reads the release's rules without loading the decoders (torch).
__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "basis": ["PublicBasis"],
    "problem": ["SearchProblem"],
    "roundtrip": ["RoundTripSurrogate", "SurrogateData", "round_trip"],
    "runner": ["SearchOutcome", "generation_records", "rank_final", "run_search"],
    "space": ["ClassFrames", "SearchSpace"],
})
