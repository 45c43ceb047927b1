"""prepare_demo end to end on scikit-learn digits (bundled), on tiny MNIST-format files, and on Fashion-MNIST."""

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from pcevolve.data import (
    DataError,
    SourceNotFoundError,
    find_duplicates,
    prepare_demo,
    read_image_folder,
    read_unlabeled_images,
    write_idx,
)
from pcevolve.data import prepare as prepare_module
from pcevolve.data.hashing import sample_hash

FASHION = Path("/usr/share/datasets/fashion-mnist")


def _file_hashes(root: Path) -> dict[str, str]:
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def _leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if p.name.endswith(".partial") or ".old-" in p.name]


@pytest.fixture(scope="module")
def digits_demo(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("digits") / "demo"
    description = prepare_demo("digits", out, progress=False)
    return out, description


@pytest.fixture(scope="module")
def digit_labels_by_hash() -> dict[str, int]:
    from sklearn.datasets import load_digits

    bunch = load_digits()
    images = np.round(bunch.images * (255.0 / 16.0)).astype(np.uint8)
    return {sample_hash(image): int(label) for image, label in zip(images, bunch.target)}


def test_digits_layout_and_counts(digits_demo):
    out, description = digits_demo
    expected = ["classes.json", "dataset.json", "full", "private", "public", "test"]
    assert sorted(p.name for p in out.iterdir()) == expected
    private = read_image_folder(out / "private")
    test = read_image_folder(out / "test")
    full = read_image_folder(out / "full")
    public = read_unlabeled_images(out / "public")
    assert private.class_names == ("0", "1", "2", "3", "4")
    assert set(private.class_counts().values()) == {30}
    assert set(test.class_counts().values()) == {40}
    assert set(full.class_counts().values()) == {50}
    assert len(public) == 500 and public.image_size == (8, 8)
    assert json.loads((out / "dataset.json").read_text()) == description
    # The manifest's fingerprints are what reading the folders back gives.
    for name, data in {"private": private, "test": test, "full": full, "public": public}.items():
        assert description["splits"][name]["sha256"] == data.fingerprint()["sha256"]
    assert json.loads((out / "classes.json").read_text())["classes"][1] == {"folder": "1", "label": 1, "name": "1"}


def test_digits_splits_are_disjoint_by_content(digits_demo):
    out, _ = digits_demo
    splits = {name: read_image_folder(out / name) for name in ("private", "test", "full")}
    splits["public"] = read_unlabeled_images(out / "public")
    assert find_duplicates(splits) == []
    all_hashes = [h for data in splits.values() for h in data.sample_hashes()]
    assert len(all_hashes) == len(set(all_hashes)) == 150 + 200 + 250 + 500


def test_digits_labels_are_right_and_public_carries_none(digits_demo, digit_labels_by_hash):
    out, description = digits_demo
    private = read_image_folder(out / "private")
    assert [digit_labels_by_hash[h] for h in private.sample_hashes()] == private.labels.tolist()
    public_dir = out / "public"
    assert all(p.is_file() and re.fullmatch(r"\d{6}\.png", p.name) for p in public_dir.iterdir())
    assert "class_counts" not in description["splits"]["public"]
    public = read_unlabeled_images(public_dir)
    labels = np.array([digit_labels_by_hash[h] for h in public.sample_hashes()])
    assert np.bincount(labels, minlength=10).tolist() == [50] * 10  # in-domain: evenly over all ten classes
    assert (np.diff(labels) != 0).sum() > 300  # shuffled: file order does not follow the class


def test_digits_disjoint_public_pool(tmp_path, digit_labels_by_hash):
    prepare_demo("digits", tmp_path / "d", public="disjoint", public_size=100, full_size=0, progress=False)
    public = read_unlabeled_images(tmp_path / "d" / "public")
    labels = {digit_labels_by_hash[h] for h in public.sample_hashes()}
    assert labels == {5, 6, 7, 8, 9}
    assert not (tmp_path / "d" / "full").exists()


def test_same_seed_same_bytes_other_seed_other_draw(digits_demo, tmp_path):
    out, _ = digits_demo
    again = tmp_path / "again"
    prepare_demo("digits", again, progress=False)
    assert _file_hashes(again) == _file_hashes(out)
    other = tmp_path / "other"
    prepare_demo("digits", other, seed=1, progress=False)
    assert _file_hashes(other / "private") != _file_hashes(out / "private")
    assert read_image_folder(other / "private").fingerprint() != read_image_folder(out / "private").fingerprint()


def test_size_option_resizes(tmp_path):
    description = prepare_demo(
        "digits", tmp_path / "d", size=16, classes=(3, 7), per_class=5, test_per_class=5, full_size=0,
        public_size=20, progress=False,
    )  # fmt: skip
    data = read_image_folder(tmp_path / "d" / "private")
    assert data.samples.shape == (10, 16, 16) and data.class_names == ("3", "7")
    assert description["image"] == {"height": 16, "width": 16, "mode": "L"}


def test_too_many_samples_names_class_and_numbers_and_writes_nothing(tmp_path):
    out = tmp_path / "d"
    with pytest.raises(DataError) as excinfo:
        prepare_demo("digits", out, per_class=150, progress=False)
    messages = [str(p) for p in excinfo.value.problems]
    expected = "class 2: asked for 150 private + 40 test + 50 full = 240 images, only 177 available"
    assert any(expected in m for m in messages)
    assert not out.exists() and _leftovers(tmp_path) == []


def test_failure_while_writing_leaves_no_partial_folder(tmp_path, monkeypatch):
    real_write = prepare_module._write_png
    calls = {"n": 0}

    def failing_write(path, image):
        calls["n"] += 1
        if calls["n"] == 300:
            raise OSError("disk full (simulated)")
        real_write(path, image)

    monkeypatch.setattr(prepare_module, "_write_png", failing_write)
    out = tmp_path / "d"
    with pytest.raises(OSError, match="disk full"):
        prepare_demo("digits", out, progress=False)
    assert calls["n"] == 300
    assert not out.exists() and _leftovers(tmp_path) == []


def test_overwrite_replaces_only_a_dataset_prepared_before(digits_demo, tmp_path, monkeypatch):
    out = tmp_path / "d"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    for overwrite in (False, True):  # a folder pcevolve did not prepare is never replaced
        with pytest.raises(FileExistsError):
            prepare_demo("digits", out, overwrite=overwrite, progress=False)
    assert (out / "mine.txt").read_text() == "keep me"
    made = tmp_path / "made"
    prepare_demo("digits", made, progress=False)
    (made / "sub").mkdir()
    (made / "thesis.txt").write_text("three years")
    with pytest.raises(FileExistsError, match="sub, thesis.txt"):  # one of the user's beside the splits
        prepare_demo("digits", made, overwrite=True, progress=False)
    assert (made / "thesis.txt").read_text() == "three years" and (made / "sub").is_dir()
    (made / "thesis.txt").unlink()
    (made / "sub").rmdir()
    prepare_demo("digits", made, overwrite=True, seed=1, progress=False)
    assert (made / "dataset.json").exists() and _leftovers(tmp_path) == []
    monkeypatch.chdir(made)
    for here in (".", "..", str(tmp_path)):  # the current folder and what holds it: never emptied
        with pytest.raises(FileExistsError, match="current folder"):
            prepare_demo("digits", here, overwrite=True, progress=False)
    assert (made / "dataset.json").exists() and (tmp_path / "d" / "mine.txt").exists()
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"public": "sideways"}, "public must be"),
        ({"classes": (1, 1)}, "distinct"),
        ({"classes": (3, 12)}, "0..9"),
        ({"classes": tuple(range(10)), "public": "disjoint"}, "outside --classes"),
        ({"per_class": 1}, "at least 2"),
        ({"size": 4}, "8..1024"),
    ],
)
def test_invalid_options(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        prepare_demo("digits", tmp_path / "d", progress=False, **kwargs)
    assert not (tmp_path / "d").exists()


def test_missing_sources_say_how_to_get_them(tmp_path, monkeypatch):
    monkeypatch.delenv("PCEVOLVE_MNIST_DIR", raising=False)
    with pytest.raises(SourceNotFoundError, match="apt-get install dataset-fashion-mnist"):
        prepare_demo("fashion-mnist", tmp_path / "d", source_dir=tmp_path / "nowhere")
    with pytest.raises(SourceNotFoundError, match="PCEVOLVE_MNIST_DIR"):
        prepare_demo("mnist", tmp_path / "d")
    assert not (tmp_path / "d").exists()


def test_mnist_from_idx_files_and_duplicates_are_dropped(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    train = rng.integers(0, 256, (200, 28, 28), dtype=np.uint8)
    train_labels = np.repeat(np.arange(10, dtype=np.uint8), 20)
    test = rng.integers(0, 256, (50, 28, 28), dtype=np.uint8)
    test_labels = np.repeat(np.arange(10, dtype=np.uint8), 5)
    test[0] = train[0]  # the same image in both benchmark splits (both label 0)
    source = tmp_path / "mnist"
    write_idx(source / "train-images-idx3-ubyte.gz", train)
    write_idx(source / "train-labels-idx1-ubyte.gz", train_labels)
    write_idx(source / "t10k-images-idx3-ubyte", test)  # plain files work too
    write_idx(source / "t10k-labels-idx1-ubyte", test_labels)
    monkeypatch.setenv("PCEVOLVE_MNIST_DIR", str(source))
    out = tmp_path / "d"
    description = prepare_demo(
        "mnist", out, classes=(0, 1), per_class=5, test_per_class=4, full_size=10, public_size=40, progress=False
    )
    assert description["duplicates_removed"] == {"train": 0, "test": 1}
    assert description["splits"]["test"]["class_counts"] == {"0": 4, "1": 4}
    splits = {name: read_image_folder(out / name) for name in ("private", "test", "full")}
    splits["public"] = read_unlabeled_images(out / "public")
    assert find_duplicates(splits) == []
    with pytest.raises(DataError, match=r"class 0: asked for 5 test images, only 4 available"):
        prepare_demo("mnist", tmp_path / "e", classes=(0, 1), per_class=5, test_per_class=5, progress=False)


@pytest.mark.skipif(not (FASHION / "train-images-idx3-ubyte.gz").exists(), reason="dataset-fashion-mnist not installed")
def test_fashion_mnist_small(tmp_path):
    out = tmp_path / "fm"
    description = prepare_demo(
        "fashion-mnist", out, per_class=4, test_per_class=3, full_size=10, public_size=30, progress=False
    )
    private = read_image_folder(out / "private")
    assert private.class_names == ("0_T-shirt_top", "1_Trouser", "2_Pullover", "3_Dress", "4_Coat")
    assert private.samples.shape == (20, 28, 28)
    assert description["source"]["files"]["train-images-idx3-ubyte.gz"]["sha256"]
    assert len(list((out / "public").iterdir())) == 30


@pytest.mark.slow
@pytest.mark.skipif(not (FASHION / "train-images-idx3-ubyte.gz").exists(), reason="dataset-fashion-mnist not installed")
def test_fashion_mnist_full_default_demo(tmp_path):
    out = tmp_path / "demo"
    description = prepare_demo("fashion-mnist", out, progress=False)
    counts = {split: len(list((out / split).rglob("*.png"))) for split in ("private", "test", "full", "public")}
    assert counts == {"private": 500, "test": 5000, "full": 10_000, "public": 20_000}
    private = read_image_folder(out / "private")
    assert set(private.class_counts().values()) == {100}
    assert private.fingerprint()["sha256"] == description["splits"]["private"]["sha256"]
    # Same pixels give the same PNG bytes here (one encoder, one setting), so file hashes
    # are a fast stand-in for content hashes across all 35,500 files.
    hashes = [hashlib.sha256(p.read_bytes()).hexdigest() for p in out.rglob("*.png")]
    assert len(set(hashes)) == len(hashes) == 35_500
