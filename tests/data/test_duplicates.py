"""The same sample in two splits is found by content and both files are named."""

import numpy as np
import pytest
from data_helpers import make_class_folders, random_pixels, write_png
from PIL import Image

from pcevolve.data import DataError, check_disjoint, find_duplicates, read_image_folder, read_labeled_csv


def test_duplicate_across_splits_names_both_files(tmp_path):
    private = make_class_folders(tmp_path / "private", {"a": 3, "b": 3}, seed=0)
    test = make_class_folders(tmp_path / "test", {"a": 3, "b": 3}, seed=1)
    original = private / "b" / "001.png"
    # A copy under another name and class, re-encoded with different PNG settings: same pixels.
    copy = test / "a" / "renamed.png"
    Image.open(original).save(copy, format="PNG", compress_level=1)
    assert copy.read_bytes() != original.read_bytes()
    splits = {"private": read_image_folder(private), "test": read_image_folder(test)}
    (problem,) = find_duplicates(splits)
    assert problem.path == str(copy)
    assert str(original) in problem.message and "'private'" in problem.message and "'test'" in problem.message
    with pytest.raises(DataError):
        check_disjoint(splits)


def test_disjoint_splits_and_repeats_within_one_split_are_fine(tmp_path):
    private = make_class_folders(tmp_path / "private", {"a": 3, "b": 3}, seed=0)
    write_png(private / "a" / "again.png", np.asarray(Image.open(private / "a" / "000.png")))
    test = make_class_folders(tmp_path / "test", {"a": 2, "b": 2}, seed=1)
    splits = {"private": read_image_folder(private), "test": read_image_folder(test)}
    assert find_duplicates(splits) == []
    check_disjoint(splits)


def test_each_copy_in_a_later_split_is_reported(tmp_path):
    pixels = random_pixels(np.random.default_rng(7))
    folders = {}
    for seed, split in enumerate(("private", "test", "full")):
        folders[split] = make_class_folders(tmp_path / split, {"a": 2, "b": 2}, seed=seed)
        write_png(folders[split] / "a" / "shared.png", pixels)
    problems = find_duplicates({name: read_image_folder(path) for name, path in folders.items()})
    expected = [str(folders[split] / "a" / "shared.png") for split in ("test", "full")]
    assert [p.path for p in problems] == expected
    assert all(str(folders["private"] / "a" / "shared.png") in p.message for p in problems)


def test_csv_rows_duplicated_across_files(tmp_path):
    (tmp_path / "train.csv").write_text("x,y,label\n1,2,a\n3,4,a\n5,6,b\n7,8,b\n")
    (tmp_path / "test.csv").write_text("x,y,label\n9,9,a\n9,8,a\n5.0,6,b\n0,0,b\n")
    splits = {"train": read_labeled_csv(tmp_path / "train.csv"), "test": read_labeled_csv(tmp_path / "test.csv")}
    (problem,) = find_duplicates(splits)
    assert problem.path == f"{tmp_path / 'test.csv'}:row 4"
    assert f"{tmp_path / 'train.csv'}:row 4" in problem.message


def test_splits_that_may_share_are_not_reported_and_every_other_pair_still_is(tmp_path):
    # The private set and its pool may share samples (a warning, never a problem); the test set may share none.
    private = make_class_folders(tmp_path / "private", {"a": 2, "b": 2}, seed=0)
    pool = make_class_folders(tmp_path / "pool", {"x": 2}, seed=1)
    test = make_class_folders(tmp_path / "test", {"a": 2, "b": 2}, seed=2)
    Image.open(private / "a" / "000.png").save(pool / "x" / "shared.png")
    Image.open(pool / "x" / "001.png").save(test / "b" / "leak.png")
    splits = {"private": read_image_folder(private), "pool": read_image_folder(pool), "test": read_image_folder(test)}
    assert {p.path for p in find_duplicates(splits)} == {str(pool / "x" / "shared.png"), str(test / "b" / "leak.png")}
    (problem,) = find_duplicates(splits, may_share=[("pool", "private")])
    assert problem.path == str(test / "b" / "leak.png")
