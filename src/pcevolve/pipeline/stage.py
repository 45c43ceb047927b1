"""The stage protocol: every step of ``pcevolve run`` after reading the data is one :class:`Stage`.

A stage has one name, used for everything that concerns it: its marker ``stages/<name>.json``, its record
kind in ``records.jsonl``, its line on the summary screen, its public random stream and, when it pays, its
ledger stage and noise stream. :func:`run_stage` is the only place that decides "finished? load it : compute
it": a finished stage is loaded from its outputs, an unfinished one is announced, computed (it saves its own
outputs), recorded and marked done. A stage that reads private data has its time kept in ``secure/``.

Resume rule for a stage that pays: if its ledger stage has spent anything and it has no marker, it was
interrupted after a charge. A ``resumable`` stage (DP-SGD with a checkpoint per paid epoch) continues; any
other stage is refused, because re-running it would pay again.

Adoption (a sweep's runs): a stage that under the run's config reads no private data, pays nothing
(``public_when``) and reads the products of public stages only (``inputs``, each public in turn) computes from the
public data, the config and the seed alone. Given a finished sibling run whose config differs only in its budget and
name (``RunContext.adopt_from``), such a stage copies the sibling's ``outputs`` and marker instead of computing them
again: nothing private moves, and the product is the one the run would have computed. A stage that reads the product
of a DP stage (a retrieval decoder's index encoded by an encoder fine-tuned under DP) is never adopted: its outputs
hold the sibling's DP output, which the run's own ledger never paid for.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.io import atomic_write_json, read_json

if TYPE_CHECKING:
    from pcevolve.config import RunConfig
    from pcevolve.data import LabeledDataset
    from pcevolve.decoders import Decoder
    from pcevolve.encoders.encoder import Encoder
    from pcevolve.executors import Executor
    from pcevolve.modalities import Modality
    from pcevolve.pipeline.secure_zone import SecureZone
    from pcevolve.privacy import BudgetLedger
    from pcevolve.privacy.released_statistics import StatisticsRelease
    from pcevolve.randomness import RunRandomness
    from pcevolve.run_folder import RunFolder
    from pcevolve.search.assembly import PublicFeatures
    from pcevolve.search.pool_labels import PoolLabels
    from pcevolve.search.runner import SearchResult
    from pcevolve.synthesis.release import MadeTable


class StageInterrupted(Exception):
    """A non-resumable stage was interrupted after it paid; the message says what to do."""


class Markers:
    """Markers of finished stages in ``folder/stages`` (each holds the stage's summary)."""

    def __init__(self, folder: RunFolder) -> None:
        self.root = folder.path / "stages"
        self.root.mkdir(exist_ok=True)

    def done(self, name: str) -> dict[str, Any] | None:
        path = self.root / f"{name}.json"
        return read_json(path) if path.exists() else None

    def finish(self, name: str, summary: dict[str, Any]) -> None:
        atomic_write_json(self.root / f"{name}.json", summary)


@dataclass
class Products:
    """What the stages run (or loaded) so far made, one field per stage, named as the stage; ``None`` until then.

    ``labels`` and ``verdict`` stay ``None`` when the config has no pool labels or no verdict to make."""

    representation: Encoder | None = None
    decoder: Decoder | None = None
    public_features: PublicFeatures | None = None
    release: StatisticsRelease | MadeTable | None = None  # MadeTable: a run without a public pool
    labels: PoolLabels | None = None
    verdict: PoolLabels | MadeTable | None = None  # MadeTable: the evolved model of a run without a public pool
    search: SearchResult | None = None
    delivery: dict[str, Any] | None = None  # the delivery's summary


@dataclass
class RunContext:
    """What the stages of one run share: its settings, folder, ledger, random sources, the data, and the
    products of the stages run so far (:class:`Products`, by stage name).

    ``private`` is dropped (set to ``None``) once the release has read it: no later stage may read it.
    """

    config: RunConfig
    folder: RunFolder
    secure: SecureZone
    ledger: BudgetLedger
    randomness: RunRandomness
    modality: Modality
    layout: Any  # the modality's description of one sample (an image shape, a table schema)
    class_names: tuple[str, ...]
    private: LabeledDataset | None
    public: np.ndarray | None
    say: Callable[[str], None] = lambda _: None
    progress: bool = False
    products: Products = field(default_factory=Products)
    markers: Markers | None = None
    adopt_from: Path | None = None  # a finished sibling run folder (module docstring: adoption)
    executor: Executor | None = None  # where the bulk public work runs (local when None)

    def __post_init__(self) -> None:
        if self.markers is None:
            self.markers = Markers(self.folder)


@dataclass(frozen=True)
class Stage:
    """One step of a run.

    Attributes:
        name: The stage's one name (marker, record kind, summary line, random streams, ledger stage).
        pays: Whether it charges the ledger stage ``name``.
        resumable: Whether it can continue after an interruption that followed a charge.
        reads_private: Whether it reads private data under this config (its time then stays in ``secure/``).
        describe: The progress line announcing the stage (without the ``name:`` prefix).
        run: Computes the stage, saves its outputs, returns ``(product, summary)``; the summary (JSON, DP-safe)
            is recorded and becomes the marker.
        load: The product of a finished stage, from its saved outputs and marker summary.
        after: Tidying once the marker is written (deleting a DP-SGD checkpoint: before the marker, the
            checkpoint is what lets an interrupted stage continue without paying twice).
        outputs: What ``run`` writes in the run folder (relative paths), all that ``load`` needs.
        public_when: Whether, under a config, the stage itself reads no private data and pays nothing.
        inputs: The earlier stages whose products ``run`` reads: the stage is public (:meth:`public_under`) only
            when each of them is.
    """

    name: str
    pays: bool
    resumable: bool
    reads_private: Callable[[RunConfig], bool]
    describe: Callable[[RunContext], str]
    run: Callable[[RunContext], tuple[Any, dict[str, Any]]]
    load: Callable[[RunContext, dict[str, Any]], Any]
    after: Callable[[RunContext], None] | None = None
    outputs: tuple[str, ...] = ()
    public_when: Callable[[RunConfig], bool] | None = None
    inputs: tuple[Stage, ...] = ()

    def public_under(self, config: RunConfig) -> bool:
        """Whether, under ``config``, the stage's outputs are a function of the public data, the config and the seed
        alone: it reads no private data, pays nothing, and every stage whose product it reads is public too
        (adoption, module docstring)."""
        return (self.public_when is not None and self.public_when(config)
                and all(stage.public_under(config) for stage in self.inputs))


def run_stage(stage: Stage, context: RunContext) -> tuple[Any, float]:
    """Load ``stage`` if it is finished, else run, record and mark it. Returns ``(product, seconds)``.

    Raises:
        StageInterrupted: ``stage`` pays, is not resumable, has no marker and has already spent budget.
    """
    started = time.perf_counter()
    assert context.markers is not None
    summary = context.markers.done(stage.name)
    if summary is None and _adoptable(stage, context):
        assert context.adopt_from is not None
        summary = _adopt(stage, context.adopt_from, context)
    if summary is not None:
        product = stage.load(context, summary)
    else:
        spent = context.ledger.spent(stage.name) if stage.pays else 0.0
        if spent > 0 and not stage.resumable:
            raise StageInterrupted(
                f"stage {stage.name!r} was interrupted after spending ε = {spent:.4g} of its budget; that budget "
                "is gone and re-running the stage would pay again. Start a new run (another `name:`) to continue")
        context.say(f"{stage.name}: {stage.describe(context)}")
        product, summary = stage.run(context)
        context.folder.record(stage.name, **summary)
        context.markers.finish(stage.name, summary)
        if stage.after is not None:
            stage.after(context)
    setattr(context.products, stage.name, product)
    return product, time.perf_counter() - started


def _adoptable(stage: Stage, context: RunContext) -> bool:
    source = context.adopt_from
    return (source is not None and bool(stage.outputs) and stage.public_under(context.config)
            and (source / "stages" / f"{stage.name}.json").is_file())


def _adopt(stage: Stage, source: Path, context: RunContext) -> dict[str, Any]:
    """Copy a public stage's outputs and marker from ``source`` (module docstring); returns the marker's summary."""
    assert context.markers is not None
    context.say(f"{stage.name}: {stage.describe(context)}, the same as in {source.name} (public data only)")
    for name in stage.outputs:
        origin, target = source / name, context.folder.path / name
        if target.exists():  # a copy an earlier, interrupted adoption left
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        if origin.is_dir():
            shutil.copytree(origin, target)
        else:
            shutil.copy2(origin, target)
    summary = read_json(source / "stages" / f"{stage.name}.json")
    context.folder.record(stage.name, **summary, adopted_from=source.name)
    context.markers.finish(stage.name, summary)
    return summary
