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
