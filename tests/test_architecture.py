"""The arrows that must never exist between pcevolve's parts (docs/architecture.md), checked on the source.

Every ``import`` and ``from … import`` of a pcevolve module is read from the syntax tree, function-level imports
included, so a shortcut taken inside a function is caught too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "pcevolve"

# part -> parts it must never import, and why
FORBIDDEN = {
    # The engine and the fitness terms see vectors and a DP release only: no data reader, no model, no judge.
    "evolution": ({"data", "encoders", "decoders", "search", "pipeline", "modalities", "evaluation", "report", "cli",
                   "api"},
                  "the evolutionary engine is generic: it optimises vectors"),
    "fitness": ({"data", "encoders", "decoders", "search", "pipeline", "modalities", "evaluation", "report", "cli",
                 "api"},
                "fitness terms are computed from one DP release and synthetic features only"),
    # The privacy core depends on nothing that reads data or trains models, so its proofs stand alone.
    "privacy": ({"data", "encoders", "decoders", "search", "fitness", "evolution", "pipeline", "modalities",
                 "evaluation", "report", "cli", "api"}, "mechanisms, accountant and ledger are the trusted base"),
    # Readers know files, not models or runs.
    "data": ({"encoders", "decoders", "search", "fitness", "evolution", "pipeline", "modalities", "evaluation",
              "report", "privacy", "cli", "api"}, "readers validate files; they do not depend on what uses them"),
    # The search is assembled from a run's saved outputs; the stages call it, never the reverse.
    "search": ({"pipeline", "sweep", "cli", "api"},
               "the search is rebuilt from saved outputs by the stages and the benchmarks alike; it knows no runner"),
    # An executor runs public work where it is told to: it reads no data and draws no noise.
    "executors": ({"data", "privacy", "pipeline", "modalities", "evaluation", "report", "cli", "api"},
                  "an executor only moves public encoding and fitness evaluation; it never sees private data"),
    # A network recipe knows tensors: it reads no data, draws no noise and knows nothing of runs or judges.
    "nets": ({"data", "privacy", "search", "fitness", "evolution", "pipeline", "modalities", "decoders", "evaluation",
              "report", "cli", "api"}, "a network recipe is shared by the run and its judges; it depends on neither"),
}
# The evaluation and the audit judge a finished run (or its code); nothing the run itself executes may depend on them
# (or on the report).
JUDGES = {"evaluation", "report", "audit"}
RUN_PARTS = {"data", "privacy", "encoders", "decoders", "search", "fitness", "evolution", "pipeline", "augment",
             "config", "io", "modalities", "executors", "nets"}


def _imports(path: Path) -> set[str]:
    parts = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        parts.update(name.split(".")[1] for name in names if name.startswith("pcevolve.") and "." in name)
    return parts


def _part(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


SOURCES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("part", sorted(FORBIDDEN))
def test_forbidden_arrows(part: str) -> None:
    never, why = FORBIDDEN[part]
    broken = {f"{path.relative_to(PACKAGE)} imports pcevolve.{target}"
              for path in SOURCES if _part(path) == part for target in _imports(path) & never}
    assert not broken, f"{part}: {why}; but " + "; ".join(sorted(broken))


def test_nothing_a_run_executes_depends_on_its_judges() -> None:
    broken = {f"{path.relative_to(PACKAGE)} imports pcevolve.{target}"
              for path in SOURCES if _part(path) in RUN_PARTS for target in _imports(path) & JUDGES}
    assert not broken, "the run must not depend on the evaluation, the audit or the report: " + "; ".join(sorted(broken))


def test_the_checker_sees_function_level_imports(tmp_path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from pcevolve.data import read_image_folder\n    import pcevolve.evaluation.x\n")
    assert _imports(probe) == {"data", "evaluation"}
