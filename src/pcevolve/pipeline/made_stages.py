"""The stages of a run without a public pool (``data.public: null``, tables): the rows are made from one release.

=================  ====================================  ==============================
stage              reads                                 pays (ledger stage)
=================  ====================================  ==============================
release            the private rows, once                ``release`` (:mod:`pcevolve.synthesis.release`)
verdict            the private rows, each generation     ``verdict`` (``synthesis.evolve`` only)
delivery           the release (or the evolved model)    nothing (post-processing)
=================  ====================================  ==============================

The same runner as a run with a pool (:func:`pcevolve.pipeline.stage.run_stage`): markers, records, resume and the
ledger's refusal before any noise. The release is saved as ``release.npz`` (the model's released arrays and the noisy
class counts, DP outputs like a pool run's release); delivery draws the rows from it with the public ``delivery``
stream and writes them in the input's format.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pcevolve.io import atomic_write_npz
from pcevolve.pipeline.stage import RunContext, Stage
from pcevolve.search.delivery import largest_remainder
from pcevolve.synthesis.evolve import STAGE as EVOLUTION_STAGE
from pcevolve.synthesis.evolve import EvolutionSettings, evolve
from pcevolve.synthesis.marginals import MarginalModel
from pcevolve.synthesis.release import STAGE as RELEASE_STAGE
from pcevolve.synthesis.release import MadeTable, release_table

#: The released model, in the run folder (``counts``: the noisy class counts, as a pool run's release.npz holds).
RELEASE_FILE = "release.npz"


def _run_release(c: RunContext) -> tuple[MadeTable, dict[str, Any]]:
    assert c.private is not None
    model, summary = release_table(c.private, c.layout, c.config.synthesis, epsilon=c.config.privacy.epsilon,
                                   ledger=c.ledger, noise=c.randomness.noise(RELEASE_STAGE),
                                   rng=c.randomness.public(RELEASE_STAGE))
    model.save(c.folder.path / RELEASE_FILE, counts=np.asarray(summary["noisy_counts"]))
    summary["stage_epsilon"] = c.ledger.spent(RELEASE_STAGE)
    return model, summary


def _describe_release(c: RunContext) -> str:
    synthesis = c.config.synthesis
    epsilon = c.config.privacy.epsilon
    how = ("bins placed at released quantiles" if synthesis.binning_for(epsilon) == "quantiles"
           else "equal-width bins over the declared bounds")
    labels = (f", then {synthesis.labeller_steps} noisy gradient steps of a logistic labeller"
              if synthesis.labels_for(epsilon, len(c.class_names)) == "logistic" else "")
    return f"class sizes and each class's histogram of every column ({how}){labels}"


RELEASE = Stage(
    name="release", pays=True, resumable=False, reads_private=lambda config: True, describe=_describe_release,
    run=_run_release, load=lambda c, _: MadeTable.load(c.folder.path / RELEASE_FILE, c.layout),
    outputs=(RELEASE_FILE,))


#: The evolution's winner so far and the generations it has been through (a resumed run continues from it).
EVOLVED_FILE = "search/evolved.npz"
#: The record of each generation of the evolution (which candidate the verdict chose, the jitter, its ε).
GENERATION_RECORD = "evolution_generation"


def _evolution_settings(c: RunContext) -> EvolutionSettings:
    s = c.config.synthesis
    return EvolutionSettings(generations=s.generations, candidates=s.candidates, rows=s.candidate_rows,
                             clip=s.loglik_clip, mutation=s.mutation)


def _run_verdict(c: RunContext) -> tuple[MadeTable | None, dict[str, Any]]:
    """The evolution (:mod:`pcevolve.synthesis.evolve`), its winner saved after every generation; a resumed run
    continues after the last generation it paid for (one paid but not saved is lost with its budget)."""
    if not c.config.synthesis.evolve:
        return None, {"evolved": False}
    release = c.products.release
    assert isinstance(release, MadeTable) and c.private is not None
    path = c.folder.path / EVOLVED_FILE
    paid = len(c.ledger.events(EVOLUTION_STAGE))
    model = release.marginals
    if paid and path.is_file():
        model = MarginalModel.load(path, c.layout)
    kept: list[bool] = [bool(r["kept_parent"]) for r in c.folder.records(GENERATION_RECORD)]

    def saved(generation: int, winner: MarginalModel, record: dict[str, Any]) -> None:
        path.parent.mkdir(exist_ok=True)
        winner.save(path, generations=np.array(generation + 1))
        c.folder.record(GENERATION_RECORD, **record)
        kept.append(bool(record["kept_parent"]))

    model = evolve(model, c.private.samples, c.private.labels, c.layout, _evolution_settings(c),
                   noise_std=_release_noise_std(c), ledger=c.ledger,
                   noise=c.randomness.noise(EVOLUTION_STAGE), seed=c.randomness.public_seed("search"), start=paid,
                   on_generation=saved)
    return MadeTable(model), {"evolved": True, "generations": c.config.synthesis.generations,
                              "kept_parent": int(sum(kept)), "stage_epsilon": c.ledger.spent(EVOLUTION_STAGE)}


def _release_noise_std(c: RunContext) -> float:
    """The marginals' noise std, as the release stage recorded it (its marker)."""
    assert c.markers is not None
    done = c.markers.done(RELEASE_STAGE)
    assert done is not None
    return float(done["noise_std"])


