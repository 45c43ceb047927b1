"""Delivery helpers: consistent-first selection and the image folder format."""

import numpy as np
import pytest
from PIL import Image

from pcevolve.data.writers import write_image_folder
from pcevolve.search.delivery import delivery_counts, select_consistent


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


def test_delivery_counts_split_the_chosen_total_by_the_noisy_counts():
    sizes = delivery_counts(np.array([9.6, 10.4, 30.0, -2.0]), per_class=100)
    assert sizes.sum() == 400 and sizes.min() >= 1  # the user's total, exactly; a negative count still gets one
    assert sizes[2] > 2.5 * sizes[0] and abs(int(sizes[0]) - int(sizes[1])) <= 8  # balance from the DP counts only
    # The same total whatever the private set's size: 10 or 100 per class deliver alike.
    assert delivery_counts(np.array([10.0, 10.0]), per_class=1000).tolist() == [1000, 1000]
    assert delivery_counts(np.array([100.0, 100.0]), per_class=1000).tolist() == [1000, 1000]
    assert delivery_counts(np.array([9.6, 0.2]), per_class=7, multiplier=10).tolist() == [100, 10]
