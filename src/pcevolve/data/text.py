"""Texts: JSON Lines (one object per line) or a CSV with a header; the private file has a label field, the public
pool does not.

Every problem names ``file:line N`` (JSONL; CSV rows are numbered as a spreadsheet shows them, the header is row 1)
and the field: a line that is not a JSON object, an empty or missing text, a missing label, a file that is not
UTF-8, a class with fewer than ``min_per_class`` texts, a single class. A field that no record has is one problem
for the whole file, listing the fields its records do have and the setting that names the field
(``data.text_column``, ``data.public_text_column`` for the pool, ``data.label_column``). Blank lines are skipped.
Texts are kept as written (no stripping inside); surrounding whitespace is removed.

Labels. A CSV label is text. A JSON Lines label is one JSON value: text, a whole number or true/false — a list, an
object, null or a fractional number is an error naming the line (1.0 and 1 are the same JSON number, so a fraction
could not keep its spelling). A label's class is found by its text form (``0`` → "0", ``true`` → "true"), and
every label of one file has one JSON type: ``1`` on one line and ``"1"`` on another is one error naming both lines,
never two spellings merged into one class. Declared classes carry a type (``data.classes`` of a text run: ``0`` a
number, ``"0"`` text); a JSON Lines file whose labels have another type is an error saying what to change, so that
the delivered file writes its labels as the input did. The dataset keeps the type as ``label_type``.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.data.dataset import (
    ClassLabel,
    LabeledDataset,
    LabelType,
    UnlabeledSamples,
    label_text,
    label_type,
    typed_label,
)
from pcevolve.data.errors import CellProblem, DataError, DataProblem, name_some, not_utf8_problem, raise_if_problems
from pcevolve.data.tabular import _resolve_labels

#: How a label type is named in messages.
_TYPE_WORDS = {"text": "text", "number": "a number", "boolean": "a boolean"}
_PLURAL_WORDS = {"text": "text", "number": "numbers", "boolean": "booleans"}
_YAML_BOOLEANS = "YAML reads unquoted yes/no/on/off as booleans too: quote such classes in data.classes (\"yes\")"
_ONE_VALUE = "a label is one value: text, a whole number or true/false"


class UnlabeledTexts(UnlabeledSamples):
    """The public pool of texts: a 1-D unicode array and the line each came from."""

    modality = "text"

    def _checked(self, samples: Any, sources: Any) -> tuple[np.ndarray, tuple[str, ...]]:
        samples = np.asarray(samples)
        if samples.ndim != 1 or samples.dtype.kind != "U" or len(samples) != len(sources):
            raise ValueError(f"expected a 1-D unicode array with one source per text, got {samples.dtype} "
                             f"{samples.shape}")
        return samples, sources


def _is_csv(path: Path) -> bool:
    return path.suffix.lower() == ".csv"


def _records(path: Path) -> Iterator[tuple[str, dict[str, Any] | None, CellProblem | None]]:
    """``(where, record, problem)`` per non-blank line of a JSONL file or row of a CSV file."""
    if _is_csv(path):
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle, restval="")  # a short row's missing cells are empty
            for row in reader:
                if not any(isinstance(value, str) and value.strip() for value in row.values()):
                    continue
                # cells beyond the header sit under the key None: they belong to no field
                yield f"{path}:row {reader.line_num}", {k: v for k, v in row.items() if k is not None}, None
        return
    with open(path, encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:line {number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                yield where, None, CellProblem("is not valid JSON", f"is not valid JSON ({error.msg})")
                continue
            except RecursionError:
                yield where, None, CellProblem("is not JSON that can be read",
                                               "is not JSON that can be read (nested too deeply)")
                continue
            except ValueError as error:  # an integer of over 4,300 digits
                yield where, None, CellProblem("is not JSON that can be read",
                                               f"is not JSON that can be read ({str(error).split(':')[0]})")
                continue
            if not isinstance(record, dict):
                yield where, None, _fixed("is not a JSON object")
                continue
            yield where, record, None


def _is_unicode(text: str) -> bool:
    """False for a JSON string holding an unpaired surrogate escape (``"\\ud800"``): valid JSON, but not text that
    can be written or hashed."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _fixed(what: str) -> CellProblem:
    """A problem whose message names no value of its own: its own kind."""
    return CellProblem(what, what)


#: A field that holds no surrogate-free text.
_SURROGATE = _fixed("holds an unpaired surrogate escape (such as \\ud800), which is not text")


