"""The whole run: stages in order, resumable, with the synthetic set delivered at the end."""

from pcevolve.pipeline.run import (
    RunError,
    RunOutcome,
    discard_if_unstarted,
    open_run,
    run_pipeline,
)
from pcevolve.pipeline.stages import (
    PublicFeatures,
    build_problem,
    class_territories,
    load_pool_labels,
    load_public_features,
    run_randomness,
    search_targets,
)

__all__ = ["PublicFeatures", "RunError", "RunOutcome", "build_problem", "class_territories", "discard_if_unstarted",
           "load_pool_labels", "load_public_features", "open_run", "run_pipeline", "run_randomness",
           "search_targets"]
