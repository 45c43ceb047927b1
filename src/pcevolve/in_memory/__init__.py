"""In-memory data for the Python API: a DataFrame or a list of dicts (tables, texts), ``(X, y)`` arrays (images).

The data is checked here, in memory, before any run folder exists, and every problem names what the user holds —
``private: column 'age', row index 17: NaN`` (the DataFrame's index label or the list position), ``private: X[3]``
— never a file. Only then is it written, inside the new run's ``secure/input/`` (:data:`INPUT_FOLDER`), in the
format the modality's reader takes (a CSV, a JSON Lines file, PNG folders), so that the run reads it with the same
readers as a file run and ``Synthesizer.resume(folder).fit()`` or ``pcevolve run --resume`` can read it again after a
crash. Nothing of it is written outside ``secure/``. A problem the reader finds later (a category the public table
lacks) is translated back to the same terms by :meth:`InputPlan.translate`.

``form.json`` beside the data remembers the input's shape convention (its columns in order, the array layout), so
that ``Synthesizer.sample`` can hand the synthetic set back the same way, also after ``Synthesizer.load``
(:mod:`~pcevolve.in_memory.given`). It records nothing read off the private values: the types of what comes back
follow the declarations alone — a table's columns the schema (a whole-number column as ``int64``, another number as
``float64``, a category as text), the labels the declared classes. A dtype pandas inferred from the private values
(``int64`` because every private amount was whole) or a label array's width (``<U3`` because no private label was
longer) would let the private data shape what is delivered.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pcevolve.data.dataset import ClassLabel, label_text
from pcevolve.data.errors import DataError, DataProblem, raise_if_problems
from pcevolve.in_memory.given import (
    FORM_FILE,
    INPUT_FOLDER,
    as_given,
    declared_labels,
    input_folder,
    read_form,
)
from pcevolve.in_memory.records import (
    Records,
    check_cells,
    check_columns,
    check_kinds,
    check_labels,
    is_frame,
    is_missing,
    plain,
    show_missing,
    records_from,
)
from pcevolve.io import (
    atomic_directory,
    atomic_write_bytes,
    atomic_write_json,
    private_folder,
    private_tree,
)

if TYPE_CHECKING:
    from pcevolve.config import DataConfig



__all__ = ["FORM_FILE", "INPUT_FOLDER", "InputPlan", "Records", "as_given", "as_uint8", "declared_labels",
           "input_folder", "is_in_memory", "looks_in_memory", "plan_inputs", "read_form", "records_from"]

def is_in_memory(value: object) -> bool:
    """Whether ``value`` is data rather than a path (``None`` is neither: the config's path is used)."""
    return value is not None and not isinstance(value, (str, os.PathLike))


# ------------------------------------------------------------------------------------------------ the plan


@dataclass
class InputPlan:
    """What fit() writes into ``RUN/secure/input`` and how reader problems are said in the user's terms.

    Attributes:
        settings: ``data.private`` / ``data.public`` → the path the run reads (inside the run folder).
        writers: One function per file or folder to write, given the folder the run folder is built in.
        where: A written file → (argument, {reader's place suffix ("row 3", "line 2") → the user's index}).
        form: The input's shape convention, written as ``form.json`` (None: the private data was a path).
        columns: Each in-memory table's columns, by argument (so private and public are compared in memory).
        image_sizes: Each in-memory image array's height and width, by argument (compared the same way).
    """

    run_path: Path
    settings: dict[str, str] = field(default_factory=dict)
    writers: list[Callable[[Path], None]] = field(default_factory=list)
    where: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    form: dict[str, Any] | None = None
    columns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    image_sizes: dict[str, tuple[int, int]] = field(default_factory=dict)

    def write(self, base: Path | None = None) -> None:
        """Write every input (atomically, each file or folder complete or absent) and ``form.json`` into ``base``'s
        ``secure/input/``: the run folder, or the folder it is being built in (default: :attr:`run_path`)."""
        base = self.run_path if base is None else base
        private_folder(base / "secure")
        private_folder(input_folder(base))
        for writer in self.writers:
            writer(base)
        if self.form is not None:
            atomic_write_json(input_folder(base) / FORM_FILE, self.form)
        private_tree(input_folder(base))  # the PNG writer's files too: the copy is its owner's alone

    def translate(self, error: DataError) -> DataError:
        """``error`` with each place in a written file named as the user's data (argument, row index)."""
        return DataError([self._translated(problem) for problem in error.problems])

    def _translated(self, problem: DataProblem) -> DataProblem:
        for path, (argument, places) in self.where.items():
            if problem.path == path:
                return replace(problem, path=argument)
            if problem.path.startswith(path + ":"):
                place = problem.path[len(path) + 1:]
                index = places.get(place)
                return replace(problem, path=argument if index is None else f"{argument}: row index {index}")
        return problem


#: The arguments whose data is labelled: the private set, and a test set given to evaluate().
LABELLED = ("private", "test")


def plan_inputs(data: DataConfig, run_path: Path, private: object, public: object, test: object = None
                ) -> InputPlan:
    """Check the in-memory ``private`` / ``public`` (and ``test``) data against the config (``data.modality``, its
    columns and declared classes) and plan where it is written; a path (or None) is left to the config.

    Raises:
        DataError: Every problem found, each naming the column and row index, or the array index.
        TypeError: A value of the wrong kind for the modality.
        ValueError: In-memory images without declared classes.
    """
    plan = InputPlan(run_path)
    planners = {"tabular": _plan_table, "text": _plan_texts, "image": _plan_images}
    planner = planners.get(data.modality)
    if planner is None:
        raise ValueError(f"in-memory data is not supported for data.modality {data.modality!r}; give paths")
    problems: list[DataProblem] = []
    for argument, value in (("private", private), ("public", public), ("test", test)):
        if is_in_memory(value):
            problems += planner(plan, data, argument, value)
    if not problems and {"private", "public"} <= set(plan.columns):
        problems = _check_same_columns(plan.columns["private"], plan.columns["public"], data.label_column)
    sizes = plan.image_sizes
    if not problems and {"private", "public"} <= set(sizes) and sizes["private"] != sizes["public"]:
        private_size, public_size = plan.image_sizes["private"], plan.image_sizes["public"]
        problems = [DataProblem("public", f"holds {public_size[0]}×{public_size[1]} images, the private ones are "
                                          f"{private_size[0]}×{private_size[1]}: give both at one size (the pool's "
                                          "images stand beside the private ones in every comparison)")]
    raise_if_problems(problems)
    return plan


def _write_file(target: Path, payload: bytes) -> None:
    atomic_write_bytes(target, payload)


# --- tables ------------------------------------------------------------------------------------------------------


def _plan_table(plan: InputPlan, data: DataConfig, argument: str, value: object) -> list[DataProblem]:
    records = records_from(value, argument)
    labelled = argument in LABELLED
    label = data.label_column
    needed = {label: "data.label_column"} if labelled else {}
    refused = {} if labelled else {label: "the public table must be unlabelled (its labels are never used): drop it"}
    problems = check_columns(records, argument, needed, refused)
    if problems:
        return problems
    problems = check_kinds(records, argument, records.columns)
    problems += check_cells(records, argument, records.columns)
    problems += check_labels(records, argument, label, data.classes) if labelled else []
    if problems:
        return problems
    target = input_folder(plan.run_path) / f"{argument}.csv"
    text, places = _csv_text(records)
    plan.settings[f"data.{argument}"] = str(target)
    plan.writers.append(lambda base: _write_file(input_folder(base) / target.name, text.encode("utf-8")))
    plan.where[str(target)] = (argument, places)
    plan.columns[argument] = records.columns
    if argument == "private":
        plan.form = {"modality": "tabular", "kind": "frame", "columns": list(records.columns),
                     "given": list(records.given)}
    return []


def _check_same_columns(private: Sequence[str], public: Sequence[str], label: str) -> list[DataProblem]:
    """A problem when two in-memory tables differ in their feature columns (order aside). Checked here because the
    reader, comparing the written copies, could only name the copy inside ``secure/input/``."""
    missing = [name for name in private if name != label and name not in public]
    extra = [name for name in public if name not in private]
    if not (missing or extra):
        return []
    said = [f"lacks column(s) {', '.join(map(repr, missing))} that private has" if missing else "",
            f"has column(s) {', '.join(map(repr, extra))} that private lacks" if extra else ""]
    return [DataProblem("public", f"{' and '.join(part for part in said if part)}; the public table needs the "
                                  f"private table's columns, in any order (the label column {label!r} aside)")]


def _cell(value: Any) -> str:
    """A cell as CSV text: numbers exactly (``repr`` of a float round-trips), booleans and labels as text."""
    value = plain(value)
    if isinstance(value, bool):
        return label_text(value)
    return repr(value) if isinstance(value, float) else str(value)


def _csv_text(records: Records) -> tuple[str, dict[str, str]]:
    """The CSV of ``records`` and, per row as the table reader names it (``row N``: the line a record ends on, the
    header being row 1), the user's row index."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(records.columns)
    places, line = {}, 1
    for index, row in zip(records.index, records.rows, strict=True):
        start = buffer.tell()
        writer.writerow([_cell(row[column]) for column in records.columns])
        line += buffer.getvalue()[start:].count("\n")
        places[f"row {line}"] = repr(index)
    return buffer.getvalue(), places


# --- texts -------------------------------------------------------------------------------------------------------


def _plan_texts(plan: InputPlan, data: DataConfig, argument: str, value: object) -> list[DataProblem]:
    records = records_from(value, argument)
    labelled = argument in LABELLED
    text = data.text_column if labelled else (data.public_text_column or data.text_column)
    label = data.label_column
    needed = {text: "data.text_column" if labelled or not data.public_text_column else "data.public_text_column"}
    needed |= {label: "data.label_column"} if labelled else {}
    refused = {} if labelled else {label: "the public pool must be unlabelled (its labels are never used): drop it"}
    problems = check_columns(records, argument, needed, refused)
    if problems:
        return problems
    fields = [text, label] if labelled else [text]
    problems = check_kinds(records, argument, fields)
    problems += check_cells(records, argument, fields)
    problems += check_labels(records, argument, label, data.classes) if labelled else []
    if problems:
        return problems
    target = input_folder(plan.run_path) / f"{argument}.jsonl"
    # One JSON object per line, ASCII only, so that no line reader splits a record: line N is row N - 1.
    lines = [json.dumps({name: plain(row[name]) for name in fields}) for row in records.rows]
    payload = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
    plan.settings[f"data.{argument}"] = str(target)
    plan.writers.append(lambda base: _write_file(input_folder(base) / target.name, payload))
    plan.where[str(target)] = (argument, {f"line {n}": repr(index) for n, index in enumerate(records.index, 1)})
    if argument == "private":
        plan.form = {"modality": "text", "kind": "frame",
                     "columns": [name for name in records.columns if name in fields],
                     "given": [given for name, given in zip(records.columns, records.given) if name in fields]}
    return []


# --- images ------------------------------------------------------------------------------------------------------


def _plan_images(plan: InputPlan, data: DataConfig, argument: str, value: object) -> list[DataProblem]:
    labelled = argument in LABELLED
    if labelled:
        if not (isinstance(value, tuple) and len(value) == 2):
            raise TypeError(f"{argument} must be a folder path or a tuple (X, y) of numpy arrays for images; got "
                            f"{type(value).__name__}")
        images, labels = value
    else:
        images, labels = value, None
    if not isinstance(images, np.ndarray):
        raise TypeError(f"{argument}: X must be a numpy array of images (N×H×W or N×H×W×C); got "
                        f"{type(images).__name__}")
    # The array's place in messages: private's X, or the public argument itself ("public[4]", not
    # "public: public[4]").
    problems = _check_image_array(images, f"{argument}: X" if labelled else argument)
    if labelled:
        if data.classes is None:
            raise ValueError("in-memory images need their classes declared, in label order: "
                             "settings={\"data.classes\": [...]} (the classes are never read off the private labels)")
        problems += _check_image_labels(labels, len(images), argument, data.classes)
    if problems:
        return problems
    pixels = as_uint8(images)
    plan.image_sizes[argument] = (int(images.shape[1]), int(images.shape[2]))
    target = input_folder(plan.run_path) / argument
    plan.settings[f"data.{argument}"] = str(target)
    if labelled:
        classes = [label_text(name) for name in data.classes or ()]
        codes = np.array([classes.index(label_text(plain(y))) for y in np.asarray(labels, dtype=object)], np.int64)
        plan.writers.append(lambda base: _write_class_folders(input_folder(base) / target.name, pixels, codes,
                                                              classes))
        if argument == "private":
            plan.form = {"modality": "image", "kind": "arrays", "ndim": int(images.ndim),
                         "channels": int(images.shape[3]) if images.ndim == 4 else None}
    else:
        plan.writers.append(lambda base: _write_flat_folder(input_folder(base) / target.name, pixels))
    return []


def _check_image_array(images: np.ndarray, place: str) -> list[DataProblem]:
    """The shape, dtype and value range of an image array, each problem naming the array (``place``: "private: X",
    "public") or, for a value out of range, its first image at fault (``private: X[5]``)."""
    shape_ok = images.ndim == 3 or (images.ndim == 4 and images.shape[3] in (1, 3))
    if not shape_ok or len(images) == 0:
        return [DataProblem(place, f"has shape {images.shape}; images must be N×H×W (grey) or N×H×W×C with C 1 or "
                                   "3, N at least 1")]
    if images.dtype == np.uint8:
        return []
    if np.issubdtype(images.dtype, np.floating):
        bad = ~np.isfinite(images) | (images < 0) | (images > 1)
        what = "float pixels must lie in [0, 1]"
    elif np.issubdtype(images.dtype, np.integer) and images.dtype != np.bool_:
        # Only uint8 says its scale (0..255); reading another integer array's scale off its values would let the
        # private maximum decide how every image is read.
        return [DataProblem(place, f"has dtype {images.dtype}; whole-number images must be uint8 (0..255): "
                                   "X.astype(np.uint8) when they are, or floats in [0, 1] divided by your format's "
                                   "maximum (X / 16.0 for pixels 0..16)")]
    else:
        return [DataProblem(place, f"has dtype {images.dtype}; images must be uint8, or float in [0, 1]")]
    if not bad.any():
        return []
    first = int(np.flatnonzero(bad.reshape(len(images), -1).any(axis=1))[0])
    value = images[first][bad[first]].flat[0]
    return [DataProblem(f"{place}[{first}]", f"holds {plain(value)!r} (dtype {images.dtype}); {what}")]


def _check_image_labels(labels: object, n: int, argument: str, classes: Sequence[ClassLabel]) -> list[DataProblem]:
    """One label per image, each a declared class."""
    y = np.asarray(labels, dtype=object)
    if y.ndim != 1 or len(y) != n:
        return [DataProblem(f"{argument}: y", f"has shape {y.shape}; it needs one label per image, {n}")]
    known = {label_text(name) for name in classes}
    problems = []
    for index, value in enumerate(y):
        if is_missing(value):
            problems.append(DataProblem(f"{argument}: y[{index}]",
                                        f"{show_missing(value)}; every image needs a label",
                                        kind="a missing label; every image needs a label"))
        elif label_text(plain(value)) not in known:
            problems.append(DataProblem(f"{argument}: y[{index}]", f"unknown label {plain(value)!r}; declared "
                                                                   f"classes (data.classes) are {list(classes)}",
                                        kind=f"a label outside the declared classes {list(classes)}"))
    return problems


def as_uint8(images: np.ndarray) -> np.ndarray:
    """Checked images as ``uint8`` (N, H, W) or (N, H, W, 3): floats scaled from [0, 1], one channel dropped."""
    if np.issubdtype(images.dtype, np.floating):
        pixels = np.rint(images * 255.0).astype(np.uint8)
    else:
        pixels = images.astype(np.uint8)
    return pixels[..., 0] if pixels.ndim == 4 and pixels.shape[3] == 1 else pixels


def _write_class_folders(target: Path, pixels: np.ndarray, codes: np.ndarray, classes: Sequence[str]) -> None:
    from pcevolve.data.writers import write_image_folder

    write_image_folder(target, pixels, codes, classes)


def _write_flat_folder(target: Path, pixels: np.ndarray) -> None:
    """``target/public_<index>.png`` for every image, built under a temporary name."""
    from PIL import Image

    with atomic_directory(target) as staging:
        for index, image in enumerate(pixels):
            Image.fromarray(image).save(staging / f"public_{index:06d}.png", optimize=False)


def looks_in_memory(value: object) -> bool:
    """Whether ``value`` is one of the in-memory kinds fit() takes: a DataFrame, a list of dicts, ``(X, y)`` or an
    image array X (checked against the modality later)."""
    if is_frame(value) or isinstance(value, np.ndarray):
        return True
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], np.ndarray):
        return True
    return isinstance(value, list) and all(isinstance(row, Mapping) for row in value)
