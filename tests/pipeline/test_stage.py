"""The stage protocol: one runner loads finished stages, refuses a paid non-resumable one, marks and records."""

import pytest

from pcevolve.pipeline.stage import (
    Markers,
    RunContext,
    Stage,
    StageInterrupted,
    run_stage,
)
from pcevolve.privacy import BudgetLedger, GaussianRelease
from pcevolve.run_folder import RunFolder


def _context(tmp_path, ledger):
    tmp_path.mkdir(parents=True, exist_ok=True)
    folder = RunFolder(tmp_path)
    return RunContext(config=None, folder=folder, secure=None, ledger=ledger, randomness=None, modality=None,
                      layout=None, class_names=("a", "b"), private=None, public=None)


def _stage(calls, *, pays=True, resumable=False):
    def run(context):
        calls.append("run")
        return 41, {"answer": 41}

    def load(context, summary):
        calls.append("load")
        return summary["answer"] + 1

    return Stage(name="release", pays=pays, resumable=resumable, reads_private=lambda config: True,
                 describe=lambda context: "testing", run=run, load=load, after=lambda context: calls.append("after"))


def test_a_stage_runs_once_then_loads_from_its_marker(tmp_path):
    calls, said = [], []
    context = _context(tmp_path, BudgetLedger(8.0, 1e-5, {"release": 8.0}))
    context.say = said.append
    product, _ = run_stage(_stage(calls), context)
    assert product == 41 and calls == ["run", "after"] and said == ["release: testing"]
    assert Markers(context.folder).done("release") == {"answer": 41}
    assert [r["answer"] for r in context.folder.records("release")] == [41]
    product, _ = run_stage(_stage(calls), context)
    assert product == 42 and calls == ["run", "after", "load"] and context.products.release == 42


def test_a_paid_stage_without_marker_is_refused_unless_it_can_resume(tmp_path):
    ledger = BudgetLedger(8.0, 1e-5, {"release": 8.0})
    ledger.charge("release", GaussianRelease(2.0))
    calls = []
    with pytest.raises(StageInterrupted, match="re-running the stage would pay again"):
        run_stage(_stage(calls), _context(tmp_path / "a", ledger))
    assert calls == []
    product, _ = run_stage(_stage(calls, resumable=True), _context(tmp_path / "b", ledger))
    assert product == 41 and calls == ["run", "after"]


def test_a_stage_reading_a_dp_stages_product_is_never_adopted_from_a_sibling(tmp_path, tiny_config):
    """A sweep's later run copied the first run's decoder whenever the decoder trained on the public pool alone, but
    a retrieval decoder's index and a generator's training hold the run's own encoder's features: with a share of ε
    on the encoder, that is the sibling's DP output, which the later run's ledger never paid for."""
    from pcevolve.pipeline.stage import _adoptable
    from pcevolve.pipeline.stages import DECODER, REPRESENTATION

    sibling = tmp_path / "eps-1"
    (sibling / "stages").mkdir(parents=True)
    for stage in ("representation", "decoder"):
        (sibling / "stages" / f"{stage}.json").write_text("{}")
    for split, public in (({"representation": 0.375, "release": 0.625}, False),
                          ({"representation": 0.0, "release": 1.0}, True)):
        for name in ("nearest-public", "conv"):
            config = tiny_config(**{"privacy.split": split, "decoder.name": name})
            context = _context(tmp_path / "eps-2", None)
            context.config, context.adopt_from = config, sibling
            assert REPRESENTATION.public_under(config) is public
            assert DECODER.public_under(config) is public and _adoptable(DECODER, context) is public, (split, name)
