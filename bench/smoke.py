"""What every bench's ``--smoke`` mode shares: the flags, where results go, and tiny data and runs built on the fly.

A smoke run takes a bench's own code path end to end on data small enough to finish in seconds — scikit-learn's
digits (offline, 3 classes, 8 px), a table of 60 rows, 40 short texts — with every stage scaled down. Its numbers
mean nothing: it exists so that a renamed setting or a changed API breaks ``tests/test_benches.py``, not a
reader's run.

Everything a smoke run writes goes under ``--out`` (default: a new temporary folder, printed), never into
``bench/results/``: the results files, the tiny data (``OUT/data/``) and the tiny run folders (``OUT/runs/``).
Benches given the same ``--out`` share the tiny data and reuse a finished tiny run, as the tests do.

Imports of pcevolve happen inside the functions: ``--help`` of a bench must not wait for torch.
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
from pathlib import Path
from typing import Any

import results_file
from pipeline_run import run_config

#: Digit classes of the tiny image task.
DIGIT_CLASSES = (0, 1, 2)
#: Classes of the tiny text task (the text demo's).
TEXT_CLASSES = ("fresh", "rotten")
#: The tiny image run every image bench's smoke reads: its name under ``OUT/runs`` and its seed (ε is the default 8).
TINY_RUN, TINY_SEED = "tiny", 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--smoke`` and ``--out`` to a bench's parser."""
    parser.add_argument("--smoke", action="store_true",
                        help="run this bench's code path end to end on tiny data in seconds (numbers mean nothing); "
                             "results go under --out")
    parser.add_argument("--out", type=Path, default=None,
                        help="write results here instead of bench/results/ (with --smoke: also the tiny data and "
                             "runs; default a new temporary folder)")


def results_folder(args: argparse.Namespace) -> Path | None:
    """Where this invocation writes: ``--out``, or a new temporary folder for ``--smoke``, else ``None`` (the
    default ``bench/results/``). The results files follow it (:func:`results_file.redirect`)."""
    if args.out is None and not args.smoke:
        return None
    folder = args.out if args.out is not None else Path(tempfile.mkdtemp(prefix="pcevolve-bench-smoke-"))
    folder.mkdir(parents=True, exist_ok=True)
    results_file.redirect(folder)
    args.out = folder
    return folder


