"""Kill a real `pcevolve run` at random points in every stage, resume it, and check what a user relies on.

    python bench/faults.py [--reproducible-kills 20] [--secure-kills 10] [--seed 0]
    python bench/faults.py --smoke          # one kill and the SIGINT check on tiny runs, in about a minute

On scikit-learn's digits (3 classes, 16 px) with small stages and DP fine-tuning of the encoder switched on,
so that every stage — data, DP representation, decoder, public features, DP release, search, delivery — runs
for a measurable time:

1. an uninterrupted reference run (reproducible noise) records when each stage starts;
2. each kill point is drawn uniformly inside one stage's window (stages in turn, so all are hit), the run is
   sent SIGKILL there and resumed with `pcevolve run --resume` until it finishes;
3. with reproducible noise the resumed run's synthetic set and ledger must equal the reference's;
   with secure noise the ledger must never exceed the budget and never record a charge twice;
4. SIGINT gives exit code 130 and the exact resume command; a second process on a folder in use is refused.

A kill that lands inside the release's window between its charge and its saved result is refused on resume
(its budget is spent; paying again is not allowed) and counted as such. Writes ``bench/results/faults.json``.

**Smoke** (``--smoke``): one kill with reproducible noise, drawn in the stages' windows (not before the run folder
exists; ``--secure-kills N`` adds secure ones), and the SIGINT and lock check with a 300-generation search, on runs
scaled down as in bench/smoke.py (the encoder not fine-tuned under DP: planning and calibrating it would add a
third to every one of the smoke's runs); runs and results under ``--out`` or a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import smoke
from results_file import write_results

# pcevolve is imported inside the functions that use it: --help answers at once.

STAGES = ("data", "representation", "decoder", "public_features", "release", "labels", "search", "delivery")
SIGINT_GENERATIONS = 2000  # long enough that the run is still searching when the SIGINT arrives
SMOKE_SIGINT_GENERATIONS = 300  # the smoke's tiny search: about 9 s here (under load the SIGINT may come later)
#: The encoder fine-tuned under DP on part of ε: the representation stage then reads private data for a while too.
SPLIT = {"representation": 0.375, "release": 0.625}


def config(data: Path, name: str, *, reproducible: bool, generations: int = 40, tiny: bool = False) -> dict:
    """The killed runs' config (module docstring); ``tiny``: bench/smoke.py's scaled-down stages instead."""
    if tiny:
        mapping = smoke.image_config(data, name)
        mapping["data"] |= {"test": None, "full": None, "image_size": 16}
        mapping["search"] = {**mapping["search"], "evolve": True, "generations": generations, "patience": generations}
        mapping["privacy"] = {**mapping["privacy"], "reproducible_noise": reproducible}
        return mapping
    return {
        "name": name, "seed": 3,
        "data": {"private": str(data / "private"), "public": str(data / "public"), "test": None, "full": None,
                 "image_size": 16},
        "representation": {"input_size": 32, "proj_hidden_dim": 32, "feature_dim": 64, "epochs": 6,
                           "views_per_sample": 2, "public_pool": 300, "batch_size": 10},
        "decoder": {"name": "nearest-public", "public_images": 300},
        # The evolution on (off by default): kills land inside its generations, and the SIGINT needs a long search.
        "search": {"evolve": True, "population": 16, "elite": 4, "generations": generations, "patience": generations,
                   "basis_dim": 8,
                   "roundtrip_public": 100, "rff_features": 32, "synthetic_per_class": 40,
                   "delivery_oversample": 1.0},
        "privacy": {"split": SPLIT, "reproducible_noise": reproducible},
    }


def start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pcevolve.cli.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def timeline(process: subprocess.Popen) -> dict[str, float]:
    """Seconds from start at which each stage's announcement appeared on stderr (reads until exit)."""
    started, seen = time.monotonic(), {}
    assert process.stderr is not None
    for line in process.stderr:
        for stage in STAGES:
            if f"» {stage}" in line and stage not in seen:
                seen[stage] = time.monotonic() - started
    process.wait()
    seen["end"] = time.monotonic() - started
    return seen


