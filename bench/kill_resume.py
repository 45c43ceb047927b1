"""Kill -9 a real `pcevolve run` mid-search, resume it, and compare with an uninterrupted run (SPEC R4.6).

    python bench/kill_resume.py [--kill-at-generation 5] [--generations 40]

Uses scikit-learn digits (3 classes, 16 px) and small stage sizes so it finishes in a few minutes. Writes
``bench/results/kill_resume.json``: whether the synthetic sets are identical, ledger entries and ε before
and after the resume.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from results_file import write_results

from pcevolve.config import dump_config, parse_config
from pcevolve.data import prepare_demo
from pcevolve.privacy import BudgetLedger


def config(data: Path, name: str, generations: int):
    return parse_config({
        "name": name, "seed": 3,
        "data": {"private": str(data / "private"), "public": str(data / "public"), "test": str(data / "test"),
                 "full": None, "image_size": 16},
        "representation": {"input_size": 32, "proj_hidden_dim": 32, "feature_dim": 64, "epochs": 1,
                           "views_per_sample": 2, "public_pool": 200, "batch_size": 20},
        "decoder": {"width": 8, "epochs": 1, "public_images": 200, "consistency_every": 1000},
        "search": {"population": 16, "elite": 4, "generations": generations, "patience": generations,
                   "basis_dim": 8, "roundtrip_public": 100, "rff_features": 32, "synthetic_multiplier": 2},
        # Identical results after a resume can only be checked with noise that repeats: not DP, a test setting.
        "privacy": {"reproducible_noise": True},
    })


def run_cli(args: list[str], **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pcevolve.cli.main", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def generations_recorded(folder: Path) -> int:
    path = folder / "records.jsonl"
    if not path.exists():
        return 0
    return sum(1 for line in path.read_text().splitlines() if '"kind": "generation"' in line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kill-at-generation", type=int, default=5)
    parser.add_argument("--generations", type=int, default=40)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="pcevolve-kill-"))
    data = scratch / "digits"
    prepare_demo("digits", data, classes=(0, 1, 2), per_class=20, public_size=300, test_per_class=10,
                 full_size=60, size=16, progress=False)
    runs = scratch / "runs"
    results: dict = {}
    for name in ("uninterrupted", "killed"):
        path = scratch / f"{name}.yaml"
        dump_config(config(data, name, args.generations), path)
        process = run_cli(["run", str(path), "--runs-root", str(runs), "--quiet"])
        if name == "killed":
            while process.poll() is None and generations_recorded(runs / name) < args.kill_at_generation:
                time.sleep(0.01)
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            results["killed_after_generations"] = generations_recorded(runs / name)
            ledger = BudgetLedger.load(runs / name / "ledger.json")
            results["ledger_before_resume"] = {"entries": len(ledger.history), "epsilon": ledger.spent()}
            process = run_cli(["run", "--resume", str(runs / name), "--quiet"])
        _, stderr = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"{name} run failed:\n{stderr}")
    ledger = BudgetLedger.load(runs / "killed" / "ledger.json")
    results["ledger_after_resume"] = {"entries": len(ledger.history), "epsilon": ledger.spent()}
    arrays = [np.load(runs / n / "synthetic.npz") for n in ("uninterrupted", "killed")]
    results["identical"] = {k: bool(np.array_equal(arrays[0][k], arrays[1][k]))
                            for k in ("features", "coordinates", "labels")}
    write_results(results, "kill_resume")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
