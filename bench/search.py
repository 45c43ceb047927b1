"""Search benchmark: does the evolution earn its keep, what does it cost, does coarse-to-fine help (SPEC R4, R5).

Run after a finished run (``make demo`` or ``pcevolve run configs/demo.yaml``; without one, and without
``--run``, the bench prints its usage and exits 2):

    python bench/search.py --run runs/demo                  # evolved vs one-shot baseline, cost, scaling
    python bench/search.py --run runs/demo --schedules 60   # + coarse-to-fine vs fixed rate, 60 generations each
    python bench/search.py --smoke                          # every part on a tiny run, in seconds

Writes ``bench/results/search[-TAG].json``.

* Evolved vs baseline: the delivered synthetic set (the run's best individual) against the one-shot
  baseline "sample the DP class Gaussians (released mean + covariance in the search basis) and
  decode" — same release, encoder, decoder and number of samples per class, the same small CNN
  (``pcevolve.evaluation.train_cnn``, fixed recipe) trained on each and tested on ``test/``;
  per-class accuracies too. The CNN on the real private images is the (non-publishable) reference.
  The evaluation's linear probe on independent EfficientNet-Lite2 features is trained on each set too:
  deterministic, so it separates sets whose CNN means differ by less than the CNN's seed noise.
* Cost: fitness evaluations per second, and time per generation against population size, candidate
  size M per class and number of private samples. The fitness never reads private data, so its cost
  does not depend on n; only the one-off release does (timed on subsets, on a throwaway ledger).
* Schedules: the same problem searched with the coarse-to-fine schedule and with a fixed rate,
  equal generations; final DP fitness and downstream accuracy of each best.

Evaluation only: it reads the private and test images (the secure zone); nothing here is a release.

**Smoke** (``--smoke``): every part above, schedules included (2 generations each), on a tiny retrieval run of
scikit-learn's digits (bench/smoke.py) made under ``--out`` or a temporary folder, with one CNN per set and the
scaling measured at a few small sizes; the results go there too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from pathlib import Path

from typing import TYPE_CHECKING

import numpy as np
import smoke
from results_file import write_results

if TYPE_CHECKING:
    from pcevolve.search.problem import SearchProblem

# torch and most of pcevolve are imported inside the functions that use them: --help answers at once.

#: The sizes the scaling parts time: population, candidates per class, private samples; smaller with --smoke.
SCALING = {"population": (16, 32, 64), "candidate_per_class": (50, 100, 200), "release_n": (100, 250, 500)}
SMOKE_SCALING = {"population": (4, 8), "candidate_per_class": (10, 20), "release_n": (20, 40)}


def cnn_result(images, labels, test, *, classes, seeds, flip):
    """The fixed small CNN trained once per seed (one CNN's accuracy moves by ±1–2 points with its seed): mean and
    per-seed numbers."""
    from pcevolve.evaluation import classification_metrics, predict, train_cnn

    runs = []
    for seed in seeds:
        model = train_cnn(images, labels, classes=classes, seed=seed, flip=flip)
        runs.append(classification_metrics(test.labels, predict(model, test.samples), classes))
    return {"accuracy": float(np.mean([m.accuracy for m in runs])),
            "accuracy_per_seed": [float(m.accuracy) for m in runs],
            "macro_f1": float(np.mean([m.macro_f1 for m in runs])),
            "per_class": [float(a) for a in np.mean([m.per_class_accuracy for m in runs], axis=0)]}


def probe_result(features, labels, test_features, test_labels, *, classes):
    """The evaluation's linear probe (C chosen by cross-validation on the training set): accuracy and per class."""
    from pcevolve.evaluation import classification_metrics, linear_probe

    metrics = classification_metrics(test_labels, linear_probe(features, labels, test_features), classes)
    return {"accuracy": float(metrics.accuracy), "per_class": [float(a) for a in metrics.per_class_accuracy]}


def decode_set(problem, vector, counts, *, oversample, seed, basis, encoder, decoder, territories=None):
    """The run's own delivery step (search.delivery.decode_candidate) for any individual."""
    from pcevolve.search.delivery import decode_candidate

    return decode_candidate(problem.space, vector, counts, oversample=oversample, rng=np.random.default_rng(seed),
                            basis=basis, encoder=encoder, decoder=decoder, targets=problem.targets,
                            territories=territories)


def timed_generation(problem: SearchProblem, population: int, seed: int) -> float:
    bounds = problem.space.bounds()
    rng = np.random.default_rng(seed)
    pop = rng.uniform(bounds.lower, bounds.upper, size=(population, bounds.dim))
    started = time.perf_counter()
    problem.evaluate_population(pop)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, default=Path("runs/demo"), help="a finished run folder")
    parser.add_argument("--schedules", type=int, default=0, help="generations for the schedule comparison (0: skip)")
    parser.add_argument("--tag", default="")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cnn-seeds", type=int, default=3, help="CNNs trained per synthetic set (mean reported)")
    smoke.add_arguments(parser)
    args = parser.parse_args()
    smoke.results_folder(args)
    if args.smoke:
        args.run, args.schedules, args.cnn_seeds = smoke.image_run(args.out), 2, 1
    elif not (args.run / "stages" / "delivery.json").exists():
        parser.error(f"{args.run} is not a finished run: give --run RUN (make demo makes runs/demo) or --smoke")
    measure(args, SMOKE_SCALING if args.smoke else SCALING)


