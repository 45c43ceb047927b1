"""What leaves the secure zone: how figures computed on private samples are rounded before they ship, and the check
that a run folder's shared files hold no exact one.

An evaluation computes some figures on the private samples themselves (membership attacks, copy checks, models
trained on the private samples, distances between the private set and another). Shipped exactly, such a figure can
give the private set away: an attack's success, AUC or TPR is a ratio whose denominator is the member count, so
``Fraction(x).limit_denominator()`` returns the exact per-class count n_k; a total-variation distance over private
rows has the private row count in its denominator too. What a shared file (``RUN/report/``) carries is therefore
rounded here, by one rule for every modality; the exact figures go to ``RUN/secure/evaluation.json`` only:

* a rate, a share, an AUC or an accuracy: :data:`RATE_DECIMALS` (2) decimals (:func:`shared_rate`);
* a distance: 3 significant figures, but never more than :data:`DISTANCE_DECIMALS` (3) decimals — whichever of the
  two is coarser (:func:`shared_distance`: 563.21 → 563.0, 41.237 → 41.2, 0.01234 → 0.012).

Figures computed on public, synthetic or test data only ship as they are.

:func:`shipped_violations` is the acceptance rule, as code: in every ``*.json`` and ``*.jsonl`` file under a run
folder except ``secure/``, no float under a key containing one of :data:`PRIVATE_FIGURE_WORDS` (``attack``,
``member``, ``distance``; at any depth below such a key) carries more than :data:`MOST_DECIMALS` decimals, and no
string is an absolute path (a run folder's data may sit in a folder whose name says more than meant, e.g.
``/data/cardiology-2024/private``: shared files name a folder or file by its last part only, :func:`path_name`).
A key's name cannot say whether a private set shaped its value (a synthetic-vs-test distance did, through the batches
the private images shared with it), so :func:`dependence_violations` reads every key of the same run judged
against two private sets: what differs is private-derived and must be rounded, and nothing else may differ.
``bench/shipped_files.py`` runs both from the command line (``--against``).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

#: Decimals of a shared rate, share, AUC or accuracy computed on private samples.
RATE_DECIMALS = 2
#: Most decimals of a shared distance computed on private samples.
DISTANCE_DECIMALS = 3
#: Significant figures of a shared distance computed on private samples (when that is coarser than the decimals).
DISTANCE_FIGURES = 3
#: Key words under which :func:`shipped_violations` allows no float with more than :data:`MOST_DECIMALS` decimals.
PRIVATE_FIGURE_WORDS: tuple[str, ...] = ("attack", "member", "distance")
#: Most decimals a float under such a key may carry in a shared file.
MOST_DECIMALS = 3
#: The folder of a run that never leaves the secure zone (not checked: exact figures belong there).
SECURE_FOLDER = "secure"


# ------------------------------------------------------------------------------------------------ the rounding


def shared_rate(value: float | None) -> float | None:
    """A rate, share, AUC or accuracy computed on private samples, as a shared file carries it: rounded to
    :data:`RATE_DECIMALS` decimals (an exact one is a ratio over a private count, which it would give back).
    None, NaN and infinities become None."""
    if value is None or not math.isfinite(value):
        return None
    return round(float(value), RATE_DECIMALS)


def shared_distance(value: float | None) -> float | None:
    """A distance computed on private samples, as a shared file carries it: to 3 significant figures or 3 decimals,
    whichever is coarser (so never more than :data:`DISTANCE_DECIMALS` decimals). None, NaN and infinities become
    None."""
    if value is None or not math.isfinite(value):
        return None
    value = float(value)
    if value == 0.0:
        return 0.0
    figures = DISTANCE_FIGURES - 1 - math.floor(math.log10(abs(value)))
    return float(round(value, min(DISTANCE_DECIMALS, figures)))


def shown_distance(shipped: float | None, digits: int = 4) -> str:
    """A distance as it shipped (:func:`shared_distance`), for a reader: one that rounded to zero reads "≈ 0 (below
    0.001)" — an image MMD² is of the order of 1e-4, and a bare 0 (or -0) would say more than is known."""
    if shipped is None:
        return "—"
    if shipped == 0:
        return f"≈ 0 (below {10.0 ** -DISTANCE_DECIMALS:g})"
    return f"{shipped:.{digits}g}"


