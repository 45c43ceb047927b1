"""Texts: JSON Lines (one object per line) or a CSV with a header; the private file has a label field, the public
pool does not.

Every problem names ``file:line N`` (JSONL; CSV rows are numbered as a spreadsheet shows them, the header is row 1)
and the field: a line that is not a JSON object, an empty or missing text, a missing label, a file that is not
UTF-8, a class with fewer than ``min_per_class`` texts, a single class. Blank lines are skipped. Texts are kept as
written (no stripping inside); surrounding whitespace is removed.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.data.dataset import LabeledDataset
from pcevolve.data.errors import DataError, DataProblem, not_utf8_problem, raise_if_problems
from pcevolve.data.hashing import combined_hash, sample_hashes
from pcevolve.data.tabular import _resolve_labels


@dataclass(frozen=True, eq=False)
class UnlabeledTexts:
    """The public pool of texts: a 1-D unicode array and the line each came from."""

    samples: np.ndarray
    sources: tuple[str, ...]

    def __post_init__(self) -> None:
        samples = np.asarray(self.samples)
        if samples.ndim != 1 or samples.dtype.kind != "U" or len(samples) != len(self.sources):
            raise ValueError(f"expected a 1-D unicode array with one source per text, got {samples.dtype} "
                             f"{samples.shape}")
        view = samples.view()
        view.setflags(write=False)
        object.__setattr__(self, "samples", view)

    def __len__(self) -> int:
        return len(self.sources)

    def sample_hashes(self) -> list[str]:
        return sample_hashes(self.samples)

    def fingerprint(self) -> dict[str, Any]:
        return {"modality": "text", "n_samples": len(self),
                "sha256": combined_hash(["unlabeled", *sorted(self.sample_hashes())])}


def _records(path: Path) -> Iterator[tuple[str, dict[str, Any] | None, str | None]]:
    """``(where, record, problem)`` per non-blank line of a JSONL file or row of a CSV file."""
    if path.suffix.lower() == ".csv":
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            for row in reader:
                if not any((value or "").strip() for value in row.values()):
                    continue
                yield f"{path}:row {reader.line_num}", dict(row), None
        return
    with open(path, encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:line {number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                yield where, None, f"is not valid JSON ({error.msg})"
                continue
            if not isinstance(record, dict):
                yield where, None, "is not a JSON object"
                continue
            yield where, record, None


def _read(path: str | Path, text_field: str, label_field: str | None, *, may_be_empty: bool = False,
          ) -> tuple[list[str], list[str], list[str], list[DataProblem]]:
    path = Path(path)
    if not path.is_file():
        raise DataError([DataProblem(str(path), "file does not exist")])
    if path.stat().st_size == 0 and not may_be_empty:
        raise DataError([DataProblem(str(path), "empty file (0 bytes)")])
    texts, labels, sources, problems = [], [], [], []
    try:
        for where, record, problem in _records(path):
            if record is None:
                problems.append(DataProblem(where, problem or "unreadable"))
                continue
            text = record.get(text_field)
            if not isinstance(text, str) or not text.strip():
                what = "is missing" if text_field not in record else "is empty" if isinstance(text, str) else \
                    "is not a string"
                problems.append(DataProblem(where, f"field {text_field!r} (the text) {what}"))
                continue
            if label_field is not None:
                label = record.get(label_field)
                if label is None or not str(label).strip():
                    problems.append(DataProblem(where, f"field {label_field!r} (the label) is missing or empty"))
                    continue
                labels.append(str(label).strip())
            texts.append(text.strip())
            sources.append(where)
    except UnicodeDecodeError:
        raise DataError([not_utf8_problem(path, unit="line")]) from None
    except csv.Error as error:
        raise DataError(problems + [DataProblem(str(path), f"malformed CSV: {error}")]) from None
    if not texts and not problems and not may_be_empty:
        problems.append(DataProblem(str(path), "no texts"))
    return texts, labels, sources, problems


def read_labeled_texts(path: str | Path, *, text_field: str = "text", label_field: str = "label",
                       class_names: Sequence[str] | None = None, min_per_class: int = 2) -> LabeledDataset:
    """Labelled texts from a JSONL or CSV file (a ``"text"`` dataset: ``samples`` a 1-D unicode array).

    With declared ``class_names`` and ``min_per_class`` 0 (how a run reads its private texts) a file with no
    texts is accepted: whether a run proceeds must not depend on how many private texts there are.

    Raises:
        DataError: Every problem found, each naming its line and field.
    """
    declared = class_names is not None
    texts, label_texts, sources, problems = _read(path, text_field, label_field,
                                                  may_be_empty=declared and min_per_class == 0)
    names, labels, label_problems = _resolve_labels(Path(path), label_texts, sources, class_names, min_per_class)
    problems += [DataProblem(p.path, p.message.replace("row(s)", "text(s)")) for p in label_problems]
    if len(names) == 1 and not problems and not declared:
        problems.append(DataProblem(str(path), f"every text has label {names[0]!r}; a labelled synthetic set needs "
                                               "at least two classes: declare the task's classes (data.classes; "
                                               "init: --set data.classes=[a,b]); a class may have no texts"))
    raise_if_problems(problems)
    return LabeledDataset(samples=np.array(texts, dtype=str), labels=labels, class_names=names, modality="text",
                          sources=tuple(sources))


def read_unlabeled_texts(path: str | Path, *, text_field: str = "text", label_field: str = "label") -> UnlabeledTexts:
    """The public pool of texts; a record carrying the private files' label field is refused (the pool must be
    unlabelled: its labels are never used).

    Raises:
        DataError: Every problem found, each naming its line and field.
    """
    texts, _, sources, problems = _read(path, text_field, None)
    labelled = [where for where, record, _ in _records(Path(path)) if record is not None and label_field in record]
    if labelled:
        problems.append(DataProblem(labelled[0], f"has the label field {label_field!r} ({len(labelled)} record(s) "
                                                 "do); the public pool must be unlabelled (its labels are never "
                                                 "used): remove that field"))
    raise_if_problems(problems)
    return UnlabeledTexts(np.array(texts, dtype=str), tuple(sources))
