"""Decoder benchmark (SPEC R6), two modes.

**Delivered sets** (``--delivered``): whole runs (``pcevolve run``, secure noise, ε 8) with each decoder on each
kind of public pool, and the set each delivers judged the way ``pcevolve evaluate`` judges it — the evaluation's
small CNN (three seeds) trained on the delivered images, tested on the data's ``test/`` folder, overall and per
class — plus a grid of delivered images per class:

    python bench/decoder.py --delivered                         # both pools, every decoder, seed 0
    python bench/decoder.py --delivered --pools disjoint --seeds 0 1 2

Pools: ``disjoint`` (``pcevolve data prepare fashion-mnist --public disjoint``: the public pool holds none of the
private classes) and ``in-domain`` (the demo's data). Systems per pool: ``conv`` (the generator trained on the
public pool, 64 principal directions), ``conv+dp`` (the same, then fine-tuned under DP-SGD on the private
images with a quarter of ε), ``conv+frequencies`` (the same generator in the disjoint demo's basis with
the pixel view's low frequencies), ``pixel-view`` (``configs/disjoint-demo.yaml``: the pixel-view decoder and that
basis) and, in-domain only, ``nearest-public`` (``configs/demo.yaml``: retrieval). Missing data folders are
prepared first. Writes ``bench/results/decoder-delivered[-TAG].json`` and, per pool and system,
``bench/results/decoder-delivered[-TAG]-POOL-SYSTEM-seedS.png``. Reads the test folder: evaluation only.

**One decoder** (default): training time, feature consistency and a utility probe, on the demo data:

    python bench/decoder.py                        # default DecoderConfig, default (pretrained) encoder
    python bench/decoder.py --set width=48 --set epochs=8 --tag w48
    python bench/decoder.py --dp-epsilon 1 --tag dp1   # then DP-SGD fine-tuning on private/ (ε_decoder = 1)
    python bench/decoder.py --training dp --dp-epsilon 2 --set dp_epochs=30 --set dp_learning_rate=2e-3 --tag scratch

Writes ``bench/results/decoder[-TAG].json`` and ``bench/results/decoder[-TAG]_grid.png`` (for each
class, 8 test images, each original next to decode(encode(image))).

* Consistency: mean cosine(feature, projected feature of decode(feature)) on held-out public
  images (never trained on) and on ``test/``; for scale, the mean cosine between two different
  real images and between an image and its nearest other real image.
* Utility probe: the private images' projected features are decoded, a small CNN (fixed
  hyper-parameters) is trained on those 500 decoded images with their labels and tested on
  ``test/`` — the ceiling of any synthetic set through this decoder. The same CNN trained on the
  500 real private images is the reference. Evaluation only; nothing here is a DP release.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
import yaml
from PIL import Image
from pipeline_run import run_config
from results_file import result_path, write_results
from torch import nn

from pcevolve.config import RunConfig
from pcevolve.data import read_image_folder, read_unlabeled_images
from pcevolve.decoders import build_decoder, reencode_check, train_decoder
from pcevolve.encoders import ImageEncoder, build_encoder
from pcevolve.encoders.preprocess import to_float_images
from pcevolve.evaluation import predict, train_cnn
from pcevolve.nets.small_cnn import default_init_
from pcevolve.pipeline.stages import run_randomness
from pcevolve.privacy import BudgetLedger


def small_cnn(classes: int, channels: int, size: tuple[int, int], generator: torch.Generator) -> nn.Module:
    """2 conv layers + linear; weights drawn from ``generator`` (PyTorch's default bounds), no global RNG."""
    model = nn.Sequential(
        nn.Conv2d(channels, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * (size[0] // 4) * (size[1] // 4), classes),
    )
    return default_init_(model, generator)


def cnn_accuracy(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray, *,
                 seed: int, epochs: int = 15) -> float:
    """Train the fixed small CNN (Adam 1e-3, batch 32, 15 epochs) on uint8 images; test accuracy."""
    generator = torch.Generator().manual_seed(seed)
    x, y = to_float_images(train_x), torch.as_tensor(train_y, dtype=torch.long)
    model = small_cnn(int(max(train_y.max(), test_y.max())) + 1, x.shape[1], tuple(x.shape[2:]), generator)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=generator)
        for start in range(0, len(x), 32):
            rows = order[start : start + 32]
            loss = F.cross_entropy(model(x[rows]), y[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    model.eval()
    with torch.no_grad():
        predicted = model(to_float_images(test_x)).argmax(1).numpy()
    return float((predicted == test_y).mean())


def consistency(encoder, decoder, images: np.ndarray) -> dict[str, float]:
    _, feats = encoder.encode_both(images, batch_size=256)
    decoded = decoder.decode(feats)
    check = reencode_check(encoder, decoded, feats)
    mae = float(np.abs(decoded.astype(np.float32) - images.astype(np.float32)).mean())
    return {"mean_cosine": float(check.cosine.mean()), "median_cosine": float(np.median(check.cosine)),
            "pixel_mae": mae}


def feature_scale(feats: np.ndarray) -> dict[str, float]:
    unit = feats / np.linalg.norm(feats, axis=1, keepdims=True)
    sims = unit @ unit.T
    np.fill_diagonal(sims, np.nan)
    return {"mean_cosine_between_real": float(np.nanmean(sims)),
            "mean_cosine_to_nearest_real": float(np.nanmax(sims, axis=1).mean())}


def grid_png(path: Path, test, decoded: np.ndarray, *, per_class: int = 8, scale: int = 3) -> None:
    """Rows = classes; each row: per_class pairs (original | decoded), with a gap between pairs."""
    h, w = test.samples.shape[1:3]
    classes = sorted(set(test.labels.tolist()))
    gap = 2
    canvas = np.full((len(classes) * (h + gap), per_class * (2 * w + gap)), 128, np.uint8)
    for r, label in enumerate(classes):
        rows = np.flatnonzero(test.labels == label)[:per_class]
        for c, i in enumerate(rows):
            y0, x0 = r * (h + gap), c * (2 * w + gap)
            canvas[y0 : y0 + h, x0 : x0 + w] = test.samples[i]
            canvas[y0 : y0 + h, x0 + w : x0 + 2 * w] = decoded[i]
    image = Image.fromarray(canvas).resize((canvas.shape[1] * scale, canvas.shape[0] * scale), Image.NEAREST)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)


# --- delivered sets ---------------------------------------------------------------------------------------------

POOLS = {"disjoint": ("data/disjoint", ["--public", "disjoint"]), "in-domain": ("data/demo", [])}
CNN_SEEDS = (0, 1, 2)


def _packaged(name: str) -> dict:
    return yaml.safe_load(Path(f"configs/{name}.yaml").read_text(encoding="utf-8"))


def system_configs(pool: str) -> dict[str, dict]:
    """The run configs compared on ``pool`` (data paths filled in by :func:`run_system`)."""
    disjoint = _packaged("disjoint-demo")
    conv = {"decoder": {"name": "conv"}, "search": {"basis_dim": 64, "delivery_oversample": 1.0}}
    frequencies = {**disjoint, "decoder": {"name": "conv"}}
    # The other way to learn the private shapes: DP-SGD fine-tuning of the conv generator on the private images,
    # paid from a quarter of the budget (the release keeps the rest).
    dp_tuned = {"decoder": {"name": "conv", "training": "public-then-dp"}, "search": conv["search"],
                "privacy": {"split": {"representation": 0.0, "decoder": 0.25, "release": 0.75}}}
    systems = {"conv": conv, "conv+dp": dp_tuned, "conv+frequencies": frequencies, "pixel-view": disjoint}
    if pool == "in-domain":
        systems["nearest-public"] = _packaged("demo")
    return systems


def prepared(pool: str) -> Path:
    root, options = POOLS[pool]
    if not (Path(root) / "dataset.json").exists():
        subprocess.run([sys.executable, "-m", "pcevolve.cli.main", "data", "prepare", "fashion-mnist", "--out", root,
                        *options], check=True, stdout=subprocess.DEVNULL)
    return Path(root)


def run_system(config: dict, *, data: Path, name: str, seed: int, root: Path) -> tuple[Path, float]:
    """``pcevolve run`` on ``config`` with ``data``'s folders (a finished run folder is reused, untimed)."""
    folders = {part: str(data / part) for part in ("private", "public", "test", "full")}
    return run_config({**config, "name": name, "seed": seed, "data": {**config.get("data", {}), **folders}}, root)


def judge_delivered(run: Path, test) -> dict:
    """The evaluation's CNN (three seeds) on the delivered set, tested on ``test``: overall and per class."""
    delivered = read_image_folder(run / "synthetic")
    classes = len(test.class_names)
    per_seed, per_class = [], []
    for seed in CNN_SEEDS:
        predicted = predict(train_cnn(delivered.samples, delivered.labels, classes=classes, seed=seed), test.samples)
        per_seed.append(float(np.mean(predicted == test.labels)))
        per_class.append([float(np.mean(predicted[test.labels == k] == k)) for k in range(classes)])
    return {"cnn": float(np.mean(per_seed)), "cnn_per_seed": per_seed,
            "cnn_per_class": dict(zip(test.class_names, np.mean(per_class, axis=0).round(4).tolist(), strict=True)),
            "images": len(delivered)}


def delivered_grid(run: Path, path: Path, *, per_class: int = 12, scale: int = 3) -> None:
    """Rows = classes, ``per_class`` delivered images each (a seeded choice)."""
    delivered = read_image_folder(run / "synthetic")
    rng = np.random.default_rng(0)
    rows = [np.concatenate(list(delivered.samples[rng.choice(np.flatnonzero(delivered.labels == k), per_class,
                                                             replace=False)]), axis=1)
            for k in range(len(delivered.class_names))]
    canvas = np.concatenate(rows, axis=0)
    Image.fromarray(canvas).resize((canvas.shape[1] * scale, canvas.shape[0] * scale), Image.NEAREST).save(path)


def delivered_sets(args: argparse.Namespace) -> None:
    results: dict = {"cnn_seeds": list(CNN_SEEDS), "rows": []}
    root = Path(args.runs_root)
    for pool in args.pools:
        data = prepared(pool)
        test = read_image_folder(data / "test")
        for system, config in system_configs(pool).items():
            if args.systems and system not in args.systems:
                continue
            for seed in args.seeds:
                run, seconds = run_system(config, data=data, name=f"{pool}-{system.replace('+', '-')}-seed{seed}",
                                          seed=seed, root=root)
                row = {"pool": pool, "system": system, "seed": seed, "seconds": seconds, **judge_delivered(run, test)}
                grid = result_path("decoder-delivered", args.tag, f"-{pool}-{system.replace('+', '-')}-seed{seed}.png")
                delivered_grid(run, grid)
                row["grid"] = grid.as_posix()
                results["rows"].append(row)
                print(json.dumps(row), flush=True)
                write_results(results, "decoder-delivered", args.tag)  # after every row: a stopped bench keeps them
    print(f"wrote {result_path('decoder-delivered', args.tag)}")


# --- one decoder --------------------------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delivered", action="store_true", help="whole runs per pool and decoder (see above)")
    parser.add_argument("--pools", nargs="+", choices=sorted(POOLS), default=["disjoint", "in-domain"])
    parser.add_argument("--systems", nargs="+", default=None, help="only these systems (default: all)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0], help="run seeds (--delivered)")
    parser.add_argument("--runs-root", default="runs/bench-decoder", help="where --delivered keeps its runs")
    parser.add_argument("--data", default="data/demo")
    parser.add_argument("--set", action="append", default=[], help="decoder config override KEY=VALUE")
    parser.add_argument("--heldout", type=int, default=500, help="public images held out of training")
    parser.add_argument("--dp-epsilon", type=float, default=0.0,
                        help="> 0: decoder-stage ε (taken from fitness) for DP training on private/")
    parser.add_argument("--training", choices=["public", "public-then-dp", "dp"], default=None,
                        help="default: public, or public-then-dp when --dp-epsilon > 0")
    parser.add_argument("--encoder", default=None, help="folder of a saved encoder (bench/encoder.py --save); "
                        "default: the pretrained backbone with an untrained projection head")
    parser.add_argument("--tag", default="")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.delivered:
        delivered_sets(args)
        return

    overrides = {k: yaml.safe_load(v) for k, v in (item.split("=", 1) for item in args.set)}
    if args.training:
        overrides["training"] = args.training
    elif args.dp_epsilon > 0:
        overrides.setdefault("training", "public-then-dp")
    split = {"representation": 3.0 / 8, "release": (5.0 - args.dp_epsilon) / 8, "decoder": args.dp_epsilon / 8}
    config = RunConfig.model_validate({"decoder": overrides, "seed": args.seed, "privacy": {"split": split}})
    root = Path(args.data)
    public = read_unlabeled_images(root / "public").samples
    private = read_image_folder(root / "private")
    test = read_image_folder(root / "test")
    order = np.random.default_rng(args.seed).permutation(len(public))
    heldout, pool = public[order[: args.heldout]], public[order[args.heldout :]]

    encoder = (ImageEncoder.load(args.encoder) if args.encoder
               else build_encoder(config.representation, seed=args.seed, sample_shape=public.shape[1:])).eval()
    results: dict = {"config": config.decoder.model_dump(), "threads": torch.get_num_threads(),
                     "public_pool": int(len(pool)), "heldout_public": int(len(heldout))}
    untrained = build_decoder(config.decoder, feature_dim=encoder.feature_dim, sample_shape=public.shape[1:],
                              seed=args.seed)
    results["untrained_heldout_public"] = consistency(encoder, untrained, heldout)

    started = time.perf_counter()
    trained = train_decoder(config.decoder, encoder=encoder, sample_shape=public.shape[1:], public_samples=pool,
                            private_samples=private.samples, ledger=BudgetLedger.from_config(config.privacy),
                            noise=run_randomness(config).noise("decoder"), seed=args.seed,
                            progress=sys.stderr.isatty())
    decoder = trained.decoder
    results["training_seconds"] = time.perf_counter() - started
    results["training"] = trained.to_json()
    results["heldout_public"] = consistency(encoder, decoder, heldout)
    results["test"] = consistency(encoder, decoder, test.samples)

    _, test_feats = encoder.encode_both(test.samples, batch_size=256)
    results["feature_scale_test"] = feature_scale(test_feats)
    _, private_feats = encoder.encode_both(private.samples, batch_size=256)
    centroids = np.stack([private_feats[private.labels == k].mean(0) for k in range(len(private.class_names))])
    test_decoded = decoder.decode(test_feats)
    check = reencode_check(encoder, test_decoded, test_feats, centroids=centroids)
    real_classes = np.argmax((test_feats / np.linalg.norm(test_feats, axis=1, keepdims=True))
                             @ (centroids / np.linalg.norm(centroids, axis=1, keepdims=True)).T, axis=1)
    results["nearest_centroid_test"] = {"decoded": check.agreement(test.labels),
                                        "real": float((real_classes == test.labels).mean())}

    private_decoded = decoder.decode(private_feats, private.labels)
    started = time.perf_counter()
    results["utility_probe"] = {
        "cnn_on_decoded_private": cnn_accuracy(private_decoded, private.labels, test.samples, test.labels,
                                               seed=args.seed),
        "cnn_on_real_private": cnn_accuracy(private.samples, private.labels, test.samples, test.labels,
                                            seed=args.seed),
    }
    results["utility_probe_seconds"] = time.perf_counter() - started
    results["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    grid_png(result_path("decoder", args.tag, "_grid.png"), test, test_decoded)
    out = write_results(results, "decoder", args.tag)
    print(json.dumps({k: v for k, v in results.items() if k != "config"}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