def finish(folder: Path, config_path: Path, runs: Path) -> tuple[str, int]:
    """Resume once to the end; returns (stderr, exit code)."""
    if not (folder / "manifest.json").exists():  # killed before the folder existed (or it was removed)
        process = start(["run", str(config_path), "--runs-root", str(runs), "-q"])
    else:
        process = start(["run", "--resume", str(folder), "-q"])
    _, stderr = process.communicate()
    return stderr, process.returncode


def ledger_events(folder: Path) -> list[tuple]:
    from pcevolve.privacy import BudgetLedger

    ledger = BudgetLedger.load(folder / "ledger.json")
    return [(e.stage, e.description, repr(e.event)) for e in ledger.history]


def same_synthetic(a: Path, b: Path) -> bool:
    with np.load(a / "synthetic.npz") as first, np.load(b / "synthetic.npz") as second:
        return all(np.array_equal(first[k], second[k]) for k in ("features", "coordinates", "labels"))


def kill_points(windows: list[tuple[str, float, float]], count: int, rng: np.random.Generator) -> list[tuple]:
    points = []
    for i in range(count):
        stage, low, high = windows[i % len(windows)]
        points.append((stage, float(rng.uniform(low, high))))
    return points


def one_kill(data: Path, scratch: Path, index: int, stage: str, at: float, *, reproducible: bool,
             tiny: bool = False) -> dict:
    """One run killed ``at`` seconds after its start (inside ``stage``'s window), resumed to the end; what a user
    relies on, checked."""
    from pcevolve.config import dump_config, parse_config
    from pcevolve.privacy import BudgetLedger

    name = f"{'r' if reproducible else 's'}{index:02d}"
    runs = scratch / "runs"
    path = scratch / f"{name}.yaml"
    dump_config(parse_config(config(data, name, reproducible=reproducible, tiny=tiny)), path)
    process = start(["run", str(path), "--runs-root", str(runs), "-q"])
    drain = threading.Thread(target=process.communicate, daemon=True)
    drain.start()
    time.sleep(at)
    killed = process.poll() is None
    if killed:
        os.kill(process.pid, signal.SIGKILL)
    drain.join()
    folder = runs / name
    stderr, code = finish(folder, path, runs)
    result = {"stage": stage, "at_seconds": round(at, 2), "killed": killed, "resume_exit": code}
    if code != 0:
        result["refused"] = stderr.strip().splitlines()[-1] if stderr.strip() else ""
        return result
    events = ledger_events(folder)
    ledger = BudgetLedger.load(folder / "ledger.json")
    descriptions = [description for _, description, _ in events]
    records = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines() if line.strip()]
    result["dp_epochs_lost"] = sum(r.get("kind") == "representation_dp_epoch_lost" for r in records)
    result.update({"epsilon": ledger.spent(), "budget": ledger.total_epsilon,
                   "over_budget": ledger.spent() > ledger.total_epsilon + 1e-9,
                   "charged_twice": len(descriptions) != len(set(descriptions)), "events": len(events)})
    return result


def sigint_and_lock(data: Path, scratch: Path, *, generations: int = SIGINT_GENERATIONS, tiny: bool = False) -> dict:
    """A second process on a running run's folder, then SIGINT to the run, then a resume: exit codes and messages."""
    from pcevolve.config import dump_config, parse_config

    runs = scratch / "runs"
    path = scratch / "int.yaml"
    # A long search, so that the run is still going while the second process and the SIGINT arrive.
    dump_config(parse_config(config(data, "int", reproducible=False, generations=generations, tiny=tiny)), path)
    process = start(["run", str(path), "--runs-root", str(runs), "-q"])
    folder = runs / "int"
    while not (folder / "stages" / "representation.json").exists() and process.poll() is None:
        time.sleep(0.05)
    second = start(["run", "--resume", str(folder), "-q"])  # while the first still runs
    _, second_err = second.communicate()
    process.send_signal(signal.SIGINT)
    _, first_err = process.communicate()
    resumed = start(["run", "--resume", str(folder), "-q"])
    resumed.communicate()
    return {"second_process_exit": second.returncode, "second_process_message": second_err.strip()[-200:],
            "sigint_exit": process.returncode, "sigint_message": first_err.strip().splitlines()[-1],
            "resume_after_sigint_exit": resumed.returncode}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reproducible-kills", type=int, default=None, help="default 20 (--smoke: 1)")
    parser.add_argument("--secure-kills", type=int, default=None, help="default 10 (--smoke: 0)")
    parser.add_argument("--seed", type=int, default=0)
    smoke.add_arguments(parser)
    args = parser.parse_args()
    smoke.results_folder(args)
    if args.reproducible_kills is None:
        args.reproducible_kills = 1 if args.smoke else 20
    if args.secure_kills is None:
        args.secure_kills = 0 if args.smoke else 10
    kill_and_resume(args)


