"""What the evolution buys over its one-shot start: paired runs, one with ``search.evolve: true``, one without.

    .venv/bin/python bench/evolve.py                         # tabular-demo and text-demo, ε 8 and 1, seeds 0 1 2
    .venv/bin/python bench/evolve.py --configs text-demo --epsilons 8 --seeds 0
    .venv/bin/python bench/evolve.py --smoke                 # one pair on a tiny table, in seconds

Each pair is the packaged config (``configs/NAME.yaml``) at one ε and seed, run twice by ``pcevolve run``: once
evolving, once delivering the one-shot start (the released class Gaussians, sampled and decoded by the same
delivery). Both runs of a pair draw their noise from the seed (``privacy.reproducible_noise``, **not DP**): that is
what makes them read the same release, so a pair differs only in what the evolution did. Each set is judged by
``pcevolve evaluate`` against the config's test file; the bench reads the synthetic lines of
``report/evaluation.json`` (tables: ROC AUC of gradient-boosted trees and logistic regression; texts: accuracy of
TF-IDF + logistic regression and of the LSA probe) and the search's DP fitness from ``stages/search.json``.

Writes ``bench/results/evolve[-TAG].json`` (rows, and per config and ε the means of both arms and of the paired
differences). Run folders go under ``--runs-root`` (default ``runs/evolve``; a finished run is reused). The data
folders are prepared when missing (``pcevolve data prepare lending-club`` / ``rotten-tomatoes``). About 2 minutes
a table pair and 5 a text pair on 2 cores, evaluation included.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import smoke
from pipeline_run import packaged, prepared, run_config
from results_file import write_results

RUNS = Path("runs/evolve")
#: Per packaged config: the data folder and the source that prepares it, and the judge's figure read per model.
TASKS = {"tabular-demo": (Path("data/tabular"), "lending-club", "auc"),
         "text-demo": (Path("data/text"), "rotten-tomatoes", "accuracy")}


def pair_configs(name: str, epsilon: float, seed: int, *, out: Path | None) -> dict[str, dict[str, Any]]:
    """The two configs of one pair, ``evolve`` and ``start``, alike but for ``search.evolve`` (``out``: the smoke's
    folder, whose tiny table replaces the packaged config)."""
    base = packaged(name) if out is None else smoke.table_config(smoke.table(out), name)
    tag = f"{name}-e{epsilon:g}-s{seed}"
    return {arm: smoke.merged(base, {"name": f"{tag}-{arm}", "seed": seed,
                                     "privacy": {"epsilon": epsilon, "reproducible_noise": True},
                                     "search": {"evolve": arm == "evolve"}})
            for arm in ("evolve", "start")}


def judged(run: Path, figure: str) -> dict[str, float]:
    """``pcevolve evaluate RUN`` (once), then the synthetic lines' ``figure`` per model and the search's fitness."""
    evaluation = run / "report" / "evaluation.json"
    if not evaluation.exists():
        subprocess.run([sys.executable, "-m", "pcevolve.cli.main", "evaluate", "-q", str(run)], check=True,
                       stdout=subprocess.DEVNULL)
    lines = json.loads(evaluation.read_text(encoding="utf-8"))["judgement"]["utility"]
    scores = {line["model"]: float(line[figure]) for line in lines if line["line"] == "synthetic"}
    search = json.loads((run / "stages" / "search.json").read_text(encoding="utf-8"))
    return scores | {"dp_fitness": float(search["candidates"][0]["fitness"]),
                     "start_fitness": float(search["baseline_fitness"]), "generations": int(search["generations"])}


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per config and ε: each arm's mean per model, and the mean and sd of the paired differences (evolve − start)."""
    out: dict[str, Any] = {}
    for key in sorted({(row["config"], row["epsilon"]) for row in rows}):
        mine = [row for row in rows if (row["config"], row["epsilon"]) == key]
        models = [name for name in mine[0]["evolve"] if name not in ("dp_fitness", "start_fitness", "generations")]
        entry: dict[str, Any] = {"pairs": len(mine),
                                 "moved": sum(row["evolve"]["dp_fitness"] != row["evolve"]["start_fitness"]
                                              for row in mine)}
        for model in models:
            gaps = [row["evolve"][model] - row["start"][model] for row in mine]
            entry[model] = {"evolve": float(np.mean([row["evolve"][model] for row in mine])),
                            "start": float(np.mean([row["start"][model] for row in mine])),
                            "gap_mean": float(np.mean(gaps)), "gap_sd": float(np.std(gaps)),
                            "gaps": [round(g, 4) for g in gaps]}
        out[f"{key[0]} eps={key[1]:g}"] = entry
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="+", choices=sorted(TASKS), default=sorted(TASKS))
    parser.add_argument("--epsilons", type=float, nargs="+", default=[8.0, 1.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--runs-root", type=Path, default=RUNS)
    parser.add_argument("--tag", default="", help="results file bench/results/evolve-TAG.json")
    smoke.add_arguments(parser)
    args = parser.parse_args()
    smoke.results_folder(args)
    if args.smoke:
        args.configs, args.epsilons, args.seeds = ["tabular-demo"], [8.0], [0]  # the code path is the modalities' own
        args.runs_root = args.out / "runs" / "evolve"
    rows = []
    for name in args.configs:
        data, source, figure = TASKS[name]
        if not args.smoke:
            prepared(data, source)
        for epsilon in args.epsilons:
            for seed in args.seeds:
                row: dict[str, Any] = {"config": name, "epsilon": epsilon, "seed": seed}
                for arm, config in pair_configs(name, epsilon, seed, out=args.out if args.smoke else None).items():
                    run, seconds = run_config(config, args.runs_root)
                    row[arm] = judged(run, figure)
                    row[f"{arm}_seconds"] = seconds
                rows.append(row)
                print(f"{name} ε={epsilon:g} seed {seed}: " + " · ".join(
                    f"{arm} " + ", ".join(f"{k} {v:.4f}" for k, v in row[arm].items() if k != "generations")
                    + f" ({row[arm]['generations']} generations)" for arm in ("evolve", "start")), flush=True)
    summary = summarise(rows)
    path = write_results({"rows": rows, "summary": summary}, "evolve", args.tag)
    print(json.dumps(summary, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