def parse_run_folders(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments of a bench that reads finished run folders (a positional ``runs``) or makes its own
    (``--smoke``): exactly one of the two, else the usage; the results folder set (:func:`results_folder`)."""
    args = parser.parse_args(argv)
    if bool(args.runs) == args.smoke:
        parser.error("give run folders or --smoke")
    results_folder(args)
    return args


def digits(out: Path) -> Path:
    """``OUT/data/digits``: a demo folder (private, public, test, full) cut from scikit-learn's digits at their
    native 8 px, so that delivered pixels still match the source's (bench/labels.py reads them back)."""
    from pcevolve.data import prepare_demo

    root = out / "data" / "digits"
    if not (root / "dataset.json").exists():
        # The folder appears atomically, so a half-written one is never mistaken for a finished one.
        prepare_demo("digits", root, classes=DIGIT_CLASSES, per_class=20, public_size=300, test_per_class=10,
                     full_size=30, size=None, progress=False, overwrite=root.exists())
    return root


def image_config(data: Path, name: str) -> dict[str, Any]:
    """A run config on :func:`digits` with every stage scaled down (the whole ε on the release, as the demo)."""
    return {
        "name": name, "seed": TINY_SEED,
        "data": {part: str(data / part) for part in ("private", "public", "test", "full")} | {"image_size": 8},
        "augment": {"flip": False},  # digits are oriented: a mirrored digit is no digit
        "representation": {**TINY_REPRESENTATION, "public_pool": 100, "pixel_view": 8},
        "decoder": {"name": "nearest-public", "public_images": 300},
        "search": _TINY_SEARCH,
        "privacy": {"split": {"representation": 0.0, "release": 1.0}},
    }


#: The representation at its smallest. A batch of all 60 private images (sampling rate 1) when it is trained under DP:
#: calibrating σ for a subsampled Gaussian takes the accountant seconds, for the full batch a moment.
TINY_REPRESENTATION = {"input_size": 32, "proj_hidden_dim": 16, "feature_dim": 64, "epochs": 1, "public_epochs": 1,
                       "views_per_sample": 2, "batch_size": 60, "public_batch_size": 32}
_TINY_SEARCH = {"population": 4, "elite": 2, "generations": 2, "coarse_generations": 1, "patience": 2,
                "candidate_per_class": 10, "eval_seeds": 1, "basis_dim": 8, "roundtrip_public": 100,
                "roundtrip_every": 2, "roundtrip_per_class": 4, "rff_features": 16, "validation_per_class": 10,
                "synthetic_per_class": 10, "top_candidates": 2, "polynomial_every": 3, "delivery_oversample": 1.0}


def image_run(out: Path) -> Path:
    """The finished tiny run folder ``OUT/runs/tiny`` of :func:`image_config` (``pcevolve run``; reused once
    finished)."""
    return run_config(image_config(digits(out), TINY_RUN), out / "runs")[0]


# ------------------------------------------------------------------------------------------------------------ tables
TABLE_HEADER = ("amount", "rate", "kind", "region", "count")


def _table_rows(rng: Any, n: int, fraud: bool) -> list[list[str]]:
    """Rows whose classes differ in two columns, every value inside fixed bounds (the public table spans them)."""
    amount = rng.integers(100, 900, n) + (300 if fraud else 0)
    rate = (rng.integers(80, 160, n) + (40 if fraud else 0)) / 10
    kind = rng.choice(["card", "wire", "cash"], n, p=[0.2, 0.7, 0.1] if fraud else [0.7, 0.2, 0.1])
    region = rng.choice(["north", "south", "east", "west"], n)
    count = rng.integers(0, 5, n)
    return [[str(a), f"{r:.1f}", k, g, str(c)] for a, r, k, g, c in zip(amount, rate, kind, region, count)]


def _write_csv(path: Path, rows: list[list[str]], labels: list[str] | None = None) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([*TABLE_HEADER, *(["label"] if labels else [])])
        for i, row in enumerate(rows):
            writer.writerow(row + ([labels[i]] if labels else []))


def table(out: Path, name: str = "table") -> Path:
    """``OUT/data/NAME``: ``private.csv`` (25 fraud, 35 ok), ``public.csv`` (400 unlabelled), ``test.csv`` (80)
    and ``schema.yaml`` drafted from the public table (the layout ``pcevolve data prepare-table`` writes). A bench
    that drafts the schema with another pcevolve (bench/poolfree_lab.py's pinned one) names its own folder."""
    import numpy as np

    from pcevolve.data.table_schema import draft_schema

    root = out / "data" / name
    if (root / "schema.yaml").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    _write_csv(root / "private.csv", _table_rows(rng, 25, True) + _table_rows(rng, 35, False),
               ["fraud"] * 25 + ["ok"] * 35)
    public = _table_rows(rng, 80, True) + _table_rows(rng, 320, False)
    public += [["100", "8.0", "card", "north", "0"], ["1199", "19.9", "cash", "west", "4"]]  # the bounds
    _write_csv(root / "public.csv", [public[i] for i in rng.permutation(len(public))])
    _write_csv(root / "test.csv", _table_rows(rng, 40, True) + _table_rows(rng, 40, False),
               ["fraud"] * 40 + ["ok"] * 40)
    draft_schema(root / "public.csv").save(root / "schema.yaml")  # written last: it marks the folder finished
    return root


def table_config(data: Path, name: str) -> dict[str, Any]:
    """A tabular run config on :func:`table`, every stage scaled down."""
    return {
        "name": name, "seed": 5,
        "data": {"modality": "tabular", "private": str(data / "private.csv"), "public": str(data / "public.csv"),
                 "test": str(data / "test.csv"), "full": None, "schema_file": str(data / "schema.yaml"),
                 "classes": ["fraud", "ok"]},
        "representation": {"feature_dim": 64, "proj_hidden_dim": 32, "public_epochs": 1, "public_batch_size": 64},
        "decoder": {"name": "nearest-public", "public_images": 400},
        "search": _TINY_SEARCH,
        "privacy": {"split": {"representation": 0.0, "release": 1.0}},
    }


# ------------------------------------------------------------------------------------------------------------- texts
_GOOD = ("a warm, funny and moving film", "brilliant acting and a clever script", "a joy from start to finish",
         "beautifully shot and deeply felt", "smart, tender and wonderfully made", "a delightful, charming story")
_BAD = ("a dull, lifeless and tedious mess", "clumsy writing and wooden acting", "a chore from start to finish",
        "badly shot and painfully slow", "stale, silly and badly made", "a tiresome, pointless story")
_FILLER = ("about a family", "set in a small town", "with a strong cast", "about two brothers", "in the city")


def _texts(rng: Any, n: int, words: tuple[str, ...]) -> list[str]:
    return [f"{words[rng.integers(len(words))].capitalize()} {_FILLER[rng.integers(len(_FILLER))]}, "
            f"number {rng.integers(10_000)}." for _ in range(n)]


def _write_jsonl(path: Path, texts: list[str], labels: list[str] | None = None) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for i, text in enumerate(texts):
            handle.write(json.dumps({"text": text} | ({"label": labels[i]} if labels else {})) + "\n")


def texts(out: Path) -> Path:
    """``OUT/data/text``: ``private.jsonl`` (20 fresh, 20 rotten), ``public.jsonl`` (200 unlabelled) and
    ``test.jsonl`` (40): the text demo's layout and class names."""
    import numpy as np

    root = out / "data" / "text"
    if (root / "test.jsonl").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(11)
    _write_jsonl(root / "private.jsonl", _texts(rng, 20, _GOOD) + _texts(rng, 20, _BAD),
                 [TEXT_CLASSES[0]] * 20 + [TEXT_CLASSES[1]] * 20)
    public = _texts(rng, 100, _GOOD) + _texts(rng, 100, _BAD)
    _write_jsonl(root / "public.jsonl", [public[i] for i in rng.permutation(len(public))])
    _write_jsonl(root / "test.jsonl", _texts(rng, 20, _GOOD) + _texts(rng, 20, _BAD),
                 [TEXT_CLASSES[0]] * 20 + [TEXT_CLASSES[1]] * 20)  # written last: it marks the folder finished
    return root


def text_overrides(data: Path) -> dict[str, Any]:
    """What a smoke run changes in ``configs/text-demo.yaml``: the data paths and every stage's size."""
    return {"data": {"private": str(data / "private.jsonl"), "public": str(data / "public.jsonl"),
                     "test": str(data / "test.jsonl")},
            "decoder": {"public_images": 200}, "search": _TINY_SEARCH}


def merged(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes`` applied section by section (a nested mapping is merged, anything else replaced)."""
    out = dict(base)
    for key, value in changes.items():
        out[key] = merged(out.get(key) or {}, value) if isinstance(value, dict) else value
    return out