def kill_and_resume(args: argparse.Namespace) -> None:
    """Steps 1 to 4 of the module docstring in a scratch folder (under ``--out`` with ``--smoke``); writes the
    results file and prints the summary."""
    from pcevolve.config import dump_config, parse_config
    from pcevolve.data import prepare_demo

    rng = np.random.default_rng(args.seed)
    if args.smoke:
        scratch = args.out / "faults"
        shutil.rmtree(scratch, ignore_errors=True)  # an earlier smoke's finished runs would not be killed at all
    else:
        scratch = Path(tempfile.mkdtemp(prefix="pcevolve-faults-"))
    data = scratch / "digits"
    prepare_demo("digits", data, classes=(0, 1, 2), per_class=20, public_size=300, test_per_class=10,
                 full_size=0, size=16, progress=False)

    reference_path = scratch / "reference.yaml"
    dump_config(parse_config(config(data, "reference", reproducible=True, tiny=args.smoke)), reference_path)
    process = start(["run", str(reference_path), "--runs-root", str(scratch / "runs")])
    times = timeline(process)
    if process.returncode != 0:
        raise SystemExit("the reference run failed")
    reference = scratch / "runs" / "reference"
    order = [s for s in STAGES if s in times] + ["end"]
    windows = [("startup", 0.0, times[order[0]])]  # before the run folder exists
    windows += [(stage, times[stage], times[following]) for stage, following in zip(order, order[1:])]
    print("stage windows (s):", {stage: (round(a, 1), round(b, 1)) for stage, a, b in windows}, flush=True)

    results: dict = {"windows": {stage: [round(a, 2), round(b, 2)] for stage, a, b in windows},
                     "reproducible": [], "secure": []}
    # A smoke's single kill of each kind lands in a stage: before the folder exists there is nothing to resume.
    targets = windows[1:] if args.smoke else windows
    for index, (stage, at) in enumerate(kill_points(targets, args.reproducible_kills, rng)):
        outcome = one_kill(data, scratch, index, stage, at, reproducible=True, tiny=args.smoke)
        name = f"r{index:02d}"
        if outcome["resume_exit"] == 0:
            outcome["identical_synthetic"] = same_synthetic(reference, scratch / "runs" / name)
            outcome["identical_ledger"] = ledger_events(reference) == ledger_events(scratch / "runs" / name)
        results["reproducible"].append(outcome)
        print(json.dumps(outcome), flush=True)
    for index, (stage, at) in enumerate(kill_points(targets, args.secure_kills, rng)):
        outcome = one_kill(data, scratch, index, stage, at, reproducible=False, tiny=args.smoke)
        results["secure"].append(outcome)
        print(json.dumps(outcome), flush=True)
    generations = SMOKE_SIGINT_GENERATIONS if args.smoke else SIGINT_GENERATIONS
    results["sigint_and_lock"] = sigint_and_lock(data, scratch, tiny=args.smoke, generations=generations)

    repro = [r for r in results["reproducible"] if r["killed"]]
    secure = [r for r in results["secure"] if r["killed"]]
    results["summary"] = {
        "reproducible_kills": len(repro),
        "identical_resumes": sum(bool(r.get("identical_synthetic") and r.get("identical_ledger")) for r in repro),
        "refused_resumes": sum(r["resume_exit"] != 0 for r in repro),
        "secure_kills": len(secure),
        "secure_over_budget": sum(bool(r.get("over_budget")) for r in secure),
        "secure_charged_twice": sum(bool(r.get("charged_twice")) for r in secure),
        "secure_refused_resumes": sum(r["resume_exit"] != 0 for r in secure),
        "secure_resumes_with_a_lost_dp_epoch": sum(r.get("dp_epochs_lost", 0) > 0 for r in secure),
        "stages_hit": sorted({r["stage"] for r in repro + secure}),
    }
    out = write_results(results, "faults")
    print(json.dumps(results["summary"], indent=1))
    print(json.dumps(results["sigint_and_lock"], indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