def _load_verdict(c: RunContext, summary: dict[str, Any]) -> MadeTable | None:
    if not summary.get("evolved"):
        return None
    return MadeTable(MarginalModel.load(c.folder.path / EVOLVED_FILE, c.layout))


VERDICT = Stage(
    name=EVOLUTION_STAGE, pays=True, resumable=True,
    reads_private=lambda config: config.synthesis.evolve,
    describe=lambda c: (f"{c.config.synthesis.generations} generations, each a private verdict among "
                        f"{c.config.synthesis.candidates} variants of the released marginals"),
    run=_run_verdict, load=_load_verdict)


def delivery_counts(model: MadeTable, per_class: int, balance: str) -> list[int]:
    """Rows to deliver per class: ``per_class`` each, or (``balance: released``) ``per_class`` × K in all, split by
    the released class sizes (post-processing)."""
    sizes = model.marginals.class_sizes
    if balance == "balanced":
        return [per_class] * len(sizes)
    return [int(n) for n in largest_remainder(per_class * len(sizes), sizes / sizes.sum())]


def _run_delivery(c: RunContext) -> tuple[dict[str, Any], dict[str, Any]]:
    model = c.products.verdict if isinstance(c.products.verdict, MadeTable) else c.products.release
    assert isinstance(model, MadeTable)
    synthesis = c.config.synthesis
    rows, labels = model.sample(delivery_counts(model, synthesis.per_class, synthesis.balance),
                                c.randomness.public("delivery"))
    counts = np.bincount(labels, minlength=len(c.class_names))
    written = c.modality.write_synthetic(c.folder.path / c.modality.delivered_name, rows, labels, c.class_names,
                                         c.layout, overwrite=True)  # the run's own folder
    atomic_write_npz(c.folder.path / "synthetic.npz", labels=labels, class_names=np.array(list(c.class_names)))
    evolved = c.markers.done(EVOLUTION_STAGE) if c.markers is not None else None
    if evolved and evolved.get("evolved"):
        made_by = (f"the released class marginals evolved over {evolved['generations']} generations, each a private "
                   f"verdict among variants of the winner so far (the winner kept in {evolved['kept_parent']} of "
                   "them)")
    elif model.theta is None:
        made_by = ("the released class marginals, each column drawn independently within its class; not evolved — "
                   "the one-shot release is delivered, as the evolution (synthesis.evolve) never beat it by more "
                   "than the run-to-run spread in our measurements")
    else:
        made_by = ("rows drawn from the released class marginals, labelled by a logistic regression trained on the "
                   "private rows with noisy gradient steps; not evolved — the one-shot release is delivered, as the "
                   "evolution (synthesis.evolve) never beat it by more than the run-to-run spread in our measurements")
    summary = {"counts": [int(n) for n in counts], "delivered": written.relative_to(c.folder.path).as_posix(),
               "made_by": made_by}
    return summary, summary


DELIVERY = Stage(
    name="delivery", pays=False, resumable=True, reads_private=lambda config: False,
    describe=lambda c: "drawing the rows from the release",
    run=_run_delivery, load=lambda c, summary: summary)

#: The stages of a run without a public pool, in order.
MADE_STAGES: tuple[Stage, ...] = (RELEASE, VERDICT, DELIVERY)
