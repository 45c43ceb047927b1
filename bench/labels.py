"""How right are a retrieval run's labels? Match every delivered image to the benchmark's source labels.

With ``decoder.name: nearest-public`` every delivered image *is* a public image, and the demo's public
pool was drawn from a labelled benchmark whose labels the run never reads (the pool is unlabelled to
it). Matching the delivered pixels back to the source gives the share of delivered images whose true
class is the class they were delivered under, and the share that come from classes outside the task
(the demo's in-domain pool holds all ten Fashion-MNIST classes). Evaluation only: it reads the source
labels, which no stage of a run may.

It also judges the run's in-task estimate (``pcevolve.search.in_task``, rebuilt from the run folder as the run made
it): the share of the pool it says looks like the task against the share that is, and which pool images of each
source class it set aside.

    python bench/labels.py runs/demo [more run folders]       # → bench/results/labels.json
    python bench/labels.py --smoke                            # a tiny digits run, in seconds

A synthetic image that matches no source image (a conv decoder's output) counts as unmatched. ``--smoke`` makes a
tiny retrieval run on scikit-learn's digits (bench/smoke.py; source ``digits``) under ``--out`` or a temporary
folder and matches its delivered images; the results go there too.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import smoke
from results_file import write_results

from pcevolve.config import load_config
from pcevolve.data import read_image_folder
from pcevolve.data.sources import load_demo_source


def label_accuracy(run: Path, source: str) -> dict:
    config = load_config(run / "config.yaml")
    delivered = read_image_folder(run / "synthetic", size=config.data.image_size, mode=config.data.image_mode)
    train = load_demo_source(source).train
    true_label = {image.tobytes(): int(label) for image, label in zip(train.samples, train.labels)}
    # The task's class k is source label task_labels[k] (the demo folders are named "<source label>_<name>").
    task_labels = [int(name.split("_", 1)[0]) for name in delivered.class_names]
    found = np.array([true_label.get(image.tobytes(), -1) for image in delivered.samples])
    wanted = np.asarray(task_labels)[delivered.labels]
    outside = (found >= 0) & ~np.isin(found, task_labels)
    return {"run": str(run), "images": int(len(found)), "matched": float(np.mean(found >= 0)),
            "label_accuracy": float(np.mean(found == wanted)), "outside_task_classes": float(np.mean(outside)),
            "per_class": {name: float(np.mean(found[delivered.labels == k] == task_labels[k]))
                          for k, name in enumerate(delivered.class_names)},
            "in_task": in_task_accuracy(run, config, true_label, task_labels)}


def in_task_accuracy(run: Path, config: Any, true_label: dict[bytes, int], task_labels: list[int]) -> dict | None:
    """The run's in-task estimate against the pool's source labels (None without territories)."""
    from pcevolve.decoders import load_decoder
    from pcevolve.run_folder import RunFolder
    from pcevolve.search.assembly import in_task_of, load_in_task, load_public_features
    from pcevolve.privacy.released_statistics import StatisticsRelease

    decoder = load_decoder(run / "decoder")
    release = StatisticsRelease.load(run / "release.npz")
    # The run's own estimate; a run made before it existed is judged as the estimate would have cut its pool.
    in_task = load_in_task(RunFolder(run)) or in_task_of(config, release, load_public_features(RunFolder(run)).basis,
                                                        decoder)
    if in_task is None:
        return None
    source = np.array([true_label.get(image.tobytes(), -1) for image in decoder.pool_samples()])
    truth = np.isin(source, task_labels)
    inside = in_task.inside
    return {"share_estimated": round(in_task.share, 4), "share_true": round(float(np.mean(truth)), 4),
            "separated": in_task.separated, "set_aside": in_task.set_aside,
            "inside_in_task": round(float(np.mean(truth[inside])), 4) if inside.any() else None,
            "in_task_kept": round(float(np.mean(inside[truth])), 4) if truth.any() else None,
            "kept_per_source_class": {int(c): round(float(np.mean(inside[source == c])), 4)
                                      for c in np.unique(source[source >= 0])}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="*", type=Path, help="run folders with decoder.name: nearest-public")
    parser.add_argument("--source", default="fashion-mnist", help="the benchmark the demo data was cut from")
    smoke.add_arguments(parser)
    args = smoke.parse_run_folders(parser)
    if args.smoke:
        args.runs, args.source = [smoke.image_run(args.out)], "digits"
    results = [label_accuracy(run, args.source) for run in args.runs]
    print(json.dumps(results, indent=1))
    print(f"wrote {write_results(results, 'labels')}")


if __name__ == "__main__":
    main()
