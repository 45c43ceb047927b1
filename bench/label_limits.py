"""How far are a retrieval run's pool labels from what the data allows? Bounds that only a benchmark can compute.

A run with ``decoder.name: nearest-public`` labels every image of its unlabelled public pool (the ``labels``
stage, ``pool_labels.npz``) and delivers pool images under those labels. This bench reads the demo's source
labels of the pool — which no stage of a run may — and puts the run's labels beside:

* ``product``: the share of the pool's in-task images (those of the task's classes) that the shipped labels
  label right;
* ``propagated``: the shipped labels smoothed over a 10-nearest-neighbour graph of the pool's pixels (α = 0.5,
  20 rounds) — post-processing a run could do;
* ``supervised_private`` / ``fixmatch_private``: *no privacy* — the small CNN trained on the private images with
  their true labels (shifts and flips), and the same CNN trained FixMatch-style on them plus the whole pool
  (confident predictions on weakly augmented pool images as targets for strongly augmented copies): what
  supervised and semi-supervised learning reach with the private labels themselves;
* ``outside_private``: *no privacy* — how well the private images themselves tell the pool's images of each
  class outside the task from its in-task images, by the distance to the nearest private image: in pixels, in the
  run's search coordinates (what its class model sees) and in the supervised CNN's penultimate features. For each
  outside kind the AUC (0.5: no better than chance), and for the kind with the lowest AUC the share of in-task
  images a distance cut-off keeps while leaving that kind at most 3% of what it keeps;
* ``downstream``: the evaluation's CNN (no augmentation, three seeds) trained on 1,000 random in-task pool images
  per class with their true labels and with the run's labels — what the labels' errors cost the delivered set.

Accuracies of CNNs are on every Fashion-MNIST test image of the task's classes. docs/search.md §4 quotes them.

    python bench/label_limits.py runs/compare-pool/compare-eps8-seed0 [more runs] [--no-fixmatch]
                                                                     # → bench/results/label-limits.json
    python bench/label_limits.py --smoke                             # a tiny digits run, in seconds

``--smoke`` makes a tiny retrieval run on scikit-learn's digits (bench/smoke.py; source ``digits``, whose missing
test split the source's training images stand in for) under ``--out`` or a temporary folder, and computes every
bound on it with 5 pool images per class and 3 FixMatch steps; the results go there too.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import smoke
from results_file import write_results
from source_labels import pool_truth, task_labels

if TYPE_CHECKING:
    import torch

    from pcevolve.data import LabeledDataset

# torch, scikit-learn and pcevolve's networks are imported inside the functions that use them: --help answers at once.

CNN_SEEDS = (0, 1, 2)
PER_CLASS = 1000  # in-task pool images per class the downstream bound trains on (--per-class)
FIXMATCH_STEPS = 2000
NEIGHBOURS = 10
ALPHA = 0.5


def private_set(run: Path) -> tuple[LabeledDataset, np.ndarray]:
    """The run's private images and the task's source labels (the demo's folders are "<source label>_<name>")."""
    from pcevolve.config import load_config
    from pcevolve.data import read_image_folder

    config = load_config(run / "config.yaml")
    private = read_image_folder(config.data.private, size=config.data.image_size, mode=config.data.image_mode)
    return private, task_labels(private.class_names)


def test_set(test: LabeledDataset, task: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The source's test images of the task's classes and their task labels."""
    keep = np.isin(test.labels, task)
    return test.samples[keep], np.searchsorted(task, test.labels[keep])


def in_task_right(posterior: np.ndarray, truth: np.ndarray) -> float:
    inside = truth >= 0
    return float(np.mean(posterior.argmax(axis=1)[inside] == truth[inside]))


def propagated(posterior: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """The posterior smoothed over the pool's pixel 10-NN graph: P ← α·mean over neighbours + (1 − α)·P₀."""
    from sklearn.decomposition import PCA
    from sklearn.neighbors import NearestNeighbors

    pixels = PCA(64, random_state=0).fit_transform(pool.reshape(len(pool), -1).astype(np.float32))
    pixels /= np.linalg.norm(pixels, axis=1, keepdims=True)
    _, neighbours = NearestNeighbors(n_neighbors=NEIGHBOURS + 1).fit(pixels).kneighbors(pixels)
    neighbours = neighbours[:, 1:]
    smoothed = posterior.copy()
    for _ in range(20):
        smoothed = ALPHA * smoothed[neighbours].mean(axis=1) + (1 - ALPHA) * posterior
    return smoothed


def strong_augmentation(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Shifts of up to 4 px, flips, contrast/brightness jitter and an 11×11 cut-out."""
    import torch

    from pcevolve.augment.image import random_flip
    from pcevolve.nets.small_cnn import random_shift

    n, _, h, w = x.shape
    x = random_flip(random_shift(x, shift=4, generator=generator), generator=generator)
    contrast = 0.6 + 0.8 * torch.rand(n, 1, 1, 1, generator=generator)
    brightness = 0.2 * (torch.rand(n, 1, 1, 1, generator=generator) - 0.5)
    mean = x.mean((1, 2, 3), keepdim=True)
    x = ((x - mean) * contrast + mean + brightness).clamp(0, 1)
    cy = torch.randint(0, h, (n,), generator=generator)
    cx = torch.randint(0, w, (n,), generator=generator)
    hole = ((torch.arange(h)[None, :, None] - cy[:, None, None]).abs() <= 5) & \
           ((torch.arange(w)[None, None, :] - cx[:, None, None]).abs() <= 5)
    return x * (~hole[:, None]).float()


def fixmatch(labelled: np.ndarray, labels: np.ndarray, unlabelled: np.ndarray, *, classes: int, seed: int,
             steps: int = FIXMATCH_STEPS, batch: int = 64, ratio: int = 3,
             threshold: float = 0.95) -> torch.nn.Module:
    """FixMatch (Sohn et al. 2020) with the small CNN: cross-entropy on weakly augmented labelled images plus, on
    unlabelled images whose weak-augmentation prediction is at least ``threshold`` sure, cross-entropy of the
    strongly augmented copy against that prediction."""
    import torch
    import torch.nn.functional as F

    from pcevolve.nets.small_cnn import classic_augmentation, cnn_input, small_cnn

    x_l, x_u = cnn_input(labelled), cnn_input(unlabelled)
    y_l = torch.from_numpy(np.array(labels, dtype=np.int64))
    generator = torch.Generator().manual_seed(seed)
    model = small_cnn(classes, channels=x_l.shape[1], size=tuple(x_l.shape[2:]), generator=generator)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    for _ in range(steps):
        li = torch.randint(0, len(x_l), (batch,), generator=generator)
        ui = torch.randint(0, len(x_u), (batch * ratio,), generator=generator)
        weak_l = classic_augmentation(x_l[li], generator=generator, flip=True)
        weak_u = classic_augmentation(x_u[ui], generator=generator, flip=True)
        with torch.no_grad():
            sure, target = torch.softmax(model(weak_u), dim=1).max(dim=1)
        out = model(torch.cat([weak_l, strong_augmentation(x_u[ui], generator)]))
        consistency = F.cross_entropy(out[batch:], target, reduction="none") * (sure >= threshold).float()
        loss = F.cross_entropy(out[:batch], y_l[li]) + consistency.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model.eval()


OUTSIDE_CAP = 0.03


def outside_separation(private: np.ndarray, pool: np.ndarray, truth: np.ndarray, source_labels: np.ndarray,
                       names: tuple[str, ...]) -> dict:
    """In one feature space (rows of ``private`` and ``pool``): per outside kind, the AUC of "near a private image"
    for in-task against that kind; and for the hardest kind, the in-task share kept by the nearest-private-distance
    cut-off that leaves the kind at most :data:`OUTSIDE_CAP` of the kept images."""
    from sklearn.metrics import roc_auc_score
    from sklearn.neighbors import NearestNeighbors

    distance = NearestNeighbors(n_neighbors=1).fit(private).kneighbors(pool)[0][:, 0]
    inside = truth >= 0
    auc = {names[kind]: float(roc_auc_score(np.r_[np.ones(inside.sum()), np.zeros(np.sum(source_labels == kind))],
                                            -np.r_[distance[inside], distance[source_labels == kind]]))
           for kind in np.unique(source_labels[~inside])}
    hardest = min(auc, key=auc.get)
    kind = names.index(hardest)
    order = np.argsort(distance)  # nearest first: every cut-off keeps a prefix
    kept_inside = np.cumsum(inside[order])
    kept_kind = np.cumsum(source_labels[order] == kind)
    allowed = kept_kind <= OUTSIDE_CAP * (kept_inside + kept_kind)
    return {"auc": auc, "hardest": hardest,
            "in_task_kept_at_cap": float(kept_inside[allowed].max(initial=0) / inside.sum())}


def search_coordinates(run: Path, private: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The private images and the pool in the run's search coordinates (its encoder, then its public basis)."""
    from pcevolve.decoders import load_decoder
    from pcevolve.modalities.image.parts import IMAGE
    from pcevolve.run_folder import RunFolder
    from pcevolve.search.assembly import load_public_features

    basis = load_public_features(RunFolder(run)).basis
    _, features = IMAGE.load_encoder(run / "encoder").encode_both(private, batch_size=256)
    return basis.reduce(features), basis.reduce(load_decoder(run / "decoder").pool_encodings())


def penultimate(model: torch.nn.Sequential, images: np.ndarray) -> np.ndarray:
    import torch

    from pcevolve.nets.small_cnn import cnn_input

    with torch.no_grad():
        return torch.cat([model[:-1](chunk) for chunk in cnn_input(images).split(1024)]).numpy()


def downstream(pool: np.ndarray, rows: np.ndarray, labels: np.ndarray, test: tuple[np.ndarray, np.ndarray],
               classes: int) -> float:
    from pcevolve.nets.small_cnn import predict, train_cnn

    return float(np.mean([np.mean(predict(train_cnn(pool[rows], labels, classes=classes, seed=s), test[0]) == test[1])
                          for s in CNN_SEEDS]))


def limits(run: Path, source: str, *, with_fixmatch: bool, per_class: int = PER_CLASS,
           fixmatch_steps: int = FIXMATCH_STEPS) -> dict:
    """Every bound of the module docstring for one retrieval run whose data was cut from ``source``."""
    from pcevolve.data.sources import load_demo_source
    from pcevolve.nets.small_cnn import predict, predict_probabilities, train_cnn

    started = time.monotonic()
    private, task = private_set(run)
    bench = load_demo_source(source)
    pool, truth, source_labels = pool_truth(run, bench.train, task)
    # A source without a test split (digits: the smoke data) had its test images cut from the training set.
    test = test_set(bench.test if bench.test is not None else bench.train, task)
    classes = len(task)
    saved = np.load(run / "pool_labels.npz")
    posterior = saved["posterior"]
    out = {"run": str(run), "labeller": str(saved["labeller"]), "in_task_share": float(np.mean(truth >= 0)),
           "product": in_task_right(posterior, truth),
           "propagated": in_task_right(propagated(posterior, pool), truth)}
    rng = np.random.default_rng(0)
    rows = np.concatenate([rng.choice(np.flatnonzero(truth == k), per_class, replace=False) for k in range(classes)])
    run_labels = posterior[rows].argmax(axis=1)
    out["downstream"] = {"true_labels": downstream(pool, rows, truth[rows], test, classes),
                         "run_labels": downstream(pool, rows, run_labels, test, classes),
                         "run_labels_right": float(np.mean(run_labels == truth[rows]))}
    supervised = train_cnn(private.samples, private.labels, classes=classes, seed=1, augment=True)
    out["supervised_private"] = {"in_task": in_task_right(predict_probabilities(supervised, pool), truth),
                                 "test": float(np.mean(predict(supervised, test[0]) == test[1]))}
    pixels = [images.reshape(len(images), -1).astype(np.float32) / 255 for images in (private.samples, pool)]
    spaces = {"pixels": pixels, "search": search_coordinates(run, private.samples),
              "supervised_cnn": [penultimate(supervised, images) for images in (private.samples, pool)]}
    out["outside_private"] = {space: outside_separation(*rows, truth, source_labels, bench.class_names)
                              for space, rows in spaces.items()}
    if with_fixmatch:
        semi = fixmatch(private.samples, private.labels, pool, classes=classes, seed=1, steps=fixmatch_steps)
        out["fixmatch_private"] = {"in_task": in_task_right(predict_probabilities(semi, pool), truth),
                                   "test": float(np.mean(predict(semi, test[0]) == test[1]))}
    out["seconds"] = time.monotonic() - started
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="*", type=Path, help="run folders with decoder.name: nearest-public")
    parser.add_argument("--source", default="fashion-mnist", help="the benchmark the demo data was cut from")
    parser.add_argument("--no-fixmatch", action="store_true", help="skip the semi-supervised bound (~3 min a run)")
    parser.add_argument("--per-class", type=int, default=PER_CLASS,
                        help="in-task pool images per class for the downstream bound")
    parser.add_argument("--fixmatch-steps", type=int, default=FIXMATCH_STEPS)
    smoke.add_arguments(parser)
    args = smoke.parse_run_folders(parser)
    if args.smoke:
        args.runs, args.source, args.per_class, args.fixmatch_steps = [smoke.image_run(args.out)], "digits", 5, 3
    import torch

    torch.set_num_threads(2)
    results = []
    for run in args.runs:
        results.append(limits(run, args.source, with_fixmatch=not args.no_fixmatch, per_class=args.per_class,
                              fixmatch_steps=args.fixmatch_steps))
        print(json.dumps(results[-1], indent=1), flush=True)
    print(f"→ {write_results(results, 'label-limits')}")


if __name__ == "__main__":
    main()
