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

**One decoder** (default): training time, feature consistency and a utility probe, on the demo data (``data/demo``,
prepared when missing):

    python bench/decoder.py                        # default DecoderConfig, default (pretrained) encoder
    python bench/decoder.py --smoke                # the same steps on tiny data, in seconds
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

**Smoke** (``--smoke``): the one-decoder mode on scikit-learn's digits (bench/smoke.py: 3 classes, 8 px, 60
private and 300 public images), a scaled-down encoder and decoder (1 epoch, width 8; ``--set`` still applies on
top), 50 held-out public images and 1 CNN epoch, and every ``--delivered`` system's run config validated (not run);
with ``--delivered``, every system run on the digits' in-domain pool with every stage scaled down (bench/smoke.py)
and judged with one CNN. Runs and results under ``--out`` or a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import smoke
import yaml
from PIL import Image
from pipeline_run import packaged, prepared, run_config
from results_file import result_path, write_results

if TYPE_CHECKING:
    import torch
    from torch import nn

# torch and pcevolve's networks are imported inside the functions that use them: --help answers at once.

#: What --smoke sets before --set: the decoder and the encoder it decodes for, scaled down.
SMOKE_DECODER = {"width": 8, "epochs": 1, "public_images": 200, "batch_size": 32, "consistency_every": 1000,
                 "dp_epochs": 1}
SMOKE_REPRESENTATION = {"input_size": 32, "proj_hidden_dim": 16, "feature_dim": 64}