def _text_of(record: dict[str, Any], text_field: str) -> tuple[str | None, CellProblem | None]:
    """``(the text, None)``, or ``(None, what is wrong with the field)``."""
    if text_field not in record:
        return None, _fixed("is missing")
    text = record[text_field]
    if text is None:
        return None, _fixed("is missing (null)")
    if not isinstance(text, str):
        return None, CellProblem("is not a string", f"is not a string (it is {json.dumps(text)[:40]})")
    if not _is_unicode(text):
        return None, _SURROGATE
    if not text.strip():
        return None, _fixed("is empty")
    return text.strip(), None


def _label_of(record: dict[str, Any], label_field: str) -> tuple[ClassLabel | None, CellProblem | None]:
    """``(the label, None)`` — stripped text, a whole number or a boolean — or ``(None, what is wrong)``."""
    if label_field not in record:
        return None, _fixed("is missing")
    label = record[label_field]
    if label is None:
        return None, _fixed("is missing (null)")
    if isinstance(label, (bool, int)):
        return label, None
    if isinstance(label, float):
        fix = "" if not math.isfinite(label) else (f": write it as {int(label)} or as text (\"{label}\")"
                                                    if label.is_integer() else f": write it as text (\"{label}\")")
        return None, CellProblem("is a decimal number; a label is text, a whole number (no decimal point) or "
                                 "true/false",
                                 f"is {json.dumps(label)}, a decimal number; a label is text, a whole number (no "
                                 f"decimal point) or true/false{fix}")
    if isinstance(label, (list, dict)):
        return None, _fixed(f"is {'a list' if isinstance(label, list) else 'an object'}; {_ONE_VALUE}")
    if not _is_unicode(label):
        return None, _SURROGATE
    if not label.strip():
        return None, _fixed("is empty")
    return label.strip(), None


@dataclass
class _Scan:
    """What one pass over a file found.

    Attributes:
        texts, labels, sources: The usable records' texts, labels (empty for a pool) and lines.
        problems: Per-line problems, in file order.
        missing: The problems that say a field is missing, by field (dropped for one file-level problem when no
            record has the field).
        fields: Every field name the records have, in order of first appearance; True where some record holds
            text in it (candidates for the text field).
        records: How many records (non-blank lines that are JSON objects, or CSV rows) the file has.
        labelled: The lines of records carrying the label field (a pool must have none).
    """

    texts: list[str] = field(default_factory=list)
    labels: list[ClassLabel] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    problems: list[DataProblem] = field(default_factory=list)
    missing: dict[str, list[DataProblem]] = field(default_factory=dict)
    fields: dict[str, bool] = field(default_factory=dict)
    records: int = 0
    labelled: list[str] = field(default_factory=list)

    def note(self, record: dict[str, Any]) -> None:
        self.records += 1
        for name, value in record.items():
            self.fields[name] = self.fields.get(name, False) or (isinstance(value, str) and bool(value.strip()))

    def add(self, where: str, name: str, role: str, what: CellProblem) -> None:
        problem = DataProblem(where, f"field {name!r} ({role}) {what}", kind=f"field {name!r} ({role}) {what.kind}")
        self.problems.append(problem)
        if what.kind == "is missing":
            self.missing.setdefault(name, []).append(problem)


def _scan(path: Path, text_field: str, label_field: str, *, labelled: bool) -> _Scan:
    """Read every record of ``path``; a labelled file's records need ``label_field``, a pool's must lack it."""
    scan = _Scan()
    try:
        for where, record, problem in _records(path):
            if record is None:
                problem = problem or _fixed("unreadable")
                scan.problems.append(DataProblem(where, str(problem), kind=problem.kind))
                continue
            scan.note(record)
            if not labelled and label_field in record:
                scan.labelled.append(where)
            text, what = _text_of(record, text_field)
            if text is None:
                scan.add(where, text_field, "the text", what or _fixed("is not usable"))
                continue
            if labelled:
                label, what = _label_of(record, label_field)
                if label is None:
                    scan.add(where, label_field, "the label", what or _fixed("is not usable"))
                    continue
                scan.labels.append(label)
            scan.texts.append(text)
            scan.sources.append(where)
    except UnicodeDecodeError:
        raise DataError([not_utf8_problem(path, unit="line")]) from None
    except csv.Error as error:
        raise DataError(scan.problems + [DataProblem(str(path), f"malformed CSV: {error}")]) from None
    return scan


