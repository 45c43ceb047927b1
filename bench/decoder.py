"""Decoder benchmark: training time, feature consistency and a utility probe (SPEC R6).

Run on the demo data (``make demo`` first):

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
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
import yaml
from PIL import Image
from results_file import result_path, write_results
from torch import nn

from pcevolve.config import RunConfig
from pcevolve.data import read_image_folder, read_unlabeled_images
from pcevolve.decoders import build_decoder, reencode_check, train_decoder
from pcevolve.encoders import ImageEncoder, build_encoder
from pcevolve.encoders.preprocess import to_float_images
from pcevolve.pipeline.stages import run_randomness
from pcevolve.privacy import BudgetLedger


def small_cnn(classes: int, channels: int, size: tuple[int, int], generator: torch.Generator) -> nn.Module:
    """2 conv layers + linear; weights drawn from ``generator`` (PyTorch's default bounds), no global RNG."""
    model = nn.Sequential(
        nn.Conv2d(channels, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * (size[0] // 4) * (size[1] // 4), classes),
    )
    with torch.no_grad():
        for layer in model:
            if isinstance(layer, (nn.Conv2d, nn.Linear)):
                bound = 1.0 / layer.weight[0].numel() ** 0.5
                layer.weight.uniform_(-bound, bound, generator=generator)
                layer.bias.uniform_(-bound, bound, generator=generator)
    return model


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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

    overrides = {k: yaml.safe_load(v) for k, v in (item.split("=", 1) for item in args.set)}
    if args.training:
        overrides["training"] = args.training
    elif args.dp_epsilon > 0:
        overrides.setdefault("training", "public-then-dp")
    stages = {"representation": 3.0, "release": 5.0 - args.dp_epsilon, "decoder": args.dp_epsilon, "delivery": 0.0}
    config = RunConfig.model_validate({"decoder": overrides, "seed": args.seed, "privacy": {"stages": stages}})
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
