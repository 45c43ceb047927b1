"""LabeledDataset / UnlabeledImages: invariants, subsets, stratified splits, fingerprints."""

import json

import numpy as np
import pytest

from pcevolve.data import DataError, LabeledDataset, UnlabeledImages


def _images(n_per_class=(10, 6, 3), seed=0):
    rng = np.random.default_rng(seed)
    labels = np.concatenate([np.full(n, c) for c, n in enumerate(n_per_class)])
    samples = rng.integers(0, 256, (len(labels), 4, 4), dtype=np.uint8)
    return LabeledDataset(
        samples=samples,
        labels=labels,
        class_names=tuple(f"c{i}" for i in range(len(n_per_class))),
        modality="image",
        sources=tuple(f"img{i}.png" for i in range(len(labels))),
    )


def test_basic_accessors():
    data = _images()
    assert len(data) == 19
    assert data.class_counts() == {"c0": 10, "c1": 6, "c2": 3}
    assert data.labels.dtype == np.int64
    assert data.image_mode == "L" and data.image_size == (4, 4)


def test_arrays_are_read_only_but_the_callers_are_not():
    samples = np.zeros((2, 3, 3), dtype=np.uint8)
    data = LabeledDataset(samples, np.array([0, 1]), ("a", "b"), "image", ("x", "y"))
    with pytest.raises(ValueError):
        data.samples[0, 0, 0] = 1
    samples[0, 0, 0] = 7  # the caller's own array stays writable
    assert data.samples[0, 0, 0] == 7


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"labels": np.array([0, 5])}, "labels must lie"),
        ({"sources": ("only-one",)}, "differ in length"),
        ({"samples": np.zeros((2, 3, 3), dtype=np.float32)}, "uint8"),
        ({"class_names": ("a", "a")}, "unique"),
        ({"modality": "audio"}, "modality"),
    ],
)
def test_invalid_construction_is_refused(kwargs, match):
    base = dict(
        samples=np.zeros((2, 3, 3), dtype=np.uint8),
        labels=np.array([0, 1]),
        class_names=("a", "b"),
        modality="image",
        sources=("x", "y"),
    )
    with pytest.raises(ValueError, match=match):
        LabeledDataset(**{**base, **kwargs})


def test_tabular_requires_finite_floats_and_names_features():
    data = LabeledDataset(np.ones((2, 3)), np.array([0, 1]), ("a", "b"), "tabular", ("r2", "r3"))
    assert data.feature_names == ("feature_0", "feature_1", "feature_2")
    with pytest.raises(ValueError, match="finite"):
        LabeledDataset(np.array([[np.nan], [1.0]]), np.array([0, 1]), ("a", "b"), "tabular", ("r2", "r3"))


def test_subset_keeps_classes_and_sources():
    data = _images()
    part = data.subset([0, 18, 11])
    assert part.sources == ("img0.png", "img18.png", "img11.png")
    assert part.class_counts() == {"c0": 1, "c1": 1, "c2": 1}
    assert np.array_equal(part.samples[1], data.samples[18])
    assert len(data.subset(data.labels == 2)) == 3
    with pytest.raises(IndexError):
        data.subset([19])


def test_split_is_stratified_disjoint_complete_and_seeded():
    data = _images()
    first, rest = data.split(0.5, seed=3)
    assert first.class_counts() == {"c0": 5, "c1": 3, "c2": 2}  # floor(0.5*3 + 0.5) = 2
    assert sorted(first.sources + rest.sources) == sorted(data.sources)
    assert not set(first.sources) & set(rest.sources)
    again, _ = data.split(0.5, seed=3)
    other, _ = data.split(0.5, seed=4)
    assert again.sources == first.sources
    assert other.sources != first.sources


def test_split_keeps_every_class_on_both_sides():
    data = _images((2, 2, 10))
    first, rest = data.split(0.1, seed=0)
    assert all(count >= 1 for count in first.class_counts().values())
    assert all(count >= 1 for count in rest.class_counts().values())
    with pytest.raises(ValueError):
        data.split(1.0, seed=0)


def test_fingerprint_is_content_based_order_free_and_holds_no_content():
    data = _images()
    fingerprint = data.fingerprint()
    assert fingerprint["class_counts"] == {"c0": 10, "c1": 6, "c2": 3}
    assert fingerprint["n_samples"] == 19 and len(fingerprint["sha256"]) == 64
    # Order and file names do not matter ...
    shuffled = data.subset(np.random.default_rng(0).permutation(len(data)))
    renamed = LabeledDataset(data.samples, data.labels, data.class_names, "image", tuple(f"z{i}" for i in range(19)))
    assert shuffled.fingerprint() == fingerprint == renamed.fingerprint()
    # ... content and labels do.
    changed = data.samples.copy()
    changed[0, 0, 0] ^= 1
    assert LabeledDataset(changed, data.labels, data.class_names, "image", data.sources).fingerprint() != fingerprint
    relabelled = data.labels.copy()
    relabelled[0] = 1
    other = LabeledDataset(data.samples, relabelled, data.class_names, "image", data.sources)
    assert other.fingerprint() != fingerprint
    # JSON-serialisable and far smaller than the data.
    assert len(json.dumps(fingerprint)) < 400


def test_unlabeled_images():
    rng = np.random.default_rng(0)
    pool = UnlabeledImages(rng.integers(0, 256, (5, 4, 4, 3), dtype=np.uint8), tuple(f"{i}.png" for i in range(5)))
    assert len(pool) == 5 and pool.image_mode == "RGB" and pool.image_size == (4, 4)
    assert pool.subset([4, 0]).sources == ("4.png", "0.png")
    assert pool.fingerprint()["sha256"] == pool.subset([4, 3, 2, 1, 0]).fingerprint()["sha256"]
    with pytest.raises(ValueError):
        UnlabeledImages(np.zeros((2, 4, 4, 4), dtype=np.uint8), ("a", "b"))


def test_many_problems_of_one_kind_show_ten_and_count_the_rest():
    from pcevolve.data.errors import DataProblem, problem_lines

    many = [DataProblem(f"pool/{i:03d}.png", "image outside a class folder") for i in range(25)]
    lines = problem_lines([*many[:12], DataProblem("pool", "no class folders found"), *many[12:]])
    assert lines[:10] == [f"pool/{i:03d}.png: image outside a class folder" for i in range(10)]
    assert lines[10] == "… and 15 more with the same problem: image outside a class folder"
    assert lines[11:] == ["pool: no class folders found"]
    assert problem_lines(many[:10]) == [str(p) for p in many[:10]]  # ten or fewer: every one
    error = DataError(many)
    assert len(error.problems) == 25 and str(error).startswith("25 problems in the data:")
    assert len(str(error).splitlines()) == 1 + 11
