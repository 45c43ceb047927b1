"""Representation-stage benchmark: throughput and linear-probe quality, frozen vs DP-fine-tuned.

Run on the demo data (``make demo`` first):

    python bench/encoder.py                       # default config, ε_representation = 3
    python bench/encoder.py --set epochs=10 --set trainable_blocks=2 --tag tb2

Writes ``bench/results/encoder[-TAG].json`` and prints a summary. The linear probe is
scikit-learn's logistic regression trained on the 500 private images' features and
scored on ``test/`` — an evaluation on real data, not part of the DP guarantee.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import torch
import yaml
from results_file import write_results
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from pcevolve.augment import ImageAugmentation
from pcevolve.config import RunConfig
from pcevolve.data import read_image_folder, read_unlabeled_images
from pcevolve.encoders import build_encoder, train_representation
from pcevolve.encoders.preprocess import to_float_images
from pcevolve.pipeline.stages import run_randomness
from pcevolve.privacy import BudgetLedger


def probe(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray) -> float:
    """Accuracy of a standardised logistic-regression probe (fixed hyper-parameters, no test peeking)."""
    scaler = StandardScaler().fit(train_x)
    model = LogisticRegression(max_iter=2000, C=0.1).fit(scaler.transform(train_x), train_y)
    return float((model.predict(scaler.transform(test_x)) == test_y).mean())


def features(encoder, images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    encoder.eval()
    return encoder.encode_both(images, batch_size=256)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="data/demo")
    parser.add_argument("--epsilon", type=float, default=3.0, help="representation-stage budget")
    parser.add_argument("--set", action="append", default=[], help="representation config override KEY=VALUE")
    parser.add_argument("--save", default=None, help="save the trained encoder to this folder")
    parser.add_argument("--tag", default="")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    overrides = {k: yaml.safe_load(v) for k, v in (item.split("=", 1) for item in args.set)}
    config = RunConfig.model_validate({"representation": overrides, "seed": args.seed,
                                       "privacy": {"stages": {"representation": args.epsilon, "release": 5.0,
                                                              "decoder": 0.0, "delivery": 0.0}}})
    rep = config.representation
    root = Path(args.data)
    private = read_image_folder(root / "private")
    test = read_image_folder(root / "test")
    public = read_unlabeled_images(root / "public")
    torch.manual_seed(args.seed)
    results: dict = {"config": rep.model_dump(), "epsilon_representation": args.epsilon, "threads": torch.get_num_threads()}

    # Throughput of the frozen trunk on augmented views (what the view banks cost).
    encoder = build_encoder(rep, seed=args.seed, sample_shape=private.samples.shape[1:])
    batch = to_float_images(private.samples[:256])
    views = ImageAugmentation(strength=config.augment.strength)(batch, generator=torch.Generator().manual_seed(0))
    started = time.perf_counter()
    encoder.trunk_activations(views)
    results["trunk_views_per_s"] = 256 / (time.perf_counter() - started)

    # (a) the pretrained encoder as loaded: pooled features are ImageNet's; projected ones pass a random head.
    pooled_train, projected_train = features(encoder, private.samples)
    pooled_test, projected_test = features(encoder, test.samples)
    results["probe_pretrained_pooled"] = probe(pooled_train, private.labels, pooled_test, test.labels)
    results["probe_pretrained_projected"] = probe(projected_train, private.labels, projected_test, test.labels)

    # (b) stage 2 as configured: free public pre-training, then DP fine-tuning at the stage budget.
    ledger = BudgetLedger.from_config(config.privacy)
    records: list[dict] = []
    started = time.perf_counter()
    result = train_representation(encoder, private.samples, public.samples, config=rep, augment=config.augment,
                                  ledger=ledger, noise=run_randomness(config).noise("representation"),
                                  seed=args.seed, progress=sys.stderr.isatty(), on_record=records.append)
    results["stage_seconds_total"] = time.perf_counter() - started
    results["stage"] = result.to_json()
    if result.steps:
        results["dp_steps_per_s"] = result.steps / result.seconds["dp_training"]
    pooled_train, projected_train = features(encoder, private.samples)
    pooled_test, projected_test = features(encoder, test.samples)
    results["probe_trained_pooled"] = probe(pooled_train, private.labels, pooled_test, test.labels)
    results["probe_trained_projected"] = probe(projected_train, private.labels, projected_test, test.labels)
    results["ledger_representation_epsilon"] = ledger.spent("representation")
    if args.save:
        encoder.save(args.save)
    results["records"] = records
    results["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    out = write_results(results, "encoder", args.tag)
    keys = ["trunk_views_per_s", "dp_steps_per_s", "stage_seconds_total", "probe_pretrained_pooled",
            "probe_pretrained_projected", "probe_trained_pooled", "probe_trained_projected",
            "ledger_representation_epsilon", "peak_rss_mib"]
    for key in keys:
        if key in results:
            print(f"{key:32s} {results[key]:.4g}")
    print(f"σ = {result.noise_multiplier}, steps = {result.steps}, mode = {result.mode}, seconds = {result.seconds}")
    if result.collapse is not None:
        print(f"collapse diagnostics (public embeddings): {result.collapse.message()}")
    print(f"wrote {out}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
