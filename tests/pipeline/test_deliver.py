"""Delivery helpers: consistent-first selection and the image folder format."""

import numpy as np
import pytest
from PIL import Image

from pcevolve.pipeline.deliver import select_consistent, write_image_folder


def test_select_consistent_prefers_samples_back_in_their_class_and_keeps_counts():
    labels = np.array([0, 0, 0, 1, 1, 1, 1])
    reencoded = np.array([1, 0, 0, 1, 0, 0, 1])
    keep = select_consistent(labels, reencoded, np.array([2, 3]))
    assert keep.tolist() == [1, 2, 3, 4, 6]  # class 0: the two consistent; class 1: two consistent + first other
    assert select_consistent(labels, reencoded, np.array([0, 0])).tolist() == []
    with pytest.raises(ValueError, match="class 0 has 3 samples"):
        select_consistent(labels, reencoded, np.array([4, 1]))


def test_write_image_folder_writes_pngs_per_class_and_replaces_atomically(tmp_path):
    samples = (np.arange(4 * 6 * 6) % 255).astype(np.uint8).reshape(4, 6, 6)
    labels = np.array([0, 1, 1, 0])
    target = write_image_folder(tmp_path / "synthetic", samples, labels, ["a", "b"])
    assert sorted(p.name for p in (target / "a").iterdir()) == ["a_00000.png", "a_00001.png"]
    np.testing.assert_array_equal(np.asarray(Image.open(target / "b" / "b_00001.png")), samples[2])
    with pytest.raises(ValueError):
        write_image_folder(tmp_path / "synthetic", samples.astype(np.float32), labels, ["a", "b"])
    assert sorted(p.name for p in (target / "a").iterdir()) == ["a_00000.png", "a_00001.png"]  # untouched
