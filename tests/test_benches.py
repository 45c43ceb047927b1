"""Every script in bench/ answers ``--help``, stops with its usage when it needs a run folder, and runs its ``--smoke``
mode end to end — each a subprocess started the way a reader starts it — so that a renamed setting or a changed API
breaks the tests instead of a reader's benchmark.

The smoke runs share one output folder (bench/smoke.py: the tiny digits and their tiny run are made once) and run
two at a time: most of their time is starting Python and torch, which one core does alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
#: Modules the benches import; no command line of their own.
HELPERS = ("pipeline_run", "poolfree_pin", "results_file", "smoke", "source_labels")
#: Each bench and the results file its smoke writes under --out (shipped_files: none, its exit code is its verdict).
RESULTS = {"compare": "compare.json", "compare_text": "compare-text.json", "decoder": "decoder.json",
           "digests": "digests.json",
           "encoder": "encoder.json", "evolve": "evolve.json", "faults": "faults.json",
           "label_limits": "label-limits.json", "labels": "labels.json", "poolfree_data": "poolfree_data.json",
           "poolfree_lab": "poolfree_lab.json", "release_attack": "release_attack.json", "scale": "scale.json",
           "screenshots": "screenshots.json", "search": "search.json", "shipped_files": None,
           "tabular_peers": "tabular_peers.json", "text_style": "text-style.json",
           "text_variation": "text_variation.json", "verdict": "verdict.json"}
BENCHES = tuple(RESULTS)
#: Benches that read finished run folders and have no default one.
NEEDS_RUN_FOLDERS = ("label_limits", "labels", "release_attack", "shipped_files", "verdict")
#: A smoke that must wait for another: shipped_files' smoke makes the tiny digits and the tiny run that the others
#: read (two processes making one run folder at once would collide), compare_text's the text run text_variation reads.
AFTER = {"text_variation": "compare_text", "text_style": "compare_text",
         **{name: "shipped_files" for name in ("compare", "decoder", "encoder", "label_limits", "labels",
                                               "release_attack", "scale", "search", "verdict")}}
#: The order the smokes start in: those others wait for first, then the longest (about 40 s to 1 s here), so that
#: neither core idles at the end.
ORDER = ("shipped_files", "screenshots", "faults", "compare_text", "text_variation", "text_style", "compare", "scale",
         "tabular_peers", "evolve", "poolfree_lab", "search", "decoder", "label_limits", "encoder", "verdict", "labels",
         "poolfree_data", "digests", "release_attack")
SMOKE_TIMEOUT = 600


def _bench(name: str, *args: str, env: dict[str, str] | None = None,
           timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python bench/NAME.py ARGS`` from the repository root, as the benches' docstrings say to run them."""
    return subprocess.run([sys.executable, str(BENCH / f"{name}.py"), *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def test_every_bench_is_covered() -> None:
    """A new script in bench/ must be added to RESULTS and ORDER (and so get a smoke test) or be a helper."""
    scripts = sorted(path.stem for path in BENCH.glob("*.py"))
    assert scripts == sorted((*BENCHES, *HELPERS))
    assert sorted(ORDER) == sorted(BENCHES)


@pytest.mark.parametrize("bench", BENCHES)
def test_help(bench: str) -> None:
    result = _bench(bench, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage:") and "--smoke" in result.stdout


@pytest.mark.parametrize("bench", NEEDS_RUN_FOLDERS)
def test_without_a_run_folder_prints_the_usage(bench: str) -> None:
    result = _bench(bench)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("usage:")


def _selected_smokes(request: pytest.FixtureRequest) -> list[str]:
    """The benches whose smoke test this session runs, the ones to start first in front."""
    chosen = {item.callspec.params["bench"] for item in request.session.items
              if item.path == Path(__file__) and getattr(item, "originalname", None) == "test_smoke"}
    return sorted(chosen, key=ORDER.index)


def _bench_results() -> dict[Path, float]:
    """Every file under bench/results/ and its modification time."""
    return {path: path.stat().st_mtime for path in (BENCH / "results").rglob("*") if path.is_file()}


@pytest.fixture(scope="module")
def smoke_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """``(out, {bench: Future[CompletedProcess]}, bench/results/ before)``: every selected smoke, started two at a
    time with one --out."""
    out = tmp_path_factory.mktemp("bench-smoke")
    before = _bench_results()
    # One thread per process: two smokes share the two cores, and their tensors are too small to split.
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    futures: dict[str, Future[subprocess.CompletedProcess[str]]] = {}

    def run(name: str) -> subprocess.CompletedProcess[str]:
        if AFTER.get(name) in futures:
            futures[AFTER[name]].exception()  # waits for it; its own test reports its failure
        return _bench(name, "--smoke", "--out", str(out), env=env, timeout=SMOKE_TIMEOUT)

    # A smoke is submitted after the one it waits for, so a waiting thread always waits on a started one.
    with ThreadPoolExecutor(max_workers=2) as pool:
        for name in _selected_smokes(request):
            futures[name] = pool.submit(run, name)
        yield out, futures, before


@pytest.mark.slow
@pytest.mark.parametrize("bench", BENCHES)
def test_smoke(bench: str, smoke_runs) -> None:
    out, futures, before = smoke_runs
    result = futures[bench].result()
    assert result.returncode == 0, f"{bench} --smoke failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    if RESULTS[bench] is None:
        assert result.stderr.splitlines()[-1].endswith(" pass")
    else:
        written = json.loads((out / RESULTS[bench]).read_text(encoding="utf-8"))
        assert written, f"{bench} --smoke wrote an empty {RESULTS[bench]}"
    assert _bench_results() == before, "a smoke run wrote into bench/results/"
