"""Image folder readers on real files: every kind of bad input gives a problem naming the file."""

from pathlib import Path

import numpy as np
import pytest
from data_helpers import make_class_folders, random_pixels, write_png
from PIL import Image

from pcevolve.data import DataError, DataWarning, read_image_folder, read_unlabeled_images


def _problems(excinfo) -> dict[str, str]:
    return {problem.path: problem.message for problem in excinfo.value.problems}


def test_reads_classes_in_natural_order_with_sources(tmp_path):
    root = make_class_folders(tmp_path / "d", {"10_last": 2, "2_second": 2, "1_first": 3})
    data = read_image_folder(root)
    assert data.class_names == ("1_first", "2_second", "10_last")
    assert data.class_counts() == {"1_first": 3, "2_second": 2, "10_last": 2}
    assert data.samples.shape == (7, 8, 8) and data.samples.dtype == np.uint8
    assert data.sources[0] == str(root / "1_first" / "000.png")
    on_disk = np.asarray(Image.open(data.sources[3]))
    assert np.array_equal(data.samples[3], on_disk)
    assert data.labels.tolist() == [0, 0, 0, 1, 1, 2, 2]


def test_resizes_to_declared_size_and_mode(tmp_path):
    root = make_class_folders(tmp_path / "d", {"a": 2, "b": 2}, size=20)
    data = read_image_folder(root, size=12, mode="RGB")
    assert data.samples.shape == (4, 12, 12, 3)


