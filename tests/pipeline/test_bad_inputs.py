"""The bad-input matrix: each case exits non-zero, names the file / row / key, prints no traceback, writes nothing.

Images and configs go through ``pcevolve run`` (the command a user runs); CSV files through ``pcevolve data check``
(``run`` reads images only). Unusual but valid images (16-bit, palette, CMYK, one much larger than the rest) are
read, converted and resized instead: refusing a valid image would be the bug.
"""

from __future__ import annotations

import io
import os
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image
from typer.testing import CliRunner

from pcevolve.cli.main import app
from pcevolve.data import DataWarning, read_image_folder

Case = Callable[[Path, Path], str]  # (private copy, public copy) -> the text the message must name


def _first_class(private: Path) -> Path:
    return sorted(p for p in private.iterdir() if p.is_dir())[0]


def _png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def zero_byte(private, public):
    (_first_class(private) / "empty.png").write_bytes(b"")
    return "empty.png"


def truncated_png(private, public):
    data = _png_bytes(Image.fromarray(np.full((16, 16), 128, np.uint8)))
    (_first_class(private) / "cut.png").write_bytes(data[: len(data) // 2])
    return "cut.png"


def truncated_jpeg(private, public):
    buffer = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (16, 16), np.uint8)).save(buffer, format="JPEG")
    (_first_class(private) / "cut.jpg").write_bytes(buffer.getvalue()[:100])
    return "cut.jpg"


def not_an_image(private, public):
    (_first_class(private) / "scan.png").write_text("this is text, not a PNG")
    return "scan.png"


def symlink_loop(private, public):
    link = _first_class(private) / "loop.png"
    os.symlink(link, link)
    return "loop.png"


def directory_named_like_an_image(private, public):
    (_first_class(private) / "photo.png").mkdir()
    return "photo.png"


def unsupported_file(private, public):
    (_first_class(private) / "notes.txt").write_text("x")
    return "notes.txt"


def image_outside_class_folders(private, public):
    shutil.copy(next(_first_class(private).iterdir()), private / "stray.png")
    return "stray.png"


def one_class_only(private, public):
    for folder in sorted(p for p in private.iterdir() if p.is_dir())[1:]:
        shutil.rmtree(folder)
    return "one class"


def nested_folder(private, public):
    (_first_class(private) / "more").mkdir()
    shutil.copy(next(_first_class(private).glob("*.png")), _first_class(private) / "more" / "a.png")
    return "more"


def private_folder_missing(private, public):
    shutil.rmtree(private)
    return "data.private"


def public_folder_missing(private, public):
    shutil.rmtree(public)
    return "data.public"


def public_pool_empty(private, public):
    for image in public.iterdir():
        image.unlink()
    return "no images"


def public_pool_with_subfolder(private, public):
    (public / "extra").mkdir()
    return "extra"


