"""Digests of tiny runs and budget plans, to show that a refactor changed nothing a user holds.

Runs one tiny run per modality and decoder (the settings of ``tests/pipeline/conftest.py``, reproducible noise:
research only, not DP) and ``pcevolve budget plan`` for every shipped config, then writes one line per file: its
path in the run folder and the SHA-256 of its bytes (JSON files without their times and signatures). Run it on the
code before and after a change and ``diff`` the two results. A run folder's ``config.yaml`` and the run's timing
files are listed apart: the first changes when the config's layout does, the second with the clock.

    python bench/digests.py --tag before      # bench/results/digests-before.json; then --tag after, and diff them
    python bench/digests.py --tag x --only image-conv,table-made
    python bench/digests.py --smoke           # the plans and the table run made without a pool, in seconds

Run folders hold their data's paths: compare results made with the same ``--root``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import smoke
from results_file import write_results

ROOT = Path(__file__).resolve().parent.parent
#: Files whose bytes follow the clock or a secret key, not the code: their names are listed, their digests are not.
CLOCKED = {"timings.json", "run.log", "run.lock", "ledger.key"}
#: Keys of a JSON file that hold a time, or a signature over one: left out of its digest.
CLOCKED_KEYS = {"time", "seconds", "total_seconds", "signature", "integrity", "started", "finished", "elapsed",
                "created"}


def _conftest():
    """The tiny settings of the end-to-end tests (tests/pipeline/conftest.py), loaded as a module."""
    spec = importlib.util.spec_from_file_location("tiny_settings", ROOT / "tests" / "pipeline" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _data(root: Path, tiny) -> dict[str, Path]:
    from pcevolve.data import prepare_demo

    digits = root / "digits"
    prepare_demo("digits", digits, classes=(0, 1, 2), per_class=20, public_size=300, test_per_class=10,
                 full_size=60, size=16, progress=False)
    table = root / "table"
    table.mkdir()
    rng = np.random.default_rng(7)
    fraud, ok = tiny._rows(rng, 25, True), tiny._rows(rng, 35, False)
    tiny.write_table(table / "private.csv", fraud + ok, ["fraud"] * 25 + ["ok"] * 35)
    public = tiny._rows(rng, 80, True) + tiny._rows(rng, 320, False)
    tiny.write_table(table / "public.csv", [public[i] for i in rng.permutation(len(public))])
    tiny.write_table(table / "test.csv", tiny._rows(rng, 40, True) + tiny._rows(rng, 40, False),
                     ["fraud"] * 40 + ["ok"] * 40)
    text = root / "text"
    text.mkdir()
    rng = np.random.default_rng(11)
    tiny.write_jsonl(text / "private.jsonl", tiny._texts(rng, 20, tiny._GOOD) + tiny._texts(rng, 20, tiny._BAD),
                     ["good"] * 20 + ["bad"] * 20)
    public = tiny._texts(rng, 150, tiny._GOOD) + tiny._texts(rng, 150, tiny._BAD)
    tiny.write_jsonl(text / "public.jsonl", [public[i] for i in rng.permutation(len(public))])
    tiny.write_jsonl(text / "test.jsonl", tiny._texts(rng, 30, tiny._GOOD) + tiny._texts(rng, 30, tiny._BAD),
                     ["good"] * 30 + ["bad"] * 30)
    return {"digits": digits, "table": table, "text": text}


def _scenarios(data: dict[str, Path], tiny) -> dict[str, object]:
    """name → a validated RunConfig (reproducible noise)."""
    noise = {"privacy.reproducible_noise": True}
    table = {"modality": "tabular", "private": str(data["table"] / "private.csv"),
             "public": str(data["table"] / "public.csv"), "test": str(data["table"] / "test.csv"),
             "classes": ["fraud", "ok"], "full": None}
    text = {"modality": "text", "private": str(data["text"] / "private.jsonl"),
            "public": str(data["text"] / "public.jsonl"), "test": str(data["text"] / "test.jsonl"),
            "classes": ["bad", "good"], "full": None}
    small_table = {"feature_dim": 64, "proj_hidden_dim": 32, "public_epochs": 2, "public_batch_size": 64}
    made = {"data.public": None, "data.schema_file": str(data["table"] / "schema.yaml")}
    evolved = {**made, "synthesis.evolve": True, "privacy.split": {"release": 0.95, "verdict": 0.05}}
    return {
        "image-conv": lambda: tiny._tiny_config(data["digits"], "image-conv", **noise),
        "image-nearest": lambda: tiny._tiny_config(data["digits"], "image-nearest", **noise,
                                                   **{"decoder.name": "nearest-public"}),
        "image-pixel": lambda: tiny._tiny_config(data["digits"], "image-pixel", **noise,
                                                 **{"decoder.name": "pixel-view", "search.pixel_frequencies": 3}),
        "table-nearest": lambda: tiny._file_config("table-nearest", table, noise, "table",
                                                   representation=small_table),
        "table-made": lambda: tiny._file_config("table-made", table, {**noise, **made}, "table"),
        "table-made-evolved": lambda: tiny._file_config("table-made-evolved", table, {**noise, **evolved}, "table"),
        "text-nearest": lambda: tiny._file_config("text-nearest", text, noise, "text"),
    }


def _without_clock(value):
    if isinstance(value, dict):
        return {key: _without_clock(item) for key, item in value.items() if key not in CLOCKED_KEYS}
    if isinstance(value, list):
        return [_without_clock(item) for item in value]
    return value


def _digest(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix in {".json", ".jsonl"}:
        lines = data.decode("utf-8").splitlines() if path.suffix == ".jsonl" else [data.decode("utf-8")]
        data = "\n".join(json.dumps(_without_clock(json.loads(line)), sort_keys=True)
                         for line in lines if line.strip()).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def _run_lines(name: str, config, runs: Path) -> list[str]:
    from pcevolve.pipeline.run import open_run, run_pipeline

    config, folder, _ = open_run(config, root=runs)
    run_pipeline(config, folder)
    lines = []
    for path in sorted(p for p in (runs / name).rglob("*") if p.is_file()):
        relative = path.relative_to(runs / name).as_posix()
        if path.name in CLOCKED:
            lines.append(f"{name}/{relative} (clocked)")
        elif path.name == "config.yaml":
            lines.append(f"{name}/{relative} (layout) {_digest(path)}")
        else:
            lines.append(f"{name}/{relative} {_digest(path)}")
    return lines


def _plan_lines() -> list[str]:
    from typer.testing import CliRunner

    from pcevolve.cli.main import app

    lines = []
    for config in sorted([*(ROOT / "configs").glob("*.yaml"), *(ROOT / "src/pcevolve/configs").glob("*.yaml")]):
        for epsilon in ([], ["--epsilon", "1"]):
            result = CliRunner().invoke(app, ["budget", "plan", "--config", str(config), *epsilon])
            digest = hashlib.sha256(result.output.encode()).hexdigest()[:16]
            lines.append(f"plan {config.relative_to(ROOT).as_posix()} {' '.join(epsilon)} rc={result.exit_code} "
                         f"{digest}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tag", default="", help="names the results file (digests-TAG.json)")
    parser.add_argument("--only", default="", help="comma-separated scenario names (default: all; none: the plans)")
    parser.add_argument("--root", type=Path, default=None,
                        help="where the data and runs are written, emptied first (default: a pcevolve-digests folder "
                             "in the temporary directory; with --smoke, under --out)")
    smoke.add_arguments(parser)
    args = parser.parse_args()
    smoke.results_folder(args)
    tiny = _conftest()
    lines = _plan_lines()
    root = args.root or (args.out / "digests" if args.smoke else Path(tempfile.gettempdir()) / "pcevolve-digests")
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    data = _data(root, tiny)
    from pcevolve.data.table_schema import draft_schema

    draft_schema(data["table"] / "public.csv", label_column="label").save(data["table"] / "schema.yaml")
    wanted = ["table-made"] if args.smoke else [name for name in args.only.split(",") if name]
    for name, make in _scenarios(data, tiny).items():
        if wanted and name not in wanted:
            continue
        print(f"running {name}", file=sys.stderr, flush=True)
        try:
            lines += _run_lines(name, make(), root / "runs")
        except Exception as error:  # a scenario this checkout cannot run is a line, not a stop
            lines.append(f"{name} failed: {type(error).__name__}: {error}")
    path = write_results({"root": str(root), "lines": [line.replace(str(ROOT), "<repo>") for line in lines]},
                         "digests", args.tag)
    print(json.dumps({"lines": len(lines), "out": str(path)}))


if __name__ == "__main__":
    main()