def _absent_field(path: Path, scan: _Scan, name: str, role: str, setting: str, others: set[str], *,
                  text: bool) -> bool:
    """When no record of the file has field ``name``, replace its per-line "is missing" problems by one problem for
    the file that lists the fields the records have and says which setting to change — to which field, when exactly
    one field other than ``others`` could be it (holds text, for a ``text`` field). Returns whether it did."""
    if scan.records == 0 or name in scan.fields:
        return False
    dropped = {id(problem) for problem in scan.missing.get(name, [])}
    scan.problems = [problem for problem in scan.problems if id(problem) not in dropped]
    have = name_some([repr(f) for f in scan.fields]) or "no fields"
    candidates = [f for f, holds_text in scan.fields.items()
                  if (holds_text or not text) and f not in others and _is_unicode(f)]  # printable as it is
    init = setting.replace("data.", "--set data.")
    fix = (f"set {setting}: {candidates[0]} (pcevolve init: {init}={candidates[0]})" if len(candidates) == 1
           else f"set {setting} to the field that holds {role}")
    if _is_csv(path):
        message = f"no column {name!r} ({role}); its columns are {have}: {fix}"
    else:
        message = f"no record has field {name!r} ({role}); its records have fields {have}: {fix}"
    scan.problems.insert(0, DataProblem(str(path), message))
    return True


def _open(path: str | Path, *, may_be_empty: bool) -> Path:
    path = Path(path)
    if not path.is_file():
        raise DataError([DataProblem(str(path), "file does not exist")])
    if path.stat().st_size == 0 and not may_be_empty:
        raise DataError([DataProblem(str(path), "empty file (0 bytes)")])
    return path


def _line(where: str) -> str:
    return where.rsplit(":", 1)[1]


def _file_label_type(path: Path, labels: list[ClassLabel], sources: list[str]) -> tuple[LabelType | None,
                                                                                         list[DataProblem]]:
    """The one JSON type of a file's labels (None when it has none), or a problem naming the first line of each."""
    first: dict[LabelType, int] = {}
    for row, label in enumerate(labels):
        first.setdefault(label_type(label), row)
    if len(first) <= 1:
        return next(iter(first), None), []
    found = ", ".join(f"{_line(sources[row])} has label {json.dumps(labels[row], ensure_ascii=False)} "
                      f"({_TYPE_WORDS[kind]})" for kind, row in first.items())
    return None, [DataProblem(str(path), f"the labels mix JSON types: {found}; give every label one type (all quoted "
                                         "as text, or none) so that each class has one spelling")]


def _declared_type(class_names: Sequence[ClassLabel]) -> LabelType:
    kinds = {label_type(name) for name in class_names}
    if len(kinds) != 1:
        raise ValueError(f"class_names mix label types ({sorted(kinds)}): {list(class_names)}")
    return kinds.pop()


def _type_mismatch(path: Path, found: LabelType, first: tuple[str, ClassLabel], declared: LabelType,
                   class_names: Sequence[ClassLabel]) -> DataProblem:
    """The problem of a file whose labels have another JSON type than the declared classes, with the fixes."""
    where, label = first
    said = (f"the labels are {_PLURAL_WORDS[found]} ({_line(where)}: {json.dumps(label, ensure_ascii=False)}) but "
            f"data.classes declares {_PLURAL_WORDS[declared]} ({json.dumps(list(class_names), ensure_ascii=False)})")
    if declared == "boolean" and found == "text":  # most likely [yes, no] unquoted in the YAML file
        return DataProblem(str(path), f"{said}; YAML reads unquoted yes/no/on/off/true/false as booleans: quote each "
                                      "class in data.classes as the labels spell it (\"yes\")")
    try:
        retyped = json.dumps([typed_label(label_text(name), found) for name in class_names], ensure_ascii=False)
        fix = f"write data.classes: {retyped} to keep the labels as they are"
    except ValueError:  # the declared names cannot be labels of the file's type ("bad" is no number)
        fix = "declare the classes with the labels' type"
    return DataProblem(str(path), f"{said}: {fix}, or write every label in the file as {_PLURAL_WORDS[declared]}")


def _label_type_of(path: Path, scan: _Scan, class_names: Sequence[ClassLabel] | None) -> tuple[LabelType,
                                                                                                list[DataProblem]]:
    """The dataset's label type — the declared classes', else the file's (CSV: text) — and the problems so far,
    a mix of types among them.

    Raises:
        DataError: A JSON Lines file's labels have another type than the declared classes (each label would also
            be "unknown": one problem, with the fix, instead).
    """
    found, mixed = (None, []) if _is_csv(path) else _file_label_type(path, scan.labels, scan.sources)
    problems = scan.problems + mixed
    if class_names is None:
        return found or "text", problems
    wanted = _declared_type(class_names)
    if found is not None and found != wanted:  # every label has the type found: the first one shows it
        raise DataError(problems + [_type_mismatch(path, found, (scan.sources[0], scan.labels[0]), wanted,
                                                   class_names)])
    return wanted, problems


