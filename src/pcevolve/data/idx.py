"""IDX files, the MNIST / Fashion-MNIST format, plain or gzip-compressed.

Layout: two zero bytes, a type code, the number of dimensions ``d``; then ``d``
big-endian uint32 sizes; then the values, big-endian, row-major. A file is
accepted only if the header is well formed and the payload holds exactly the
number of values the header declares (no truncation, no trailing bytes).
Compression is recognised by the gzip magic bytes, not by the file name.
"""

from __future__ import annotations

import gzip
import io
import math
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pcevolve.data.dataset import LabeledDataset
from pcevolve.data.errors import DataError, DataProblem, raise_if_problems
from pcevolve.io import atomic_write_bytes

IDX_TYPES: dict[int, np.dtype] = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_GZIP_MAGIC = b"\x1f\x8b"


def _read_bytes(path: Path) -> bytes:
    raw = path.read_bytes()
    if raw[:2] == _GZIP_MAGIC:
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise DataError([DataProblem(str(path), f"corrupt or truncated gzip data: {exc}")]) from None
    return raw


def read_idx(path: str | Path) -> np.ndarray:
    """Read one IDX file into a native-endian array of the shape its header declares.

    Raises:
        DataError: The file is missing, empty, not IDX (bad magic number or type code),
            or its payload does not match the declared shape.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError([DataProblem(str(path), "file does not exist")])
    data = _read_bytes(path)
    if len(data) < 4:
        raise DataError([DataProblem(str(path), f"too short for an IDX header ({len(data)} bytes)")])
    zero0, zero1, type_code, ndim = data[0], data[1], data[2], data[3]
    if zero0 != 0 or zero1 != 0:
        raise DataError([DataProblem(str(path), f"not an IDX file (magic number {data[:4].hex()})")])
    if type_code not in IDX_TYPES:
        raise DataError([DataProblem(str(path), f"unknown IDX type code 0x{type_code:02x}")])
    if ndim == 0:
        raise DataError([DataProblem(str(path), "IDX header declares zero dimensions")])
    header_size = 4 + 4 * ndim
    if len(data) < header_size:
        raise DataError([DataProblem(str(path), f"truncated header: {ndim} dimensions need {header_size} bytes")])
    shape = tuple(int(v) for v in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dtype = IDX_TYPES[type_code]
    expected = math.prod(shape) * dtype.itemsize
    actual = len(data) - header_size
    if actual != expected:
        kind = "truncated" if actual < expected else "has trailing bytes"
        raise DataError(
            [DataProblem(str(path), f"{kind}: shape {shape} needs {expected} data bytes, the file holds {actual}")]
        )
    values = np.frombuffer(data, dtype=dtype, offset=header_size).reshape(shape)
    return values.astype(dtype.newbyteorder("="))


def write_idx(path: str | Path, array: np.ndarray, *, compress: bool | None = None) -> Path:
    """Write ``array`` as an IDX file, atomically.

    Args:
        path: Target file.
        array: 1-255 dimensional array of a type IDX supports (uint8, int8, int16, int32,
            float32, float64).
        compress: gzip the file; ``None`` means "if the name ends in ``.gz``".

    Returns:
        The target path.
    """
    path = Path(path)
    array = np.asarray(array)
    codes = {dtype.newbyteorder("=").str[1:]: code for code, dtype in IDX_TYPES.items()}
    code = codes.get(array.dtype.str[1:])
    if code is None or not 1 <= array.ndim <= 255:
        raise ValueError(f"IDX cannot hold a {array.ndim}-D {array.dtype} array")
    buffer = io.BytesIO()
    buffer.write(bytes([0, 0, code, array.ndim]))
    buffer.write(np.asarray(array.shape, dtype=">u4").tobytes())
    buffer.write(array.astype(IDX_TYPES[code]).tobytes())
    payload = buffer.getvalue()
    if compress or (compress is None and path.name.endswith(".gz")):
        payload = gzip.compress(payload, mtime=0)
    return atomic_write_bytes(path, payload)


def read_idx_dataset(
    images: str | Path,
    labels: str | Path,
    *,
    class_names: Sequence[str],
) -> LabeledDataset:
    """Read an IDX image file and its IDX label file as a labelled image dataset.

    Args:
        images: ``uint8`` IDX file of shape ``(N, H, W)`` (or ``(N, H, W, 3)`` for colour).
        labels: ``uint8`` IDX file of shape ``(N,)``, values in ``0..len(class_names)-1``.
        class_names: Name of each label value.

    Returns:
        The dataset; ``sources`` are ``"<images file>:image <i>"``.

    Raises:
        DataError: Either file is malformed, the shapes disagree, or a label is out of range.
    """
    images, labels = Path(images), Path(labels)
    problems: list[DataProblem] = []
    pixels = label_values = None
    for path, kind in ((images, "images"), (labels, "labels")):
        try:
            array = read_idx(path)
        except DataError as exc:
            problems += exc.problems
            continue
        if kind == "images":
            if array.dtype != np.uint8 or not (array.ndim == 3 or (array.ndim == 4 and array.shape[-1] == 3)):
                problems.append(
                    DataProblem(str(path), f"expected uint8 images (N, H, W), got {array.dtype} {array.shape}")
                )
            else:
                pixels = array
        elif array.ndim != 1 or array.dtype.kind not in "iu":
            problems.append(DataProblem(str(path), f"expected integer labels (N,), got {array.dtype} {array.shape}"))
        else:
            label_values = array.astype(np.int64)
    if pixels is not None and label_values is not None:
        if len(pixels) != len(label_values):
            mismatch = f"{len(label_values)} labels for {len(pixels)} images in {images}"
            problems.append(DataProblem(str(labels), mismatch))
        bad = np.flatnonzero((label_values < 0) | (label_values >= len(class_names)))
        for value in np.unique(label_values[bad]):
            where = bad[label_values[bad] == value]
            shown = ", ".join(str(i) for i in where[:5]) + (" ..." if len(where) > 5 else "")
            problems.append(
                DataProblem(
                    str(labels),
                    f"label {value} is out of range 0..{len(class_names) - 1} at {len(where)} position(s): {shown}",
                )
            )
    raise_if_problems(problems)
    assert pixels is not None and label_values is not None
    return LabeledDataset(
        samples=pixels,
        labels=label_values,
        class_names=tuple(class_names),
        modality="image",
        sources=tuple(f"{images}:image {i}" for i in range(len(pixels))),
    )
