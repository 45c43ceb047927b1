"""The whole run: stages in order, resumable, with the synthetic set delivered at the end."""

from pcevolve.pipeline.run import (
    RunError,
    RunOutcome,
    build_problem,
    class_territories,
    discard_if_unstarted,
    load_public_side,
    open_run,
    run_pipeline,
)

__all__ = ["RunError", "RunOutcome", "build_problem", "class_territories", "discard_if_unstarted", "load_public_side",
           "open_run", "run_pipeline"]