def read_labeled_texts(path: str | Path, *, text_field: str = "text", label_field: str = "label",
                       class_names: Sequence[ClassLabel] | None = None, min_per_class: int = 2) -> LabeledDataset:
    """Labelled texts from a JSONL or CSV file (a ``"text"`` dataset: ``samples`` a 1-D unicode array).

    ``class_names`` are the declared classes with their label type (``data.classes``; ``dataset.class_labels`` of
    a file read before): a JSON Lines file's labels must have that type. Without them the classes are the labels'
    text forms, in natural order. The dataset's ``label_type`` is the declared type, else the file's.

    With declared ``class_names`` and ``min_per_class`` 0 (how a run reads its private texts) a file with no
    texts is accepted: whether a run proceeds must not depend on how many private texts there are.

    Raises:
        DataError: Every problem found, each naming its line and field.
        ValueError: ``class_names`` repeat a text form or mix label types (a caller's mistake, not the data's).
    """
    declared = class_names is not None
    path = _open(path, may_be_empty=declared and min_per_class == 0)
    scan = _scan(path, text_field, label_field, labelled=True)
    absent = [_absent_field(path, scan, text_field, "the text", "data.text_column", {label_field}, text=True),
              _absent_field(path, scan, label_field, "the label", "data.label_column", {text_field}, text=False)]
    if any(absent):  # what else could be said of the labels (every class empty) would only hide the fix
        raise DataError(scan.problems)
    kind, problems = _label_type_of(path, scan, class_names)
    if not scan.texts and not problems and not (declared and min_per_class == 0):
        problems.append(DataProblem(str(path), "no texts"))
    texts = [label_text(label) for label in scan.labels]
    known = None if class_names is None else [label_text(name) for name in class_names]
    names, labels, label_problems = _resolve_labels(path, texts, scan.sources, known, min_per_class)
    problems += [_in_text_terms(problem, kind) for problem in label_problems]
    if len(names) == 1 and not problems and not declared:
        problems.append(DataProblem(str(path), f"every text has label {names[0]!r}; a labelled synthetic set needs "
                                               "at least two classes: declare the task's classes (data.classes; "
                                               "init: --set data.classes=[a,b]); a class may have no texts"))
    raise_if_problems(problems)
    return LabeledDataset(samples=np.array(scan.texts, dtype=str), labels=labels, class_names=names,
                          modality="text", sources=tuple(scan.sources), label_type=kind)


def _in_text_terms(problem: DataProblem, kind: LabelType) -> DataProblem:
    """A label problem of the shared resolver, said of texts (and, for declared booleans, with YAML's reading)."""
    message = problem.message.replace("row(s)", "text(s)")
    if kind == "boolean" and message.startswith("unknown label"):
        message += f" ({_YAML_BOOLEANS})"
    return replace(problem, message=message)


def read_unlabeled_texts(path: str | Path, *, text_field: str = "text", label_field: str = "label",
                         setting: str = "data.public_text_column") -> UnlabeledTexts:
    """The public pool of texts; a record carrying the private files' label field is refused (the pool must be
    unlabelled: its labels are never used). ``setting`` is what names ``text_field`` in the config, for the
    message when no record has it.

    Raises:
        DataError: Every problem found, each naming its line and field.
    """
    path = _open(path, may_be_empty=False)
    scan = _scan(path, text_field, label_field, labelled=False)
    _absent_field(path, scan, text_field, "the text", setting, {label_field}, text=True)
    problems = scan.problems
    if scan.labelled:
        problems.append(DataProblem(scan.labelled[0], f"has the label field {label_field!r} ({len(scan.labelled)} "
                                                      "record(s) do); the public pool must be unlabelled (its labels "
                                                      "are never used): remove that field"))
    if not scan.texts and not problems:
        problems.append(DataProblem(str(path), "no texts"))
    raise_if_problems(problems)
    return UnlabeledTexts(np.array(scan.texts, dtype=str), tuple(scan.sources))


def fields_of(path: str | Path) -> dict[str, bool]:
    """Every field name the records of a JSONL or CSV file have, in order of first appearance, and whether some
    record holds text in it (what ``pcevolve init`` looks at to find a pool's text field); empty for a file that
    cannot be read (its reader says why)."""
    scan = _Scan()
    try:
        for _, record, _ in _records(Path(path)):
            if record is not None:
                scan.note(record)
    except (OSError, UnicodeDecodeError, csv.Error):
        return {}
    return scan.fields
