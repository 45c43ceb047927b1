"""IDX reader: round trips, header validation, and the real Fashion-MNIST files when installed."""

import gzip
from pathlib import Path

import numpy as np
import pytest

from pcevolve.data import DataError, read_idx, read_idx_dataset, write_idx

FASHION = Path("/usr/share/datasets/fashion-mnist")


@pytest.mark.parametrize("name", ["x-idx3-ubyte", "x-idx3-ubyte.gz"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.float32, np.float64])
def test_round_trip(tmp_path, name, dtype):
    array = (np.arange(2 * 3 * 4) - 5).astype(dtype).reshape(2, 3, 4)
    if dtype == np.uint8:
        array = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    path = write_idx(tmp_path / name, array)
    assert (path.read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")
    back = read_idx(path)
    assert back.dtype == np.dtype(dtype) and np.array_equal(back, array)


def test_known_bytes(tmp_path):
    # Header of a 2-image 2x3 uint8 file, written by hand as the MNIST page describes it.
    raw = bytes([0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 3]) + bytes(range(12))
    path = tmp_path / "hand-idx3-ubyte"
    path.write_bytes(raw)
    assert read_idx(path).tolist() == [[[0, 1, 2], [3, 4, 5]], [[6, 7, 8], [9, 10, 11]]]
    gz = tmp_path / "hand-idx3-ubyte.data"  # compression is detected by content, not name
    gz.write_bytes(gzip.compress(raw))
    assert np.array_equal(read_idx(gz), read_idx(path))


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"", "too short"),
        (bytes([1, 0, 8, 1, 0, 0, 0, 1, 7]), "not an IDX file"),
        (bytes([0, 0, 0x42, 1, 0, 0, 0, 1, 7]), "unknown IDX type code 0x42"),
        (bytes([0, 0, 8, 0]), "zero dimensions"),
        (bytes([0, 0, 8, 2, 0, 0, 0, 1]), "truncated header"),
        (bytes([0, 0, 8, 1, 0, 0, 0, 4, 1, 2]), "truncated: shape (4,) needs 4 data bytes, the file holds 2"),
        (bytes([0, 0, 8, 1, 0, 0, 0, 1, 1, 2]), "trailing bytes"),
    ],
)
def test_malformed_files_are_refused(tmp_path, raw, message):
    path = tmp_path / "bad-idx"
    path.write_bytes(raw)
    with pytest.raises(DataError) as excinfo:
        read_idx(path)
    (problem,) = excinfo.value.problems
    assert problem.path == str(path) and message in problem.message


def test_truncated_gzip(tmp_path):
    path = tmp_path / "cut.gz"
    whole = gzip.compress(bytes([0, 0, 8, 1, 0, 0, 1, 0]) + bytes(256))
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(DataError, match="corrupt or truncated gzip"):
        read_idx(path)


def test_dataset_labels_out_of_range_and_length_mismatch(tmp_path):
    images = write_idx(tmp_path / "images-idx3-ubyte", np.zeros((4, 2, 2), dtype=np.uint8))
    labels = write_idx(tmp_path / "labels-idx1-ubyte", np.array([0, 3, 1, 3], dtype=np.uint8))
    with pytest.raises(DataError) as excinfo:
        read_idx_dataset(images, labels, class_names=["a", "b"])
    (problem,) = excinfo.value.problems
    assert problem.path == str(labels) and "label 3 is out of range 0..1 at 2 position(s): 1, 3" in problem.message
    short = write_idx(tmp_path / "short-idx1-ubyte", np.array([0, 1], dtype=np.uint8))
    with pytest.raises(DataError, match="2 labels for 4 images"):
        read_idx_dataset(images, short, class_names=["a", "b"])
    data = read_idx_dataset(images, labels, class_names=["a", "b", "c", "d"])
    assert data.class_counts() == {"a": 1, "b": 1, "c": 0, "d": 2}
    assert data.sources[1] == f"{images}:image 1"


def test_dataset_refuses_labels_file_as_images(tmp_path):
    labels = write_idx(tmp_path / "labels-idx1-ubyte", np.array([0, 1], dtype=np.uint8))
    with pytest.raises(DataError, match="expected uint8 images"):
        read_idx_dataset(labels, labels, class_names=["a", "b"])


@pytest.mark.skipif(not (FASHION / "t10k-images-idx3-ubyte.gz").exists(), reason="dataset-fashion-mnist not installed")
def test_real_fashion_mnist_test_split():
    images, labels = FASHION / "t10k-images-idx3-ubyte.gz", FASHION / "t10k-labels-idx1-ubyte.gz"
    data = read_idx_dataset(images, labels, class_names=[str(i) for i in range(10)])
    assert data.samples.shape == (10_000, 28, 28)
    assert set(data.class_counts().values()) == {1000}
    assert 60 < data.samples.mean() < 90  # mostly dark background, not noise or all-zero
