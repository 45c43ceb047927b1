"""What a Ray cluster buys, measured on this machine: the demo with ``executor: local`` and ``executor: ray``, the
public encoding's throughput as the pool grows, and a generation's time as the population grows.

    .venv/bin/python bench/scale.py                              # everything (about 40 minutes on 2 cores)
    .venv/bin/python bench/scale.py --parts encoding --sizes 2000 20000
    .venv/bin/python bench/scale.py --smoke                      # encoding and population on a tiny run

Parts:

* ``demo`` — ``configs/demo.yaml`` with reproducible noise (so that two runs can be compared file by file), once
  with each executor (Ray: a cluster started on 127.0.0.1 with ``--workers`` CPUs); wall time of each and whether
  the delivered sets, the release and the fitness curves are byte-identical.
* ``encoding`` — the demo run's encoder over public pools of ``--sizes`` images (the run's public images — the
  demo's 20,000 — tiled with shifted copies beyond that: synthetic public data), locally and on the cluster with 1
  and 2 workers; images per second, and whether the features equal the local ones.
* ``population`` — the demo run's search problem (its DP release and public basis), one generation of
  ``--populations`` individuals evaluated locally and on the cluster with 1 and 2 workers; seconds per generation.

Writes ``bench/results/scale.json`` (public figures only: the runs use reproducible noise and the demo data).
Needs Ray (``pip install 'pcevolve[ray]'``); ``data/demo`` is prepared when missing.

**Smoke** (``--smoke``): the parts asked for (default ``encoding`` and ``population``: the ``demo`` part is two
whole runs, name it to include it) on scikit-learn's digits (bench/smoke.py): the tiny run of bench/smoke.py (or the
demo part's, on the tiny run config), a pool of 100 images, a population of 4, one repeat, a cluster of one CPU
(``ray-1`` only); runs and results under ``--out`` or a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from pathlib import Path

import numpy as np
import smoke
from pipeline_run import packaged, prepared
from results_file import write_results

# Ray, torch and most of pcevolve are imported inside the functions that use them: --help answers at once.

PARTS = ("demo", "encoding", "population")


def demo_runs(root: Path, workers: int, mapping: dict) -> tuple[dict, Path]:
    """The run ``mapping`` (the demo's config) with each executor; wall times and what is identical. Returns the
    result and the local run."""
    from pcevolve.config import parse_config
    from pcevolve.pipeline import open_run, run_pipeline
    from pcevolve.run_folder import RunFolder, outputs_digest

    # The evolution on (off by default): its populations are what the cluster evaluates, and its curves are compared.
    mapping = {**mapping, "privacy": {**mapping.get("privacy", {}), "reproducible_noise": True},
               "search": {**mapping.get("search", {}), "evolve": True}}
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


def _pool(run: Path, size: int) -> np.ndarray:
    """``size`` public images: the run's public pool, then copies shifted by one pixel at a time (synthetic public
    data)."""
    from pcevolve.config import load_config
    from pcevolve.data import read_unlabeled_images

    data = load_config(run / "config.yaml").data
    base = read_unlabeled_images(data.public, size=data.image_size, mode=data.image_mode).samples
    parts, shift = [base], 1
    while sum(map(len, parts)) < size:
        parts.append(np.roll(base, shift=(shift % 3 - 1, shift // 3 % 3 - 1), axis=(1, 2)))
        shift += 1
    return np.concatenate(parts)[:size]


def _executors(workers: list[int]) -> list[tuple[str, object]]:
    from pcevolve.config import ExecutorConfig
    from pcevolve.executors import LocalExecutor

    out: list[tuple[str, object]] = [("local", LocalExecutor())]
    out += [(f"ray-{n}", ExecutorConfig(name="ray", workers=n)) for n in workers]
    return out


def encoding(run: Path, sizes: list[int], workers: list[int]) -> list[dict]:
    """The ``encoding`` part (module docstring): one row per pool size and executor."""
    from pcevolve.encoders import ImageEncoder
    from pcevolve.executors import LocalExecutor, RayExecutor

    encoder = ImageEncoder.load(run / "encoder").eval()
    rows = []
    for size in sizes:
        pool = _pool(run, size)
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
    """The ``population`` part (module docstring): one row per population size and executor."""
    from pcevolve.config import load_config
    from pcevolve.decoders import load_decoder
    from pcevolve.executors import LocalExecutor, RayExecutor
    from pcevolve.run_folder import RunFolder
    from pcevolve.search.assembly import (build_problem, class_territories, load_in_task, load_pool_labels,
                                          load_public_features)
    from pcevolve.privacy.released_statistics import StatisticsRelease
    from pcevolve.search.roundtrip import SurrogateData, round_trip_model
    from pcevolve.search.runner import evaluate_chunk

    folder = RunFolder.open(run)
    config = load_config(folder.config_path)
    decoder = load_decoder(run / "decoder")
    public = load_public_features(folder)
    release = StatisticsRelease.load(run / "release.npz")
    territories = class_territories(config, release, public.basis, decoder, load_pool_labels(folder),
                                    load_in_task(folder))
    checked = run / "search" / "roundtrips.npz"
    surrogate = round_trip_model(decoder, public.basis, SurrogateData.load(checked) if checked.exists()
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
            runner.map_chunks(evaluate_chunk, problem, individuals[:2])  # ships the problem once, as a run does
            times = []
            for _ in range(repeats):
                started = time.perf_counter()
                totals = [b.total for b in runner.map_chunks(evaluate_chunk, problem, individuals)]
                times.append(time.perf_counter() - started)
            reference = totals if reference is None else reference
            rows.append({"part": "population", "individuals": size, "executor": label,
                         "seconds_per_generation": float(np.median(times)), "identical": totals == reference})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=None, help="default: all")
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000, 200000])
    parser.add_argument("--populations", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--workers", type=int, default=2, help="the demo's Ray cluster CPUs")
    parser.add_argument("--run", type=Path, default=None, help="a finished demo run (default: the demo part's)")
    parser.add_argument("--repeats", type=int, default=3, help="timed generations per population size (median)")
    smoke.add_arguments(parser)
    args = parser.parse_args()
    smoke.results_folder(args)
    if args.parts is None:
        args.parts = ["encoding", "population"] if args.smoke else list(PARTS)
    if args.smoke:
        args.sizes, args.populations, args.repeats, args.workers = [100], [4], 1, 1
        mapping = smoke.image_config(smoke.digits(args.out), "scale")
        if "demo" not in args.parts and args.run is None:
            args.run = smoke.image_run(args.out)
    elif args.run is None and "demo" not in args.parts:
        parser.error("give --run RUN (a finished demo run) or include the demo part")
    else:
        mapping = packaged("demo")
        if "demo" in args.parts:
            prepared(Path("data/demo"), "fashion-mnist")  # the demo config's data folders
    measure(args, mapping)


def measure(args: argparse.Namespace, mapping: dict) -> None:
    """The parts asked for, on a Ray cluster of ``args.workers`` CPUs started here; writes the results file."""
    import ray

    ray.init(num_cpus=args.workers, _node_ip_address="127.0.0.1", include_dashboard=False,
             logging_level=logging.WARNING, log_to_driver=False)
    results: dict = {"cpus": args.workers}
    try:
        with tempfile.TemporaryDirectory(prefix="pcevolve-scale-") as scratch:
            run = args.run
            if "demo" in args.parts:
                results["demo"], local_run = demo_runs(Path(scratch), args.workers, mapping)
                run = run or local_run
            worker_counts = [n for n in (1, 2) if n <= args.workers]
            if "encoding" in args.parts:
                results["encoding"] = encoding(run, args.sizes, worker_counts)
            if "population" in args.parts:
                results["population"] = population(run, args.populations, worker_counts, args.repeats)
    finally:
        ray.shutdown()
    print(f"wrote {write_results(results, 'scale')}")


if __name__ == "__main__":
    main()