def public_file_unreadable(private, public):
    (public / "half.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    return "half.png"


# Not here, because a run accepts them (tests/pipeline/test_run_inputs.py): an empty class folder, a class with one
# image (the classes are declared; no class size decides whether a run proceeds) and a pool that holds a private
# image (a warning about the pool's source: the pool is chosen without looking at the private set).
IMAGE_CASES = [zero_byte, truncated_png, truncated_jpeg, not_an_image, symlink_loop, directory_named_like_an_image,
               unsupported_file, image_outside_class_folders, one_class_only, nested_folder, private_folder_missing,
               public_folder_missing, public_pool_empty, public_pool_with_subfolder, public_file_unreadable]


@pytest.fixture
def data_copy(tiny_data, tmp_path):
    private, public = tmp_path / "private", tmp_path / "public"
    shutil.copytree(tiny_data / "private", private)
    shutil.copytree(tiny_data / "public", public)
    return private, public


def _leaves_nothing(tmp_path: Path) -> bool:
    runs = tmp_path / "runs"
    return not runs.exists() or not any(runs.iterdir())


@pytest.mark.parametrize("case", IMAGE_CASES, ids=lambda case: case.__name__)
def test_bad_images_are_named_and_nothing_is_written(case, data_copy, tiny_config, tmp_path, run_command):
    private, public = data_copy
    named = case(private, public)
    config = tiny_config(name="bad", **{"data.private": str(private), "data.public": str(public)})
    code, output = run_command(config)
    assert code != 0, output
    assert named in output, output
    assert "Traceback" not in output
    assert _leaves_nothing(tmp_path), sorted((tmp_path / "runs").rglob("*"))


# ---- valid but unusual images: read, not refused -------------------------------------------------------------

def sixteen_bit(folder):
    Image.fromarray(np.full((16, 16), 40000, np.uint16)).save(folder / "deep.png")


def palette(folder):
    Image.fromarray(np.arange(256, dtype=np.uint8).reshape(16, 16)).convert("P").save(folder / "palette.png")


def cmyk_jpeg(folder):
    Image.new("CMYK", (16, 16), (0, 128, 255, 0)).save(folder / "print.jpg")


def much_larger(folder):
    Image.fromarray(np.random.default_rng(1).integers(0, 255, (1600, 1600), np.uint8)).save(folder / "huge.png")


@pytest.mark.parametrize("make", [sixteen_bit, palette, cmyk_jpeg, much_larger], ids=lambda make: make.__name__)
def test_unusual_but_valid_images_are_read(make, data_copy):
    private, _ = data_copy
    make(_first_class(private))
    with warnings.catch_warnings(record=True) as caught:  # a converted mode is said, naming the file
        warnings.simplefilter("always", DataWarning)
        data = read_image_folder(private, size=16, mode="L")
    if make is not much_larger:
        assert any(issubclass(w.category, DataWarning) for w in caught)
    assert data.samples.shape[1:] == (16, 16) and len(data) == 61


# ---- CSV through `pcevolve data check` -------------------------------------------------------------------------

CSV_CASES = {
    # The é before the bad byte counts as one character.
    "non_utf8": (b"a,label\n1,caf\xc3\xa9\n2,caf\xc3\xa9 \xe9\n3,x\n",
                 "row 3: not utf-8 text (byte 0xe9, character 8 of the line)"),
    "duplicate_headers": (b"a,a,label\n1,2,x\n3,4,x\n5,6,y\n7,8,y\n", "a"),
    "missing_label_column": (b"a,b\n1,2\n3,4\n", "label"),
    "nan_value": (b"a,label\n1,x\nnan,x\n2,y\n3,y\n", "row 3"),
    "inf_value": (b"a,label\n1,x\ninf,x\n2,y\n3,y\n", "row 3"),
    "not_a_number": (b"a,label\n1,x\nfive,x\n2,y\n3,y\n", "row 3"),
    "ragged_row": (b"a,b,label\n1,2,x\n3,x\n4,5,y\n6,7,y\n", "row 3"),
    "one_class_only": (b"a,label\n1,x\n2,x\n3,x\n", "class"),
    "empty_file": (b"", "empty"),
    "header_only": (b"a,label\n", "row"),
}


@pytest.mark.parametrize("name", sorted(CSV_CASES))
def test_bad_csv_rows_are_named(name, tmp_path):
    content, named = CSV_CASES[name]
    path = tmp_path / f"{name}.csv"
    path.write_bytes(content)
    result = CliRunner().invoke(app, ["data", "check", str(path)])
    assert result.exit_code == 1, result.output
    assert str(path) in result.output and named.lower() in result.output.lower(), result.output
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # nothing written


# ---- configs through `pcevolve run` ----------------------------------------------------------------------------

CONFIG_CASES = {
    "unknown_top_level_key": ({"epsilon": 8}, "epsilon"),
    "unknown_nested_key": ({"search": {"generation": 5}}, "search.generation"),
    "wrong_type": ({"privacy": {"epsilon": "eight"}}, "privacy.epsilon"),
    "negative_epsilon": ({"privacy": {"epsilon": -1}}, "privacy.epsilon"),
    "zero_epsilon": ({"privacy": {"epsilon": 0}}, "privacy.epsilon"),
    "delta_at_least_one": ({"privacy": {"delta": 1.0}}, "privacy.delta"),
    "shares_beyond_the_total": ({"privacy": {"split": {"representation": 0.6, "release": 0.6}}}, "privacy.split"),
    "unknown_decoder": ({"decoder": {"name": "diffusion"}}, "decoder.name"),
    "unknown_backbone": ({"representation": {"backbone": "resnet50"}}, "representation.backbone"),
    "bad_name": ({"name": "../escape"}, "name"),
    "top_level_list": ([1, 2], "mapping"),
    "not_yaml": ("privacy: {epsilon: [", "YAML"),
}


@pytest.mark.parametrize("name", sorted(CONFIG_CASES))
def test_bad_configs_name_the_key_and_write_nothing(name, tmp_path, run_command):
    content, named = CONFIG_CASES[name]
    path = tmp_path / "bad.yaml"
    path.write_text(content if isinstance(content, str) else yaml.safe_dump(content))
    code, output = run_command(path)
    assert code == 1, output
    assert named in output and str(path) in output, output
    assert "Traceback" not in output
    assert _leaves_nothing(tmp_path)
