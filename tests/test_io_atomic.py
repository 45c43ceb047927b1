"""Atomic writes leave either the old content or the new, never a partial file or folder."""

import json
import os

import numpy as np
import pytest

from pcevolve.io import (
    append_jsonl,
    atomic_directory,
    atomic_write_json,
    atomic_write_npz,
    atomic_write_text,
    read_json,
    read_jsonl,
)


def test_write_json_round_trips_and_leaves_no_temp(tmp_path):
    target = atomic_write_json(tmp_path / "a" / "x.json", {"b": np.float32(1.5), "a": [1, 2]})
    assert read_json(target) == {"a": [1, 2], "b": 1.5}
    assert sorted(os.listdir(target.parent)) == ["x.json"]


def test_failed_write_keeps_previous_content(tmp_path):
    target = tmp_path / "x.json"
    atomic_write_json(target, {"v": 1})
    with pytest.raises(ValueError):
        atomic_write_json(target, {"v": float("nan")})  # NaN refused before anything is replaced
    assert read_json(target) == {"v": 1}
    assert sorted(os.listdir(tmp_path)) == ["x.json"]


def test_npz_refuses_object_arrays(tmp_path):
    with pytest.raises(TypeError, match="pickle"):
        atomic_write_npz(tmp_path / "x.npz", a=np.array([{"x": 1}], dtype=object))
    assert not (tmp_path / "x.npz").exists()
    atomic_write_npz(tmp_path / "y.npz", a=np.arange(3))
    with np.load(tmp_path / "y.npz", allow_pickle=False) as data:
        np.testing.assert_array_equal(data["a"], np.arange(3))


def test_atomic_directory_removes_staging_on_error(tmp_path):
    target = tmp_path / "out"
    with pytest.raises(RuntimeError):
        with atomic_directory(target) as staging:
            atomic_write_text(staging / "half.txt", "written before the failure")
            raise RuntimeError("boom")
    assert not target.exists()
    assert os.listdir(tmp_path) == []


def test_atomic_directory_refuses_existing_unless_overwrite(tmp_path):
    target = tmp_path / "out"
    with atomic_directory(target) as staging:
        atomic_write_text(staging / "v1.txt", "1")
    with pytest.raises(FileExistsError):
        with atomic_directory(target):
            pass
    with atomic_directory(target, overwrite=True) as staging:
        atomic_write_text(staging / "v2.txt", "2")
    assert sorted(os.listdir(target)) == ["v2.txt"]
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_jsonl_drops_only_a_torn_last_line(tmp_path):
    path = tmp_path / "r.jsonl"
    append_jsonl(path, {"i": 1})
    append_jsonl(path, {"i": 2})
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"i": 3, "trunc')
    assert [r["i"] for r in read_jsonl(path)] == [1, 2]
    path.write_text('{"i": 1}\nnot json\n{"i": 2}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="line 2"):
        read_jsonl(path)
    assert json.loads('{"i": 1}') == {"i": 1}


def test_an_append_after_a_torn_line_cuts_it_off_first(tmp_path):
    from pcevolve.io.atomic import append_jsonl, read_jsonl

    path = tmp_path / "records.jsonl"
    append_jsonl(path, {"a": 1})
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"b": ')  # a write cut short by a kill or a full disk
    assert read_jsonl(path) == [{"a": 1}]
    append_jsonl(path, {"c": 3})
    assert read_jsonl(path) == [{"a": 1}, {"c": 3}]
    path.write_text('{"x"')  # torn first line
    append_jsonl(path, {"d": 4})
    assert read_jsonl(path) == [{"d": 4}]


def test_writers_of_a_synthetic_set_refuse_what_is_already_there(tmp_path) -> None:
    import numpy as np

    from pcevolve.data.writers import write_image_folder, write_texts_jsonl
    from pcevolve.io import TargetExistsError

    samples, labels = np.zeros((2, 4, 4), np.uint8), np.array([0, 1])
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("mine")
    a_file = tmp_path / "x.txt"
    a_file.write_text("mine")
    with pytest.raises(TargetExistsError, match="already exists; nothing was written"):
        write_image_folder(mine, samples, labels, ["a", "b"])
    for overwrite in (False, True):
        with pytest.raises(TargetExistsError, match="is a file"):
            write_image_folder(a_file, samples, labels, ["a", "b"], overwrite=overwrite)
        with pytest.raises(TargetExistsError, match="is a folder"):
            write_texts_jsonl(mine, np.array(["t", "u"]), labels, ["a", "b"], overwrite=overwrite)
    with pytest.raises(TargetExistsError, match="already exists"):
        write_texts_jsonl(a_file, np.array(["t", "u"]), labels, ["a", "b"])
    assert (mine / "keep.txt").read_text() == "mine" and a_file.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "x.txt"]  # no staging left behind
    write_texts_jsonl(a_file, np.array(["t", "u"]), labels, ["a", "b"], overwrite=True)
    assert a_file.read_text().count("\n") == 2
    write_image_folder(mine, samples, labels, ["a", "b"], overwrite=True)
    assert sorted(p.name for p in mine.iterdir()) == ["a", "b"]
