"""``pcevolve data check`` and ``pcevolve data prepare`` through typer's CliRunner."""

import numpy as np
from data_helpers import make_class_folders, random_pixels, write_png
from PIL import Image
from typer.testing import CliRunner

from pcevolve.cli.data_commands import app

runner = CliRunner()


def test_check_good_folder_prints_summary_and_exits_0(good_folder):
    result = runner.invoke(app, ["check", str(good_folder)])
    assert result.exit_code == 0, result.output
    assert "7 images, 2 classes" in result.stdout
    lines = result.stdout.splitlines()
    assert any("cat" in line and " 3 " in line and "8x8" in line and " L " in line for line in lines)
    assert any("dog" in line and " 4 " in line for line in lines)
    assert lines[-1] == "OK"


def test_check_bad_folder_lists_every_problem_and_exits_1(good_folder):
    (good_folder / "dog" / "empty.png").touch()
    cut = write_png(good_folder / "cat" / "cut.png", random_pixels(np.random.default_rng(1)))
    cut.write_bytes(cut.read_bytes()[:40])
    (good_folder / "bird").mkdir()  # an empty class: declared by its folder, accepted as a run accepts it
    result = runner.invoke(app, ["check", str(good_folder)])
    assert result.exit_code == 1
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stdout.splitlines()
    assert lines[-1] == "2 problems found"
    assert f"{good_folder / 'dog' / 'empty.png'}: empty file (0 bytes)" in lines
    assert any(line.startswith(f"{cut}: ") for line in lines)
    assert not any(line.startswith(f"{good_folder / 'bird'}: ") for line in lines)


def test_check_notes_a_class_with_fewer_than_two_images_and_passes(good_folder):
    (good_folder / "bird").mkdir()
    result = runner.invoke(app, ["check", str(good_folder)])
    assert result.exit_code == 0, result.output
    assert "'bird' (0)" in result.stderr and "fewer than two private samples" in result.stderr
    assert result.stdout.splitlines()[-1] == "OK"


def test_check_with_size_mode_and_mixed_modes_warning(good_folder):
    colour = write_png(good_folder / "dog" / "colour.png", random_pixels(np.random.default_rng(2), 8, 3))
    result = runner.invoke(app, ["check", str(good_folder), "--size", "16", "--mode", "RGB"])
    assert result.exit_code == 0, result.output
    assert "7 images, 2 classes" not in result.stdout and "8 images, 2 classes (read as 16x16 RGB)" in result.stdout
    assert "warning: images have mixed modes (L: 7, RGB: 1); converted 7 to RGB" in result.stderr
    assert str(good_folder / "cat" / "000.png") in result.stderr and str(colour) not in result.stderr


def test_check_against_reports_shared_samples_naming_both_files(tmp_path):
    private = make_class_folders(tmp_path / "private", {"a": 2, "b": 2}, seed=0)
    test = make_class_folders(tmp_path / "test", {"a": 2, "b": 2}, seed=1)
    ok = runner.invoke(app, ["check", str(private), "--against", str(test)])
    assert ok.exit_code == 0, ok.output
    assert "no sample is shared between the 2 datasets" in ok.stdout
    Image.open(private / "a" / "001.png").save(test / "b" / "leak.png")
    result = runner.invoke(app, ["check", str(private), "--against", str(test)])
    assert result.exit_code == 1
    (line,) = [line for line in result.stdout.splitlines() if "same content" in line]
    assert line.startswith(str(test / "b" / "leak.png")) and str(private / "a" / "001.png") in line


def test_check_against_a_pool_warns_about_a_shared_private_image_and_still_passes(tmp_path):
    private = make_class_folders(tmp_path / "private", {"a": 2, "b": 2}, seed=0)
    test = make_class_folders(tmp_path / "test", {"a": 2, "b": 2}, seed=1)
    pool = tmp_path / "pool"
    pool.mkdir()
    for i in range(4):
        write_png(pool / f"{i}.png", random_pixels(np.random.default_rng(10 + i)))
    Image.open(private / "a" / "001.png").save(pool / "same.png")
    result = runner.invoke(app, ["check", str(private), "--against", str(test), "--against", str(pool)])
    # The pool is chosen without looking at the private set: an overlap says the source may not be public, and
    # never asks for the pool to be edited (that would make it depend on the private set).
    assert result.exit_code == 0, result.output
    assert "warning: 1 private sample(s) are also in the public pool" in result.stderr
    assert "choose the pool from another source" in result.stderr and "same.png" not in result.output
    Image.open(test / "b" / "001.png").save(pool / "from_test.png")
    leaked = runner.invoke(app, ["check", str(private), "--against", str(test), "--against", str(pool)])
    assert leaked.exit_code == 1 and "from_test.png" in leaked.stdout  # the test set in the pool stays an error


def test_check_csv(tmp_path):
    good = tmp_path / "good.csv"
    good.write_text("x,target\n1,a\n2,a\n3,b\n4,b\n")
    result = runner.invoke(app, ["check", str(good), "--label-column", "target"])
    assert result.exit_code == 0, result.output
    assert "4 rows, 1 features" in result.stdout
    bad = tmp_path / "bad.csv"
    bad.write_text("x,target\n1,a\nnan,a\n3,b\n4,b\n")
    result = runner.invoke(app, ["check", str(bad), "--label-column", "target"])
    assert result.exit_code == 1
    assert f"{bad}:row 3: column 'x' is NaN ('nan')" in result.stdout.splitlines()


def test_check_missing_path(tmp_path):
    result = runner.invoke(app, ["check", str(tmp_path / "nope")])
    assert result.exit_code == 1
    assert f"{tmp_path / 'nope'}: folder does not exist" in result.stdout


def test_prepare_digits_then_check_the_whole_demo(tmp_path):
    out = tmp_path / "demo"
    result = runner.invoke(
        app, ["prepare", "digits", "--out", str(out), "--classes", "0,1,2", "--public-size", "60", "--seed", "3"]
    )
    assert result.exit_code == 0, result.output
    assert "wrote" in result.stdout
    assert sorted(p.name for p in (out / "private").iterdir()) == ["0", "1", "2"]
    assert len(list((out / "public").iterdir())) == 60
    result = runner.invoke(app, ["check", str(out)])  # a prepared root checks every split and their overlap
    assert result.exit_code == 0, result.output
    assert "no sample is shared between the 4 datasets" in result.stdout
    again = runner.invoke(app, ["prepare", "digits", "--out", str(out)])
    assert again.exit_code == 1 and "already exists" in again.stderr and "Traceback" not in again.output


def test_prepare_errors_are_one_line_each_without_traceback(tmp_path):
    result = runner.invoke(app, ["prepare", "digits", "--out", str(tmp_path / "d"), "--per-class", "170"])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == "5 problems found"
    assert "Traceback" not in result.output
    assert not (tmp_path / "d").exists()
    bad = runner.invoke(app, ["prepare", "digits", "--out", str(tmp_path / "d"), "--classes", "a,b"])
    assert bad.exit_code == 2