def test_truncated_png_names_the_file(good_folder):
    intact = good_folder / "cat" / "000.png"
    big = write_png(good_folder / "cat" / "cut.png", random_pixels(np.random.default_rng(1), 8))
    content = big.read_bytes()
    big.write_bytes(content[: len(content) // 2])  # a valid PNG cut in half
    with pytest.raises(DataError) as excinfo:
        read_image_folder(good_folder)
    problems = _problems(excinfo)
    assert set(problems) == {str(big)}
    assert "truncated" in problems[str(big)]
    assert str(intact) not in problems


def test_images_read_again_when_there_is_no_room_to_keep_them_give_the_same_pixels_and_problems(tmp_path,
                                                                                                  monkeypatch):
    from pcevolve.data import image_files

    root = make_class_folders(tmp_path / "d", {"a": 3, "b": 3}, size=10)
    kept = read_image_folder(root, size=8, mode="RGB")
    monkeypatch.setattr(image_files, "_KEPT_PIXEL_BYTES", 250)  # room to keep the first few images only
    read_again = read_image_folder(root, size=8, mode="RGB")
    assert np.array_equal(kept.samples, read_again.samples)

    cut = write_png(root / "b" / "cut.png", random_pixels(np.random.default_rng(1), 10))
    cut.write_bytes(cut.read_bytes()[:60])
    with pytest.raises(DataError) as excinfo:
        read_image_folder(root)
    assert set(_problems(excinfo)) == {str(cut)} and "truncated" in _problems(excinfo)[str(cut)]


def test_zero_byte_file(good_folder):
    empty = good_folder / "dog" / "empty.png"
    empty.touch()
    with pytest.raises(DataError) as excinfo:
        read_image_folder(good_folder)
    assert _problems(excinfo) == {str(empty): "empty file (0 bytes)"}


def test_garbage_with_png_extension(good_folder):
    fake = good_folder / "dog" / "fake.png"
    fake.write_text("this is not an image")
    with pytest.raises(DataError) as excinfo:
        read_image_folder(good_folder)
    assert "not a readable image" in _problems(excinfo)[str(fake)]


def test_empty_class_folder(good_folder):
    (good_folder / "bird").mkdir()
    with pytest.raises(DataError) as excinfo:
        read_image_folder(good_folder)
    assert "empty class folder" in _problems(excinfo)[str(good_folder / "bird")]


def test_single_sample_class(good_folder):
    make_class_folders(good_folder, {"fish": 1}, seed=9)
    with pytest.raises(DataError) as excinfo:
        read_image_folder(good_folder)
    message = _problems(excinfo)[str(good_folder / "fish")]
    assert "only 1 image" in message and "at least 2" in message


def test_hidden_files_are_ignored_other_files_are_problems(good_folder):
    (good_folder / "cat" / ".DS_Store").write_bytes(b"\0\1")
    (good_folder / "cat" / "Thumbs.db").write_bytes(b"\0\1")
    (good_folder / "notes.md").write_text("files beside the class folders are ignored")
    notes = good_folder / "dog" / "notes.txt"
    notes.write_text("hello")
    with pytest.raises(DataError) as excinfo:
        read_image_folder(good_folder)
    assert set(_problems(excinfo)) == {str(notes)}
    assert "unsupported file type .txt" in _problems(excinfo)[str(notes)]
    notes.unlink()
    assert len(read_image_folder(good_folder)) == 7


def test_all_problems_are_reported_at_once(good_folder):
    (good_folder / "dog" / "empty.jpg").touch()
    (good_folder / "bird").mkdir()
    make_class_folders(good_folder, {"fish": 1}, seed=9)
    (good_folder / "cat" / "x.gif").write_bytes(b"GIF89a")
    with pytest.raises(DataError) as excinfo:
        read_image_folder(good_folder)
    assert len(excinfo.value.problems) == 4
    text = str(excinfo.value)
    assert text.startswith("4 problems in the data:")
    for name in ("empty.jpg", "bird", "fish", "x.gif"):
        assert name in text


def test_mixed_modes_are_converted_with_a_warning_naming_the_files(good_folder):
    rgb = write_png(good_folder / "dog" / "colour.png", random_pixels(np.random.default_rng(2), 8, 3))
    rgba = write_png(good_folder / "cat" / "alpha.png", random_pixels(np.random.default_rng(3), 8, 3), mode="RGBA")
    with pytest.warns(DataWarning, match="mixed modes") as record:
        data = read_image_folder(good_folder)
    message = str(record[0].message)
    assert str(rgb) in message and str(rgba) in message
    assert str(good_folder / "cat" / "000.png") not in message
    assert data.image_mode == "L" and data.samples.shape == (9, 8, 8)  # grey is the majority
    index = data.sources.index(str(rgb))
    expected = np.asarray(Image.open(rgb).convert("L"))
    assert np.array_equal(data.samples[index], expected)


def test_uniform_folder_converted_to_declared_mode_without_warning(good_folder, recwarn):
    data = read_image_folder(good_folder, mode="RGB")
    assert data.samples.shape == (7, 8, 8, 3)
    assert not [w for w in recwarn if issubclass(w.category, DataWarning)]


def test_mixed_sizes_need_a_declared_size(good_folder):
    odd = write_png(good_folder / "dog" / "odd.png", random_pixels(np.random.default_rng(4), 16))
    with pytest.raises(DataError) as excinfo:
        read_image_folder(good_folder)
    assert set(_problems(excinfo)) == {str(odd)}
    assert "16x16 but most images are 8x8" in _problems(excinfo)[str(odd)]
    assert read_image_folder(good_folder, size=8).samples.shape == (8, 8, 8)


def test_declared_classes_flag_unknown_and_missing_folders(good_folder):
    data = read_image_folder(good_folder, class_names=["dog", "cat"])
    assert data.class_names == ("dog", "cat") and data.class_counts() == {"dog": 4, "cat": 3}
    with pytest.raises(DataError) as excinfo:
        read_image_folder(good_folder, class_names=["cat", "cow"])
    problems = _problems(excinfo)
    assert "unknown class 'dog'" in problems[str(good_folder / "dog")]
    assert "has no folder" in problems[str(good_folder / "cow")]


def test_folder_level_problems(tmp_path, good_folder):
    with pytest.raises(DataError, match="folder does not exist"):
        read_image_folder(tmp_path / "missing")
    (tmp_path / "flat").mkdir()
    with pytest.raises(DataError, match="no class folders"):
        read_image_folder(tmp_path / "flat")
    stray = write_png(good_folder / "stray.png", random_pixels(np.random.default_rng(5)))
    (good_folder / "cat" / "nested").mkdir()
    with pytest.raises(DataError) as excinfo:
        read_image_folder(good_folder)
    problems = _problems(excinfo)
    assert "outside a class folder" in problems[str(stray)]
    assert "nested folder" in problems[str(good_folder / "cat" / "nested")]


def test_unlabeled_folder(tmp_path):
    rng = np.random.default_rng(0)
    folder = tmp_path / "public"
    for i in range(5):
        write_png(folder / f"{i:06d}.png", random_pixels(rng, 8))
    (folder / ".hidden").write_text("x")
    pool = read_unlabeled_images(folder, size=4)
    assert len(pool) == 5 and pool.samples.shape == (5, 4, 4)
    (folder / "sub").mkdir()
    (folder / "000002.png").write_bytes(b"")
    with pytest.raises(DataError) as excinfo:
        read_unlabeled_images(folder)
    assert set(_problems(excinfo)) == {str(folder / "sub"), str(folder / "000002.png")}


def test_jpeg_is_read(tmp_path):
    root = tmp_path / "jpg"
    for cls in ("a", "b"):
        for i in range(2):
            (root / cls).mkdir(parents=True, exist_ok=True)
            Image.fromarray(random_pixels(np.random.default_rng(i), 8, 3)).save(root / cls / f"{i}.JPEG")
    data = read_image_folder(root)
    assert data.samples.shape == (4, 8, 8, 3)


def test_sources_are_strings_naming_files(good_folder):
    data = read_image_folder(good_folder)
    assert all(Path(s).is_file() for s in data.sources)


def test_16_bit_greyscale_is_scaled_not_clipped(tmp_path):
    root = tmp_path / "deep"
    for cls in ("a", "b"):
        for i in range(2):
            (root / cls).mkdir(parents=True, exist_ok=True)
            Image.fromarray((np.arange(64, dtype=np.uint16).reshape(8, 8) * 1000 + i)).save(root / cls / f"{i}.png")
    data = read_image_folder(root)
    assert data.image_mode == "L"
    assert data.samples[0, 0, :4].tolist() == [0, 3, 7, 11]  # 1000 >> 8 = 3, not 255


@pytest.mark.parametrize("suffix", [".jpg", ".png"])
def test_an_orientation_tag_is_applied_so_the_image_reads_the_way_viewers_show_it(tmp_path, suffix):
    from PIL import ImageOps

    from pcevolve.data.image_files import inspect_image, load_images

    pixels = np.zeros((6, 10), np.uint8)
    pixels[:, :5] = 255  # left half white: a 90-degree turn moves it to the top or the bottom
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 clockwise to display"
    path = tmp_path / f"turned{suffix}"
    Image.fromarray(pixels).save(path, exif=exif.tobytes(), **({"quality": 100} if suffix == ".jpg" else {}))
    info = inspect_image(path)
    samples, problems = load_images([path])
    assert not problems and (info.width, info.height) == (6, 10) and samples.shape == (1, 10, 6)
    with Image.open(path) as image:
        shown = np.asarray(ImageOps.exif_transpose(image))
    np.testing.assert_array_equal(samples[0], shown)
    assert samples[0][:5].mean() > 200 > 50 > samples[0][5:].mean()  # white on top: turned, not as stored


def _png_with_exif_after_its_pixels(path: Path, pixels: np.ndarray, orientation: int) -> Path:
    """A PNG whose eXIf chunk follows IDAT (PIL writes it before, so the chunk is spliced in by hand)."""
    import io
    import struct
    import zlib

    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    stored = buffer.getvalue()
    exif = Image.Exif()
    exif[0x0112] = orientation
    payload = exif.tobytes().removeprefix(b"Exif\x00\x00")
    chunk = struct.pack(">I", len(payload)) + b"eXIf" + payload + struct.pack(">I", zlib.crc32(b"eXIf" + payload))
    end = stored.rindex(b"IEND") - 4  # the IEND chunk's length field
    path.write_bytes(stored[:end] + chunk + stored[end:])
    return path


@pytest.mark.parametrize("room", [None, 0], ids=["kept", "read-again"])
def test_a_png_whose_orientation_follows_its_pixels_is_read_turned_or_named_never_crashes(tmp_path, monkeypatch,
                                                                                         room):
    from pcevolve.data import image_files

    if room is not None:
        monkeypatch.setattr(image_files, "_KEPT_PIXEL_BYTES", room)
    stored = np.arange(24, dtype=np.uint8).reshape(4, 6)
    late = _png_with_exif_after_its_pixels(tmp_path / "late.png", stored, orientation=6)
    with Image.open(late) as image:
        assert "exif" not in image.info  # the header alone does not show the orientation
    samples, problems = image_files.load_images([late])
    if room is None:  # decoded in the header pass: the decoded, turned size counts
        assert not problems and samples.shape == (1, 6, 4)
        np.testing.assert_array_equal(samples[0], np.rot90(stored, k=-1))
    else:  # read again after the sizes were settled: a problem naming the file, not a shape error
        assert samples is None and [p.path for p in problems] == [str(late)]
        assert "orientation" in problems[0].message
        garbage = tmp_path / "garbage.png"
        garbage.write_bytes(b"not an image")
        _, problems = image_files.load_images([late, garbage])  # named alongside other problems, not after them
        assert sorted(p.path for p in problems) == sorted([str(late), str(garbage)])
    resized, problems = image_files.load_images([late], size=5)
    assert not problems and resized.shape == (1, 5, 5)
