"""The stages of a run without a public pool (``data.public: null``, tables): the rows are made from one release.

=================  ====================================  ==============================
stage              reads                                 pays (ledger stage)
=================  ====================================  ==============================
release            the private rows, once                ``release`` (:mod:`pcevolve.synthesis.release`)
delivery           the release                           nothing (post-processing)
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


def delivery_counts(model: MadeTable, per_class: int, balance: str) -> list[int]:
    """Rows to deliver per class: ``per_class`` each, or (``balance: released``) ``per_class`` × K in all, split by
    the released class sizes (post-processing)."""
    sizes = model.marginals.class_sizes
    if balance == "balanced":
        return [per_class] * len(sizes)
    return [int(n) for n in largest_remainder(per_class * len(sizes), sizes / sizes.sum())]


def _run_delivery(c: RunContext) -> tuple[dict[str, Any], dict[str, Any]]:
    model = c.products.release
    assert isinstance(model, MadeTable)
    synthesis = c.config.synthesis
    rows, labels = model.sample(delivery_counts(model, synthesis.per_class, synthesis.balance),
                                c.randomness.public("delivery"))
    counts = np.bincount(labels, minlength=len(c.class_names))
    written = c.modality.write_synthetic(c.folder.path / c.modality.delivered_name, rows, labels, c.class_names,
                                         c.layout, overwrite=True)  # the run's own folder
    atomic_write_npz(c.folder.path / "synthetic.npz", labels=labels, class_names=np.array(list(c.class_names)))
    made_by = ("the released class marginals, each column drawn independently within its class"
               if model.theta is None else
               "rows drawn from the released class marginals, labelled by a logistic regression trained on the "
               "private rows with noisy gradient steps")
    summary = {"counts": [int(n) for n in counts], "delivered": written.relative_to(c.folder.path).as_posix(),
               "made_by": made_by}
    return summary, summary


DELIVERY = Stage(
    name="delivery", pays=False, resumable=True, reads_private=lambda config: False,
    describe=lambda c: "drawing the rows from the release",
    run=_run_delivery, load=lambda c, summary: summary)

#: The stages of a run without a public pool, in order.
MADE_STAGES: tuple[Stage, ...] = (RELEASE, DELIVERY)
