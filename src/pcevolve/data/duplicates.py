"""Duplicate samples across splits: the same content in private/ and test/ leaks the test.

Samples are compared by content hash (decoded pixels or feature values, see
:mod:`pcevolve.data.hashing`), so a renamed or re-encoded copy is still caught.
Samples are comparable only when read the same way (same size and mode).
Repeats inside one split are not reported here.

Between the private set and the public pool a shared sample is never a problem, only a console warning
(:mod:`pcevolve.data.assumptions`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from pcevolve.data.dataset import LabeledDataset, UnlabeledImages
from pcevolve.data.errors import DataProblem, raise_if_problems


def find_duplicates(splits: Mapping[str, LabeledDataset | UnlabeledImages], *,
                    may_share: Collection[tuple[str, str]] = ()) -> list[DataProblem]:
    """Samples whose content appears in more than one split.

    Args:
        splits: Split name (``"private"``, ``"test"``, ...) to its data.
        may_share: Pairs of split names (either order) whose shared samples are not problems: the private set
            and its public pool (:mod:`pcevolve.data.assumptions` warns about those instead).

    Returns:
        One problem per sample that repeats content from an earlier split (in mapping
        order), naming both files and both splits; empty if the splits are disjoint.
    """
    allowed = {frozenset(pair) for pair in may_share}
    first_seen: dict[str, tuple[str, str]] = {}
    problems: list[DataProblem] = []
    for split, data in splits.items():
        seen_here: dict[str, str] = {}
        for digest, source in zip(data.sample_hashes(), data.sources):
            earlier = first_seen.get(digest)
            if earlier is not None and earlier[0] != split and frozenset((earlier[0], split)) not in allowed:
                problems.append(
                    DataProblem(
                        source,
                        f"same content as {earlier[1]} (split {earlier[0]!r}, this is {split!r}); "
                        "a sample must be in one split only",
                    )
                )
            seen_here.setdefault(digest, source)
        for digest, source in seen_here.items():
            first_seen.setdefault(digest, (split, source))
    return problems


def check_disjoint(splits: Mapping[str, LabeledDataset | UnlabeledImages]) -> None:
    """Raise :class:`~pcevolve.data.errors.DataError` if any content appears in two splits."""
    raise_if_problems(find_duplicates(splits))