def shared_estimate(estimate: Mapping[str, float]) -> dict[str, float | None]:
    """An estimate's JSON (``value``, ``low``, ``high``; a rate) with every bound rounded by :func:`shared_rate`."""
    return {key: shared_rate(value) for key, value in estimate.items()}


def path_name(path: str | os.PathLike[str] | None) -> str | None:
    """The last part of a path (the folder's or file's own name), as a shared file names it: where it sits on the
    secure machine can say more than meant. None stays None."""
    if path is None:
        return None
    return Path(path).name or str(path)


# ------------------------------------------------------------------------------------------------ the check


@dataclass(frozen=True)
class Violation:
    """One value of a shared file that breaks the rule.

    Attributes:
        file: The file, relative to the folder checked.
        key: Where in it: a dotted key path (``[i]`` for a list item); for a JSON Lines file it starts with the line
            number (``3:terms.attack``).
        value: The value found.
        why: Which part of the rule it breaks.
    """

    file: str
    key: str
    value: Any
    why: str

    def __str__(self) -> str:
        return f"{self.file}: {self.key} = {self.value!r} ({self.why})"


def decimals(value: float) -> int:
    """Decimals of a float as JSON writes it (Python's shortest round-trip form): 0.53 → 2, 1e-05 → 5, 3.0 → 1;
    0 for NaN and infinities."""
    if not math.isfinite(value):
        return 0
    exponent = Decimal(repr(float(value))).as_tuple().exponent
    return max(0, -int(exponent))


# A whole string that is a POSIX absolute path (no line breaks, something after the first slash) or starts with a
# Windows drive or UNC share; and such a path inside a longer text, after a space, quote, bracket or "=" (at least two
# parts there, so that prose such as "tokens /s" is not taken for a path).
_WHOLE_PATH = re.compile(r"^(?:/[^\s/][^\n]*|[A-Za-z]:[\\/].*|\\\\[^\\\s]+\\.*)$", re.DOTALL)
_EMBEDDED_PATH = re.compile(r"(?:^|[\s\"'(\[=])(?:(?:/[\w.~+@-]+){2,}|[A-Za-z]:\\[\w.~+@ -]+)")


def looks_like_absolute_path(text: str) -> bool:
    """Whether ``text`` is, or contains, an absolute filesystem path: POSIX (``/data/x``), a Windows drive
    (``C:\\data``) or share (``\\\\server\\data``). URLs (``https://…``) and relative paths (``secure/x.json``) are
    not."""
    return bool(_WHOLE_PATH.match(text) or _EMBEDDED_PATH.search(text))


def json_violations(document: Any, *, file: str = "", prefix: str = "",
                    words: tuple[str, ...] = PRIVATE_FIGURE_WORDS, most_decimals: int = MOST_DECIMALS
                    ) -> list[Violation]:
    """Every violation of the rule in one parsed JSON document (see the module docstring), each named by ``file`` and
    its key path after ``prefix``. Only floats are limited: a count is an integer, and which counts may ship is the
    evaluation's own choice (its tests check that member and copy counts do not)."""
    return [Violation(file, prefix + key, value, why)
            for key, value, why in _walk(document, "", sensitive=False, words=words, most=most_decimals)]


def _walk(value: Any, key: str, *, sensitive: bool, words: tuple[str, ...], most: int
          ) -> Iterator[tuple[str, Any, str]]:
    if isinstance(value, Mapping):
        for name, item in value.items():
            name = str(name)
            if looks_like_absolute_path(name):
                yield _join(key, name), name, "absolute path as a key"
            below = sensitive or any(word in name.lower() for word in words)
            yield from _walk(item, _join(key, name), sensitive=below, words=words, most=most)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, f"{key}[{i}]", sensitive=sensitive, words=words, most=most)
    elif isinstance(value, str):
        if looks_like_absolute_path(value):
            yield key, value, "absolute path"
    elif isinstance(value, float) and sensitive and decimals(value) > most:
        yield key, value, f"{decimals(value)} decimals under a private-figure key; at most {most} may ship"


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name


