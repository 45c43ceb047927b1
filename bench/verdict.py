"""What can the private verdict buy a retrieval run? Its labellings of the pool, judged by the benchmark's labels.

For each finished run folder with ``decoder.name: nearest-public`` and territories, the private verdict's search
(``pcevolve.search.verdict``) is replayed on the run's saved release, pool labels and encoder, and every labelling
it reaches is judged with the source benchmark's labels of the pool, which no stage of a run may read:

* ``release``: the offsets 0 (the labels the run delivers without a verdict);
* ``run``: the run's own verdict offsets (``verdict.json``; the same as ``release`` without a verdict);
* ``exact``: the verdict's search with every selection the candidate of the largest count — no noise, ε = ∞, so
  NOT DP: an upper bound on what the verdict's candidates and utility can find;
* ``dp``: the same search with the exponential mechanism at ``--epsilon`` per selection (``--repeats`` draws of
  research noise).

Each row gives the territories' images labelled right and from classes outside the task, and the probe's count of
private samples it gets right (the verdict's utility; exact, evaluation only).

    python bench/verdict.py runs/demo [more run folders]    # → bench/results/verdict.json
    python bench/verdict.py --smoke                         # the tiny digits run, in seconds
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import smoke
from results_file import write_results
from source_labels import pool_truth, task_labels

from pcevolve.config import load_config
from pcevolve.data.sources import load_demo_source
from pcevolve.decoders import load_decoder
from pcevolve.modalities import MODALITIES
from pcevolve.run_folder import RunFolder
from pcevolve.search.assembly import POOL_LABELS_FILE, VERDICT_FILE, load_in_task, load_public_features, territory_sizes
from pcevolve.search.in_task import eligible
from pcevolve.search.pool_labels import PoolLabels
from pcevolve.privacy.released_statistics import StatisticsRelease
from pcevolve.decoders.territories import ClassTerritories
from pcevolve.search.territory import cut_territories
from pcevolve.search.verdict import (
    VerdictSettings,
    VerdictState,
    correct_counts,
    run_verdict,
    shifted_labels,
)


def _judge(truth: np.ndarray, territories: ClassTerritories) -> dict[str, float]:
    rows = np.concatenate(territories.members)
    labels = np.concatenate([np.full(len(m), k) for k, m in enumerate(territories.members)])
    return {"right": round(float(np.mean(truth[rows] == labels)), 4),
            "outside": round(float(np.mean(truth[rows] == -1)), 4)}


def replay(run: Path, source: str, *, epsilon: float, repeats: int) -> dict:
    config = load_config(run / "config.yaml")
    folder = RunFolder.open(run)
    modality = MODALITIES[config.data.modality]
    private = modality.read_private(config.data, modality.layout(config.data))
    encoder, decoder = modality.load_encoder(run / "encoder"), load_decoder(run / "decoder")
    release = StatisticsRelease.load(run / "release.npz")
    basis = load_public_features(folder).basis
    labels = PoolLabels.load(run / POOL_LABELS_FILE)
    pool_view = basis.reduce(decoder.pool_encodings())
    private_view = basis.reduce(encoder.encode_both(private.samples, batch_size=256)[1])
    in_task = load_in_task(folder)
    sizes, allowed = territory_sizes(config, release, in_task), eligible(in_task)
    task = task_labels(private.class_names)
    _, truth, _ = pool_truth(run, load_demo_source(source).train, task)
    generations = config.search.verdict_generations
    saved = run / VERDICT_FILE
    offsets = {"release": np.zeros(len(task)),
               "run": np.asarray(json.loads(saved.read_text())["offsets"]) if saved.exists() else np.zeros(len(task))}

    def search(select) -> np.ndarray:
        state = VerdictState.start(len(task), VerdictSettings(step=config.search.verdict_step))
        return run_verdict(labels, pool_view, sizes, eligible=allowed, private_view=private_view,
                           private_labels=private.labels, rounds=generations, epsilon=epsilon, select=select,
                           state=state).offsets

    offsets["exact"] = search(lambda _, counts: int(np.argmax(counts)))
    rng = np.random.default_rng(0)
    for i in range(repeats):
        offsets[f"dp-{i}"] = search(lambda mechanism, counts: int(rng.choice(len(counts),
                                                                             p=mechanism.probabilities(counts))))
    rows = {}
    for name, b in offsets.items():
        territories = cut_territories(pool_view, shifted_labels(labels, b), sizes, allowed)
        count = correct_counts(pool_view, [territories], private_view, private.labels)[0]
        rows[name] = {"offsets": [round(float(v), 3) for v in b], **_judge(truth, territories),
                      "probe_private_right": round(float(count / len(private.labels)), 4)}
    return {"run": str(run), "epsilon_per_selection": epsilon, "generations": generations, "labellings": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="*", type=Path, help="run folders with decoder.name: nearest-public")
    parser.add_argument("--source", default="fashion-mnist", help="the benchmark the demo data was cut from")
    parser.add_argument("--epsilon", type=float, default=0.18,
                        help="ε of each selection of the dp rows (0.18: a tenth of ε = 8 over six generations)")
    parser.add_argument("--repeats", type=int, default=3, help="draws of the dp search")
    smoke.add_arguments(parser)
    args = smoke.parse_run_folders(parser)
    if args.smoke:
        args.runs, args.source, args.repeats = [smoke.image_run(args.out)], "digits", 1
    results = [replay(run, args.source, epsilon=args.epsilon, repeats=args.repeats) for run in args.runs]
    print(json.dumps(results, indent=1))
    print(f"wrote {write_results(results, 'verdict')}")


if __name__ == "__main__":
    main()