def measure(args: argparse.Namespace, scaling: dict[str, tuple[int, ...]]) -> None:
    """Every part of the module docstring on ``args.run``, the scaling parts at the sizes of ``scaling``; writes the
    results file and prints them."""
    from pcevolve.config import load_config
    from pcevolve.data import read_image_folder
    from pcevolve.decoders import load_decoder
    from pcevolve.encoders import ImageEncoder
    from pcevolve.evaluation.features import independent_encoder, pooled_features
    from pcevolve.evolution import EvolutionSettings
    from pcevolve.privacy import BudgetLedger
    from pcevolve.privacy.noise import GeneratorNoise
    from pcevolve.run_folder import RunFolder
    from pcevolve.search.assembly import (build_problem, class_territories, load_in_task, load_pool_labels,
                                          load_public_features)
    from pcevolve.privacy.class_release import CLASS_STATISTICS, ReleaseSettings
    from pcevolve.privacy.released_statistics import StatisticsRelease
    from pcevolve.search.roundtrip import SurrogateData, round_trip, round_trip_model
    from pcevolve.search.runner import run_search

    cnn_seeds = tuple(args.seed + i for i in range(args.cnn_seeds))
    folder = RunFolder.open(args.run)
    config = load_config(folder.config_path)
    encoder = ImageEncoder.load(folder.path / "encoder").eval()
    decoder = load_decoder(folder.path / "decoder")
    public = load_public_features(folder)
    basis, public_pairs, clip_norm = public.basis, public.pairs, public.clip_norm
    checked = folder.path / "search" / "roundtrips.npz"
    # The round trip as the run ended: exact for a retrieval decoder, else the surrogate after its last refit.
    release = StatisticsRelease.load(folder.path / "release.npz")
    territories = class_territories(config, release, basis, decoder, load_pool_labels(folder),
                                    load_in_task(folder))
    surrogate = round_trip_model(decoder, basis, SurrogateData.load(checked) if checked.exists() else public_pairs,
                                 territories)
    exact = decoder.pool_encodings() is not None
    problem = build_problem(config, release, surrogate, public=public, territories=territories)
    private = read_image_folder(config.data.private, size=config.data.image_size, mode=config.data.image_mode)
    test = read_image_folder(config.data.test, size=config.data.image_size, mode=config.data.image_mode)
    classes = len(private.class_names)
    flip = True
    results: dict = {"run": str(folder.path), "config": config.search.model_dump(mode="json")}

    # Evolved (delivered) vs one-shot baseline, same sizes. The baseline is decoded as the issue defines it (sample
    # and decode) and, when the run oversamples at delivery, also through the run's own delivery selection, to
    # isolate what the evolution adds. The evolved set is the delivered images as written (a retrieval decoder's
    # delivery is not a row-by-row decode).
    evolved = read_image_folder(folder.path / "synthetic", size=config.data.image_size, mode=config.data.image_mode)
    counts = np.bincount(evolved.labels, minlength=classes)
    decode = dict(seed=args.seed + 11, basis=basis, encoder=encoder, decoder=decoder, territories=territories)
    baseline = decode_set(problem, problem.space.baseline(), counts, oversample=1.0, **decode)
    sets = {"evolved_delivered": (evolved.samples, evolved.labels),
            "baseline_dp_gaussians": (baseline.samples, baseline.labels)}
    results["reencode_agreement"] = {"baseline": baseline.agreement}
    oversample = config.search.delivery_oversample
    if oversample != 1.0:
        selected = decode_set(problem, problem.space.baseline(), counts, oversample=oversample, **decode)
        sets["baseline_dp_gaussians_selected"] = (selected.samples, selected.labels)
        results["reencode_agreement"]["baseline_selected"] = selected.agreement
    sets["real_private_reference"] = (private.samples, private.labels)
    started = time.perf_counter()
    results["downstream_cnn"] = {name: cnn_result(images, labels, test, classes=classes, seeds=cnn_seeds, flip=flip)
                                 for name, (images, labels) in sets.items()}
    results["downstream_seconds"] = time.perf_counter() - started
    # The evaluation's linear probe on independent (EfficientNet-Lite2) features: deterministic, so a gap of one
    # point means something, where one CNN moves by ±1–2 points with its seed.
    independent = independent_encoder()
    test_features = pooled_features(independent, test.samples)
    results["downstream_probe"] = {
        name: probe_result(pooled_features(independent, images), labels, test_features, test.labels, classes=classes)
        for name, (images, labels) in sets.items()}
    results["samples_per_class"] = counts.tolist()
    # The run records only the candidates' totals: both breakdowns are evaluated here, on the same problem.
    with np.load(folder.path / "search" / "ranked.npz", allow_pickle=False) as ranked:
        best = ranked["vectors"][0]
    results["dp_fitness"] = {"baseline": problem.evaluate(problem.space.baseline()).to_json(),
                             "evolved_best": problem.evaluate(best).to_json()}

    # Cost and scaling.
    base = timed_generation(problem, config.search.population, args.seed)
    evaluations = config.search.population * config.search.eval_seeds
    results["cost"] = {"seconds_per_generation": base, "fitness_evaluations_per_second": evaluations / base}
    results["scaling_population"] = {p: timed_generation(problem, p, args.seed) for p in scaling["population"]}
    results["scaling_candidate_per_class"] = {}
    for m in scaling["candidate_per_class"]:
        scaled = config.model_copy(update={"search": config.search.model_copy(update={"candidate_per_class": m})})
        scaled_problem = build_problem(scaled, release, surrogate, public=public, territories=territories)
        results["scaling_candidate_per_class"][m] = timed_generation(scaled_problem, config.search.population,
                                                                     args.seed)
    _, private_features = encoder.encode_both(private.samples, batch_size=256)
    z_private = basis.reduce(private_features)
    # The run's release settings (pipeline.stages' release stage), with the run's own random features.
    settings = ReleaseSettings(num_classes=classes, clip_norm=clip_norm, rff=release.rff,
                               shares=config.search.release_shares, public_variances=basis.variances,
                               min_snr=config.search.release_min_snr, clip_radii=public.clip_radii,
                               dim=config.search.release_dim,
                               vote_centres=public.vote_centres if config.search.class_means == "votes" else None,
                               vote_width=public.vote_width)
    results["release_seconds_by_n"] = {}
    for n in scaling["release_n"]:
        rows = np.random.default_rng(n).choice(len(z_private), min(n, len(z_private)), replace=False)
        # Throwaway, seeded: timing only, nothing delivered.
        ledger = BudgetLedger(8.0, 1e-5, {"release": 5.0}, reproducible_noise=True)
        started = time.perf_counter()
        CLASS_STATISTICS.release(z_private[rows], private.labels[rows], settings=settings, ledger=ledger,
                           noise=GeneratorNoise(np.random.default_rng(0)))
        results["release_seconds_by_n"][n] = time.perf_counter() - started

    def real_round_trip(z: np.ndarray) -> np.ndarray:
        return round_trip(z, basis=basis, decoder=decoder, encoder=encoder)[1]

    # Coarse-to-fine vs fixed rate at equal generations (each from the public-only surrogate, as a run starts).
    if args.schedules:
        results["schedules"] = {}
        for name, update in (("coarse_to_fine", {}), ("fixed_rate", {"coarse_generations": 0})):
            search = config.search.model_copy(update={"generations": args.schedules,
                                                      "patience": args.schedules, **update})
            history: list[dict] = []
            with tempfile.TemporaryDirectory() as scratch:
                start = round_trip_model(decoder, basis, public_pairs, territories)
                outcome = run_search(build_problem(config, release, start, public=public, territories=territories),
                                     EvolutionSettings.from_config(search), seed=config.seed, folder=Path(scratch),
                                     record=history.append, round_trip=None if exact else real_round_trip,
                                     surrogate_data=None if exact else public_pairs,
                                     check_every=search.roundtrip_every, check_per_class=search.roundtrip_per_class)
            vector, fitness = outcome.engine.best
            decoded = decode_set(problem, vector, counts, oversample=oversample, **decode)
            results["schedules"][name] = {
                "best_dp_fitness": fitness, "curve": [h["best"] for h in history],
                "downstream_cnn": cnn_result(decoded.samples, decoded.labels, test, classes=classes, seeds=cnn_seeds,
                                             flip=flip)}

    results["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = write_results(results, "search", args.tag)
    print(json.dumps({k: v for k, v in results.items() if k != "config"}, indent=1, default=float))
    print(f"wrote {out}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
