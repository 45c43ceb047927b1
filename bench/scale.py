"""What a Ray cluster buys, measured on this machine: the demo with ``executor: local`` and ``executor: ray``, the
public encoding's throughput as the pool grows, and a generation's time as the population grows.

    .venv/bin/python bench/scale.py                              # everything (about 40 minutes on 2 cores)
    .venv/bin/python bench/scale.py --parts encoding --sizes 2000 20000

Parts:

* ``demo`` — ``configs/demo.yaml`` with reproducible noise (so that two runs can be compared file by file), once
  with each executor (Ray: a cluster started on 127.0.0.1 with ``--workers`` CPUs); wall time of each and whether
  the delivered sets, the release and the fitness curves are byte-identical.
* ``encoding`` — the demo run's encoder over public pools of ``--sizes`` images (the demo's 20,000 public images
  tiled with shifted copies beyond that: synthetic public data), locally and on the cluster with 1 and 2 workers;
  images per second, and whether the features equal the local ones.
* ``population`` — the demo run's search problem (its DP release and public basis), one generation of
  ``--populations`` individuals evaluated locally and on the cluster with 1 and 2 workers; seconds per generation.

Writes ``bench/results/scale.json`` (public figures only: the runs use reproducible noise and the demo data).
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml
from results_file import write_results

from pcevolve.config import ExecutorConfig, load_config, parse_config
from pcevolve.data import read_unlabeled_images
from pcevolve.decoders import load_decoder
from pcevolve.encoders import ImageEncoder
from pcevolve.executors import LocalExecutor, RayExecutor
from pcevolve.pipeline import (
    build_problem,
    class_territories,
    load_pool_labels,
    load_public_features,
    open_run,
    run_pipeline,
)
from pcevolve.run_folder import RunFolder, outputs_digest
from pcevolve.search.release import StatisticsRelease
from pcevolve.search.roundtrip import SurrogateData

PARTS = ("demo", "encoding", "population")


def demo_runs(root: Path, workers: int) -> tuple[dict, Path]:
    """The demo with each executor; wall times and what is identical. Returns the result and the local run."""
    mapping = yaml.safe_load(Path("configs/demo.yaml").read_text(encoding="utf-8"))
    mapping.setdefault("privacy", {})["reproducible_noise"] = True
    folders, seconds = {}, {}
    for executor in ("local", "ray"):
        config = parse_config({**mapping, "name": f"scale-{executor}",
                               "executor": {"name": executor, "workers": workers}}, source="bench/scale.py")
        config, folder, _ = open_run(config, root=root)
        started = time.perf_counter()
        run_pipeline(config, folder)
        seconds[executor] = time.perf_counter() - started
        folders[executor] = folder.path
        print(f"demo, executor {executor}: {seconds[executor]:.0f} s", flush=True)
    identical = {name: outputs_digest(folders["local"] / name) == outputs_digest(folders["ray"] / name)
                 for name in ("synthetic", "synthetic.npz", "release.npz", "public_features.npz", "search/ranked.npz")}
    identical["fitness_curve"] = (RunFolder.open(folders["local"]).records("generation")
                                  == RunFolder.open(folders["ray"]).records("generation"))
    print(f"identical: {identical}", flush=True)
    return {"seconds": seconds, "identical": identical, "workers": workers}, folders["local"]


def _pool(size: int) -> np.ndarray:
    """``size`` public images: the demo pool, then copies shifted by one pixel at a time (synthetic public data)."""
    base = read_unlabeled_images("data/demo/public", size=28, mode="L").samples
    parts, shift = [base], 1
    while sum(map(len, parts)) < size:
        parts.append(np.roll(base, shift=(shift % 3 - 1, shift // 3 % 3 - 1), axis=(1, 2)))
        shift += 1
    return np.concatenate(parts)[:size]


def _executors(workers: list[int]) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = [("local", LocalExecutor())]
    out += [(f"ray-{n}", ExecutorConfig(name="ray", workers=n)) for n in workers]
    return out


def encoding(run: Path, sizes: list[int], workers: list[int]) -> list[dict]:
    encoder = ImageEncoder.load(run / "encoder").eval()
    rows = []
    for size in sizes:
        pool = _pool(size)
        reference = None
        for label, executor in _executors(workers):
            runner = executor if isinstance(executor, LocalExecutor) else RayExecutor(executor)
            started = time.perf_counter()
            _, features = runner.encode(encoder, pool, batch_size=256)
            seconds = time.perf_counter() - started
            reference = features if reference is None else reference
            rows.append({"part": "encoding", "images": size, "executor": label, "seconds": seconds,
                         "images_per_second": size / seconds, "identical": bool(np.array_equal(features, reference))})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def population(run: Path, sizes: list[int], workers: list[int], repeats: int = 3) -> list[dict]:
    folder = RunFolder.open(run)
    config = load_config(folder.config_path)
    decoder = load_decoder(run / "decoder")
    public = load_public_features(folder)
    release = StatisticsRelease.load(run / "release.npz")
    territories = class_territories(config, release, public.basis, decoder, load_pool_labels(folder))
    checked = run / "search" / "roundtrips.npz"
    surrogate = decoder.round_trip_model(public.basis, SurrogateData.load(checked) if checked.exists()
                                         else public.pairs, territories)
    problem = build_problem(config, release, surrogate, public=public, territories=territories)
    rng = np.random.default_rng(0)
    rows = []
    for size in sizes:
        individuals = problem.space.baseline()[None, :] + 0.05 * rng.standard_normal(
            (size, len(problem.space.baseline())))
        reference = None
        for label, executor in _executors(workers):
            runner = executor if isinstance(executor, LocalExecutor) else RayExecutor(executor)
            runner.evaluate_population(problem, individuals[:2])  # ships the problem once, as a run does
            times = []
            for _ in range(repeats):
                started = time.perf_counter()
                totals = [b.total for b in runner.evaluate_population(problem, individuals)]
                times.append(time.perf_counter() - started)
            reference = totals if reference is None else reference
            rows.append({"part": "population", "individuals": size, "executor": label,
                         "seconds_per_generation": float(np.median(times)), "identical": totals == reference})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000, 200000])
    parser.add_argument("--populations", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--workers", type=int, default=2, help="the demo's Ray cluster CPUs")
    parser.add_argument("--run", type=Path, default=None, help="a finished demo run (default: the demo part's)")
    args = parser.parse_args()
    import ray

    ray.init(num_cpus=args.workers, _node_ip_address="127.0.0.1", include_dashboard=False,
             logging_level=logging.WARNING, log_to_driver=False)
    results: dict = {"cpus": args.workers}
    try:
        with tempfile.TemporaryDirectory(prefix="pcevolve-scale-") as scratch:
            run = args.run
            if "demo" in args.parts:
                results["demo"], local_run = demo_runs(Path(scratch), args.workers)
                run = run or local_run
            if run is None:
                raise SystemExit("give --run RUN (a finished demo run) or include the demo part")
            worker_counts = [n for n in (1, 2) if n <= args.workers]
            if "encoding" in args.parts:
                results["encoding"] = encoding(run, args.sizes, worker_counts)
            if "population" in args.parts:
                results["population"] = population(run, args.populations, worker_counts)
    finally:
        ray.shutdown()
    print(f"wrote {write_results(results, 'scale')}")


if __name__ == "__main__":
    main()