def dependence_violations(first: Any, second: Any, *, file: str = "", most_decimals: int = MOST_DECIMALS
                          ) -> list[Violation]:
    """Every key of two shared documents that a private set decides beyond the rounding rule.

    ``first`` and ``second`` are the same shared file of one run judged against two different private sets (one
    sample more or less, a class smaller): whatever differs between them was computed on the private data. Every
    key is read, whatever its name: a float that differs must carry at most ``most_decimals`` decimals (a figure on
    public, synthetic or test data alone comes out bit for bit the same), and a key, a list's length or a value's
    type that differs says which private set was used and is a violation too.
    """
    found: list[Violation] = []
    _compare(first, second, "", file, most_decimals, found)
    return found


def _compare(a: Any, b: Any, key: str, file: str, most: int, found: list[Violation]) -> None:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for name in sorted(set(a) | set(b), key=str):
            if name not in a or name not in b:
                found.append(Violation(file, _join(key, str(name)), a.get(name, b.get(name)),
                                       "present with one private set only"))
            else:
                _compare(a[name], b[name], _join(key, str(name)), file, most, found)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            found.append(Violation(file, key, (len(a), len(b)), "a list whose length follows the private set"))
        for i, (x, y) in enumerate(zip(a, b)):
            _compare(x, y, f"{key}[{i}]", file, most, found)
    elif isinstance(a, bool) or isinstance(b, bool) or not (isinstance(a, (int, float))
                                                              and isinstance(b, (int, float))):
        if type(a) is not type(b) and not (a is None or b is None):
            found.append(Violation(file, key, (a, b), "a value whose type follows the private set"))
    elif a != b:
        worst = max((v for v in (a, b) if isinstance(v, float)), key=decimals, default=None)
        if worst is not None and decimals(worst) > most:
            found.append(Violation(file, key, worst, f"follows the private set with {decimals(worst)} decimals; at "
                                                     f"most {most} may ship"))


def shared_files(folder: str | os.PathLike[str]) -> list[Path]:
    """Every ``*.json`` and ``*.jsonl`` file under ``folder``, except under its ``secure/`` folder, sorted."""
    root = Path(folder)
    found = [path for pattern in ("*.json", "*.jsonl") for path in root.rglob(pattern)
             if path.is_file() and path.relative_to(root).parts[0] != SECURE_FOLDER]
    return sorted(found)


def file_violations(path: str | os.PathLike[str], *, name: str | None = None,
                    words: tuple[str, ...] = PRIVATE_FIGURE_WORDS, most_decimals: int = MOST_DECIMALS
                    ) -> list[Violation]:
    """Every violation in one JSON (or, by its ``.jsonl`` suffix, JSON Lines) file. A file that cannot be read or
    parsed is a violation itself: what cannot be checked must not pass."""
    path = Path(path)
    name = str(path) if name is None else name
    options = {"file": name, "words": words, "most_decimals": most_decimals}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return [Violation(name, "", None, f"unreadable: {error}")]
    documents = (enumerate(text.splitlines(), start=1) if path.suffix.lower() == ".jsonl" else [(0, text)])
    found = []
    for line, source in documents:
        if line and not source.strip():
            continue  # a blank line of a JSON Lines file holds nothing
        try:
            document = json.loads(source)
        except json.JSONDecodeError as error:
            found.append(Violation(name, f"{line}:" if line else "", None, f"not valid JSON: {error}"))
            continue
        found += json_violations(document, prefix=f"{line}:" if line else "", **options)
    return found


def shipped_violations(folder: str | os.PathLike[str], *, words: tuple[str, ...] = PRIVATE_FIGURE_WORDS,
                       most_decimals: int = MOST_DECIMALS) -> list[Violation]:
    """Every violation of the rule in the shared JSON files of ``folder`` (a run folder, or its ``report/``).

    Args:
        folder: The folder to check; its ``secure/`` folder is skipped.
        words: Key words under which floats are limited (default the acceptance rule's :data:`PRIVATE_FIGURE_WORDS`;
            a caller may check more keys).
        most_decimals: Most decimals a float under such a key may carry.

    Returns:
        The violations, file by file in path order; empty when the folder passes.
    """
    root = Path(folder)
    return [violation for path in shared_files(root)
            for violation in file_violations(path, name=path.relative_to(root).as_posix(), words=words,
                                             most_decimals=most_decimals)]
