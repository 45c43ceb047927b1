"""Data problems are collected, not thrown one at a time.

Readers walk the whole input, record every problem as a :class:`DataProblem`
naming the file (or ``file.csv:row N``) and raise a single :class:`DataError`
at the end, so a user fixes everything in one pass instead of one error per run.
Recoverable oddities (mixed image modes that were converted) are a
:class:`DataWarning`, never silent.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class DataProblem:
    """One thing wrong with the input.

    Attributes:
        path: The file, folder or ``file.csv:row N`` the problem is in.
        message: What is wrong, phrased so the user knows what to fix.
        kind: What is wrong without this row's own values (``column 'income' is not a number``), when the message
            holds them: problems of one kind are shown together and counted past the first few
            (:func:`problem_lines`). Empty: the message is its own kind.
    """

    path: str
    message: str
    kind: str = ""

    @property
    def group(self) -> str:
        """What :func:`problem_lines` groups by: the kind, else the message."""
        return self.kind or self.message

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class CellProblem:
    """What is wrong with one value (a cell, a field of a record): ``kind`` is the same for every value it happens to,
    ``message`` names this value."""

    kind: str
    message: str

    def __str__(self) -> str:
        return self.message


class DataError(ValueError):
    """Bad input data; carries every problem found, each naming its file or row.

    Attributes:
        problems: The problems, in the order they were found (never empty).
    """

    def __init__(self, problems: Iterable[DataProblem]) -> None:
        self.problems: tuple[DataProblem, ...] = tuple(problems)
        if not self.problems:
            raise ValueError("DataError needs at least one problem")
        count = len(self.problems)
        header = "1 problem in the data:" if count == 1 else f"{count} problems in the data:"
        super().__init__("\n".join([header, *(f"  {line}" for line in problem_lines(self.problems))]))


class PathKindError(DataError):
    """The paths given do not exist, are of a kind pcevolve does not read, or do not go with the private data's kind:
    what needs fixing is the command (its arguments), not the files."""


def not_utf8_problem(path: str | os.PathLike[str], *, unit: str) -> DataProblem:
    """The problem of a file that is not UTF-8, at the first line (``unit``: "row" for a table, "line" for JSON
    Lines) that does not decode, so that a user can find the character; the decoder's own message gives only a
    position inside a read buffer."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as error:
                character = len(raw[:error.start].decode("utf-8")) + 1  # everything before the first bad byte decodes
                return DataProblem(f"{path}:{unit} {number}",
                                   f"not UTF-8 text (byte 0x{raw[error.start]:02x}, character {character} of the "
                                   "line); save the file with the UTF-8 encoding")
    return DataProblem(str(path), "not UTF-8 text; save the file with the UTF-8 encoding")


#: How many problems of one kind :func:`problem_lines` shows before it counts the rest (with the count's line, no
#: kind of problem takes more than 11 lines, whatever the file's size).
SHOWN_PER_KIND = 10


def problem_lines(problems: Iterable[DataProblem], *, shown_per_kind: int = SHOWN_PER_KIND) -> list[str]:
    """One line per problem, except that a kind shared by more than ``shown_per_kind`` problems (the public pool
    given as the private folder: 20,000 times "image outside a class folder"; a word in a numeric column on every
    row) shows its first ones and then one line counting the rest; the lines keep the order the problems were found
    in."""
    problems = list(problems)
    totals = Counter(problem.group for problem in problems)
    seen: Counter[str] = Counter()
    lines = []
    for problem in problems:
        seen[problem.group] += 1
        if seen[problem.group] <= shown_per_kind:
            lines.append(str(problem))
        if seen[problem.group] == shown_per_kind and totals[problem.group] > shown_per_kind:
            rest = totals[problem.group] - shown_per_kind
            lines.append(f"… and {rest} more with the same problem: {problem.group}")
    return lines


class DataWarning(UserWarning):
    """Input was usable but was changed on reading (e.g. converted image modes); names the files."""


def raise_if_problems(problems: Iterable[DataProblem]) -> None:
    """Raise :class:`DataError` carrying ``problems`` if there are any."""
    collected = tuple(problems)
    if collected:
        raise DataError(collected)


def name_some(items: Iterable[str], *, limit: int = 10) -> str:
    """``a, b, c and 12 more``: a readable list that stays short for large inputs."""
    items = list(items)
    shown = ", ".join(items[:limit])
    if len(items) > limit:
        shown += f" and {len(items) - limit} more"
    return shown
