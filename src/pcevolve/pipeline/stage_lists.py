"""Which stages a run runs: the pool's (:mod:`pcevolve.pipeline.stages`) or, without a public pool, those that make
the samples (:mod:`pcevolve.pipeline.made_stages`).

Kept apart from both so that a run without a pool never imports the pool's stages, and with them the encoders, the
decoders and torch, which it does not use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pcevolve.config import RunConfig
    from pcevolve.pipeline.stage import Stage


def stages_for(config: RunConfig) -> tuple[Stage, ...]:
    """The stages a run of ``config`` runs, in order: :data:`pcevolve.pipeline.stages.STAGES`, or without a public
    pool the stages that make the samples from one release (:data:`pcevolve.pipeline.made_stages.MADE_STAGES`)."""
    if config.makes_samples:
        from pcevolve.pipeline.made_stages import MADE_STAGES

        return MADE_STAGES
    from pcevolve.pipeline.stages import STAGES

    return STAGES
