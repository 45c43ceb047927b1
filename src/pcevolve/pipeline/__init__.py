"""The whole run: stages in order, resumable, with the synthetic set delivered at the end."""

from pcevolve.lazy_exports import lazy_exports

# Imported on first use: the run folder's secure zone is read by commands that never run a stage.
__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "export": ["ExportError", "ExportSummary", "export_run"],
    "run": ["RunError", "RunOutcome", "discard_if_unstarted", "finished_run", "open_run", "run_pipeline"],
})