def small_cnn(classes: int, channels: int, size: tuple[int, int], generator: torch.Generator) -> nn.Module:
    """2 conv layers + linear; weights drawn from ``generator`` (PyTorch's default bounds), no global RNG."""
    from torch import nn

    from pcevolve.nets.small_cnn import default_init_

    model = nn.Sequential(
        nn.Conv2d(channels, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * (size[0] // 4) * (size[1] // 4), classes),
    )
    return default_init_(model, generator)


def cnn_accuracy(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray, *,
                 seed: int, epochs: int = 15) -> float:
    """Train the fixed small CNN (Adam 1e-3, batch 32, 15 epochs) on uint8 images; test accuracy."""
    import torch
    import torch.nn.functional as F

    from pcevolve.encoders.preprocess import to_float_images

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
    """How well ``decoder`` inverts ``encoder`` on ``images``: re-encoded cosine and pixel error."""
    from pcevolve.encoders.reencode import reencode_check

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


def system_configs(pool: str) -> dict[str, dict]:
    """The run configs compared on ``pool`` (data paths filled in by :func:`run_system`)."""
    disjoint = packaged("disjoint-demo")
    conv = {"decoder": {"name": "conv"}, "search": {"basis_dim": 64, "delivery_oversample": 1.0}}
    frequencies = {**disjoint, "decoder": {"name": "conv"}}
    # The other way to learn the private shapes: DP-SGD fine-tuning of the conv generator on the private images,
    # paid from a quarter of the budget (the release keeps the rest).
    dp_tuned = {"decoder": {"name": "conv", "training": "public-then-dp"}, "search": conv["search"],
                "privacy": {"split": {"representation": 0.0, "decoder": 0.25, "release": 0.75}}}
    systems = {"conv": conv, "conv+dp": dp_tuned, "conv+frequencies": frequencies, "pixel-view": disjoint}
    if pool == "in-domain":
        systems["nearest-public"] = packaged("demo")
    return systems


def pool_data(pool: str, args: argparse.Namespace) -> Path:
    """The prepared data folder of ``pool`` (prepared when missing); with ``--smoke`` the tiny digits."""
    if args.smoke:
        return smoke.digits(args.out)
    root, options = POOLS[pool]
    return prepared(Path(root), "fashion-mnist", *options)


def run_system(config: dict, *, data: Path, name: str, seed: int, root: Path,
               tiny: bool = False) -> tuple[Path, float]:
    """``pcevolve run`` on ``config`` with ``data``'s folders (a finished run folder is reused, untimed); ``tiny``:
    every stage scaled down as in bench/smoke.py (the system's own decoder, training and search choices kept)."""
    if tiny:
        config = tiny_config(config, data=data, name=name)
    folders = {part: str(data / part) for part in ("private", "public", "test", "full")}
    return run_config({**config, "name": name, "seed": seed, "data": {**config.get("data", {}), **folders}}, root)


def tiny_config(config: dict, *, data: Path, name: str) -> dict:
    """``config`` with bench/smoke.py's data and scaled-down stages (its decoder's and search's own kind kept)."""
    small = smoke.image_config(data, name)
    search = dict(small["search"])
    if config.get("search", {}).get("pixel_frequencies"):  # at most the tiny pixel view's side (8 px)
        search["pixel_frequencies"] = min(config["search"]["pixel_frequencies"], 4)
    return smoke.merged(config, {"data": small["data"], "augment": small["augment"],
                                 "representation": small["representation"], "search": search,
                                 "decoder": {**SMOKE_DECODER, "public_images": 300}})


def judge_delivered(run: Path, test, seeds: tuple[int, ...] = CNN_SEEDS) -> dict:
    """The evaluation's CNN (one per seed) on the delivered set, tested on ``test``: overall and per class."""
    from pcevolve.data import read_image_folder
    from pcevolve.evaluation import predict, train_cnn

    delivered = read_image_folder(run / "synthetic")
    classes = len(test.class_names)
    per_seed, per_class = [], []
    for seed in seeds:
        predicted = predict(train_cnn(delivered.samples, delivered.labels, classes=classes, seed=seed), test.samples)
        per_seed.append(float(np.mean(predicted == test.labels)))
        per_class.append([float(np.mean(predicted[test.labels == k] == k)) for k in range(classes)])
    return {"cnn": float(np.mean(per_seed)), "cnn_per_seed": per_seed,
            "cnn_per_class": dict(zip(test.class_names, np.mean(per_class, axis=0).round(4).tolist(), strict=True)),
            "images": len(delivered)}


def delivered_grid(run: Path, path: Path, *, per_class: int = 12, scale: int = 3) -> None:
    """Rows = classes, ``per_class`` delivered images each (a seeded choice; fewer when a class has fewer)."""
    from pcevolve.data import read_image_folder

    delivered = read_image_folder(run / "synthetic")
    rng = np.random.default_rng(0)
    chosen = [rng.choice(rows, min(per_class, len(rows)), replace=False)
              for rows in (np.flatnonzero(delivered.labels == k) for k in range(len(delivered.class_names)))]
    width = max(len(c) for c in chosen)
    blank = np.zeros_like(delivered.samples[0])
    rows = [np.concatenate([*delivered.samples[c], *[blank] * (width - len(c))], axis=1) for c in chosen]
    canvas = np.concatenate(rows, axis=0)
    Image.fromarray(canvas).resize((canvas.shape[1] * scale, canvas.shape[0] * scale), Image.NEAREST).save(path)


def delivered_sets(args: argparse.Namespace) -> None:
    """The ``--delivered`` mode (module docstring): every pool, system and seed asked for; one row each."""
    from pcevolve.data import read_image_folder

    cnn_seeds = CNN_SEEDS[:1] if args.smoke else CNN_SEEDS
    results: dict = {"cnn_seeds": list(cnn_seeds), "rows": []}
    root = Path(args.runs_root)
    for pool in args.pools:
        data = pool_data(pool, args)
        test = read_image_folder(data / "test")
        for system, config in system_configs(pool).items():
            if args.systems and system not in args.systems:
                continue
            for seed in args.seeds:
                run, seconds = run_system(config, data=data, name=f"{pool}-{system.replace('+', '-')}-seed{seed}",
                                          seed=seed, root=root, tiny=args.smoke)
                row = {"pool": pool, "system": system, "seed": seed, "seconds": seconds,
                       **judge_delivered(run, test, cnn_seeds)}
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
    parser.add_argument("--runs-root", default="runs/bench-decoder",
                        help="where --delivered keeps its runs (--smoke: under --out)")
    parser.add_argument("--data", type=Path, default=Path("data/demo"),
                        help="a prepared image folder (private/, public/, test/); data/demo is prepared when missing")
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
    smoke.add_arguments(parser)
    args = parser.parse_args()
    smoke.results_folder(args)
    if args.smoke:
        # The digits have one pool worth running (in-domain); the heldout share and CNN epochs shrink with them.
        args.pools, args.runs_root, args.heldout = ["in-domain"], args.out / "runs", 50
        args.data = smoke.digits(args.out)
    if args.delivered:
        delivered_sets(args)
        return
    if args.smoke:
        check_systems(args)
    elif args.data == Path("data/demo"):
        prepared(args.data, "fashion-mnist")
    one_decoder(args)


def check_systems(args: argparse.Namespace) -> None:
    """Validate the run config of every ``--delivered`` pool and system, on ``args.data`` scaled down as
    :func:`run_system` would run it (a renamed setting fails here, without a run)."""
    from pcevolve.config import parse_config

    for pool in POOLS:
        for system, config in system_configs(pool).items():
            tiny = tiny_config(config, data=args.data, name=f"{pool}-{system.replace('+', '-')}-seed0")
            parse_config({**tiny, "name": "check", "seed": 0}, source=f"--delivered {pool} {system}")
    print(f"the --delivered systems' configs validate ({', '.join(POOLS)})", flush=True)


def decoder_config(args: argparse.Namespace):
    """The RunConfig of the one-decoder mode: ``--set`` and ``--training`` over the defaults (over the
    scaled-down sizes with ``--smoke``), ε 8 split 3 : 5 between representation and release, ``--dp-epsilon`` of
    the release's 5 moved to the decoder."""
    from pcevolve.config import RunConfig

    overrides = {k: yaml.safe_load(v) for k, v in (item.split("=", 1) for item in args.set)}
    if args.smoke:
        overrides = {**SMOKE_DECODER, **overrides}
    if args.training:
        overrides["training"] = args.training
    elif args.dp_epsilon > 0:
        overrides.setdefault("training", "public-then-dp")
    split = {"representation": 3.0 / 8, "release": (5.0 - args.dp_epsilon) / 8, "decoder": args.dp_epsilon / 8}
    return RunConfig.model_validate({"decoder": overrides, "seed": args.seed, "privacy": {"split": split},
                                     "representation": SMOKE_REPRESENTATION if args.smoke else {}})


def one_decoder(args: argparse.Namespace) -> None:
    """The default mode (module docstring) on ``args.data``; writes the results file and the grid."""
    import torch

    from pcevolve.data import read_image_folder, read_unlabeled_images
    from pcevolve.decoders import build_decoder, train_decoder
    from pcevolve.encoders import ImageEncoder, build_encoder
    from pcevolve.encoders.reencode import reencode_check
    from pcevolve.privacy import BudgetLedger
    from pcevolve.randomness import run_randomness

    config = decoder_config(args)
    cnn_epochs = 1 if args.smoke else 15
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
                                               seed=args.seed, epochs=cnn_epochs),
        "cnn_on_real_private": cnn_accuracy(private.samples, private.labels, test.samples, test.labels,
                                            seed=args.seed, epochs=cnn_epochs),
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
