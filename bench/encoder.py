"""Representation-stage benchmark: throughput and linear-probe quality, frozen vs DP-fine-tuned.

Run on the demo data (``data/demo``, prepared with ``pcevolve data prepare fashion-mnist`` when missing):

    python bench/encoder.py                       # default config, ε_representation = 3
    python bench/encoder.py --set epochs=10 --set trainable_blocks=2 --tag tb2
    python bench/encoder.py --smoke               # the same steps on tiny data, in seconds

Writes ``bench/results/encoder[-TAG].json`` and prints a summary. The linear probe is
scikit-learn's logistic regression trained on the 500 private images' features and
scored on ``test/`` — an evaluation on real data, not part of the DP guarantee.

The representation stage gets ``--epsilon`` (a ledger whose split gives it that much and the release 5, as
``privacy.split`` does in a run). ``--smoke`` runs every step on scikit-learn's digits (bench/smoke.py: 3 classes,
8 px, 60 private images) with a scaled-down representation (32 px input, 1 epoch each, one batch of all 60
private images, a 100-image public pool; ``--set`` still applies on top) and writes under ``--out`` or a temporary
folder.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import smoke
import yaml
from pipeline_run import prepared
from results_file import write_results

# torch, scikit-learn and pcevolve's encoders are imported inside the functions that use them: --help answers at once.

RELEASE_EPSILON = 5.0  # the release's budget beside the representation's (the seed's 3 : 5)
#: What --smoke sets in the representation config before --set: every size scaled down (bench/smoke.py).
SMOKE_REPRESENTATION = {**smoke.TINY_REPRESENTATION, "public_pool": 100}


def probe(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray) -> float:
    """Accuracy of a standardised logistic-regression probe (fixed hyper-parameters, no test peeking)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(train_x)
    model = LogisticRegression(max_iter=2000, C=0.1).fit(scaler.transform(train_x), train_y)
    return float((model.predict(scaler.transform(test_x)) == test_y).mean())


def features(encoder, images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    encoder.eval()
    return encoder.encode_both(images, batch_size=256)


def run_config(args: argparse.Namespace):
    """The RunConfig the bench trains with: ``--set`` over the defaults (over :data:`SMOKE_REPRESENTATION` with
    ``--smoke``), and a budget whose split gives the representation ``--epsilon`` and the release 5."""
    from pcevolve.config import RunConfig

    overrides = {k: yaml.safe_load(v) for k, v in (item.split("=", 1) for item in args.set)}
    if args.smoke:
        overrides = {**SMOKE_REPRESENTATION, **overrides}
    total = args.epsilon + RELEASE_EPSILON
    split = {"representation": args.epsilon / total, "release": RELEASE_EPSILON / total}
    return RunConfig.model_validate({"representation": overrides, "seed": args.seed,
                                     "privacy": {"epsilon": total, "split": split}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("data/demo"),
                        help="a prepared image folder (private/, public/, test/); data/demo is prepared when missing")
    parser.add_argument("--epsilon", type=float, default=3.0, help="representation-stage budget")
    parser.add_argument("--set", action="append", default=[], help="representation config override KEY=VALUE")
    parser.add_argument("--save", default=None, help="save the trained encoder to this folder")
    parser.add_argument("--tag", default="")
    parser.add_argument("--seed", type=int, default=0)
    smoke.add_arguments(parser)
    args = parser.parse_args()
    smoke.results_folder(args)
    if args.smoke:
        args.data = smoke.digits(args.out)
    elif args.data == Path("data/demo"):
        prepared(args.data, "fashion-mnist")
    train(args)


def train(args: argparse.Namespace) -> None:
    """Everything the module docstring lists, on ``args.data``; writes the results file and prints a summary."""
    import torch

    from pcevolve.augment import ImageAugmentation
    from pcevolve.data import read_image_folder, read_unlabeled_images
    from pcevolve.encoders import build_encoder, train_representation
    from pcevolve.encoders.preprocess import to_float_images
    from pcevolve.privacy import BudgetLedger
    from pcevolve.randomness import run_randomness

    config = run_config(args)
    rep = config.representation
    root = Path(args.data)
    private = read_image_folder(root / "private")
    test = read_image_folder(root / "test")
    public = read_unlabeled_images(root / "public")
    torch.manual_seed(args.seed)
    results: dict = {"config": rep.model_dump(), "epsilon_representation": args.epsilon,
                     "threads": torch.get_num_threads()}

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
