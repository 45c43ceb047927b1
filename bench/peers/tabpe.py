"""Tab-PE (tabular Private Evolution, microsoft/DPSDA) as a system of ``bench/tabular_peers.py``: its virtual
environment, its code, and one synthesis run by ``bench/peers/tabpe_runner.py``.

The DPSDA library is not on PyPI. Its ``pe/`` package is copied out of a git snapshot of
https://github.com/microsoft/DPSDA (``--tabpe-source``: a clone or a bare git directory; default
``bench/.cache/DPSDA``, made with ``git clone https://github.com/microsoft/DPSDA bench/.cache/DPSDA``) at the pinned
commit ``--tabpe-commit`` (default :data:`TABPE_COMMIT`, the snapshot this bench was measured with) into
``bench/.cache/tabpe-COMMIT/pe/`` (git-ignored, never committed). Every result row records that commit.

Its environment is ``--tabpe-venv`` (default ``bench/.venv-tabpe``), created on first use with ``python3 -m venv``,
then ``pip install torch==2.13.0`` first (pip takes the CPU wheel where the machine has one; any other torch spec
pulls the CUDA build), then :data:`TABPE_PACKAGES`. The image and LLM packages that ``pe/`` imports at module level
(torchvision, clean-fid, fld, CLIP, …) are never installed: the runner stands in empty modules for them, which the
tabular path never calls.

What Tab-PE is fed — the same public knowledge as the other peers, no private statistic:

* the feature columns and their types, bounds and categories from the DECLARED schema (``schema.yaml``, drafted from
  the public table), handed over as the ``info`` Tab-PE's API and embedding read — where its examples call
  ``TabularCSV.get_tab_info()``, which reads bounds and categories off the private rows;
* a private CSV with exactly the schema's columns (numbers clipped to the schema bounds, as every system clips them)
  and the label, plus the metadata JSON its ``TabularCSV`` reads (categorical / integer / float / label columns);
* the declared classes in the bench's order, and UNIFORM class fractions (``fraction_per_label_id = [1] * K``):
  Tab-PE otherwise takes the private class proportions as public; uniform is what pcevolve delivers too
  (``synthetic_per_class`` rows per class).

Hyper-parameters: Tab-PE's example for a small table (``example/tabular/breast_cancer.py`` at the pinned commit),
:data:`EXAMPLE`, except the number of synthetic rows: the examples use 150 to 5,000 (a choice of the user's), the
bench asks for ``--rows`` like every other system, so ``num_samples`` is ``--rows`` in every iteration unless
``--tabpe-samples N`` sets it (then the final selected rows are topped up to ``--rows`` by Tab-PE's own variation
API at its last mutation rate: post-processing, no privacy cost). (ε, δ) is spent through Tab-PE's own accounting
(``PE.run(epsilon=ε, delta=δ)``: the Gaussian mechanism on each iteration's nearest-neighbour histogram, composed
over the iterations as Gaussian DP). The synthetic set is the last iteration's selected rows (variation fold -1),
as its examples evaluate. Its noise is numpy's, seeded with the run's seed, so a rerun at one seed repeats.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

from peers.tabular_data import Table, write_table_csv

#: The DPSDA snapshot this bench was measured with (2026-07 "add clip and raw pixel embeddings for images").
TABPE_COMMIT = "9078c67995499e6769113780200bbf1d788d3d60"
TABPE_TORCH = "torch==2.13.0"
TABPE_PACKAGES = ("numpy", "pandas", "scipy", "scikit-learn", "matplotlib", "omegaconf<2.4", "tqdm", "imageio",
                  "Pillow", "generalimport", "requests", "faiss-cpu", "POT")
RUNNER = Path(__file__).resolve().with_name("tabpe_runner.py")
CACHE = Path("bench/.cache")

#: Tab-PE's small-table example (example/tabular/breast_cancer.py at TABPE_COMMIT), all but ``num_samples``.
EXAMPLE: dict[str, Any] = {
    "num_iterations": 20,  # num_samples_schedule = [num_samples] * 20: 19 private iterations
    "example_num_samples": 150,
    "mutation_rate_init": 0.5, "mutation_rate_final": 0.01, "decay_type": "polynomial", "gamma": 0.2,
    "embedding": {"cat_weight": 1 / 3, "num_weight": 1.0},  # TabularEmbedding's defaults
    "histogram": {"mode": "L2", "lookahead_degree": 0, "backend": "torch"},
    # CompositePopulation([population1] * 5 + [population2] * 15)
    "sample_phase": {"iterations": 5, "initial_variation_api_fold": 0, "next_variation_api_fold": 1,
                     "keep_selected": False, "selection_mode": "sample", "histogram_threshold": 0},
    "rank_phase": {"initial_variation_api_fold": 3, "next_variation_api_fold": 3, "keep_selected": True,
                   "selection_mode": "rank"},
    "synthetic_set": "last iteration, variation fold -1 (the selected rows)",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Tab-PE's options of ``bench/tabular_peers.py``."""
    parser.add_argument("--tabpe-venv", type=Path, default=Path("bench/.venv-tabpe"))
    parser.add_argument("--tabpe-source", type=Path, default=CACHE / "DPSDA",
                        help="a clone (or bare git directory) of github.com/microsoft/DPSDA holding --tabpe-commit")
    parser.add_argument("--tabpe-commit", default=TABPE_COMMIT)
    parser.add_argument("--tabpe-samples", type=int, default=None,
                        help="Tab-PE's num_samples per iteration (default: --rows); fewer are topped up to --rows by "
                             "its variation API after the last iteration")


def tabpe_python(venv: Path, *, install: bool) -> Path:
    """Tab-PE's interpreter; the venv is created and its packages installed on first use (module docstring)."""
    python = venv / "bin" / "python"
    probe = "import torch, numpy, pandas, scipy, sklearn, omegaconf, generalimport, faiss, ot, tqdm, imageio, PIL"
    if python.exists() and subprocess.run([str(python), "-c", probe], capture_output=True,
                                          check=False).returncode == 0:
        return python
    if not install:
        raise SystemExit(f"{venv} lacks Tab-PE's packages; run without --no-install to create it")
    base = shutil.which("python3") or sys.executable
    print(f"creating {venv} ({base} -m venv) and installing {TABPE_TORCH}, then {' '.join(TABPE_PACKAGES)} "
          "(minutes)", flush=True)
    if not python.exists():
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", TABPE_TORCH], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *TABPE_PACKAGES], check=True)
    return python


def tabpe_code(source: Path, commit: str) -> Path:
    """``bench/.cache/tabpe-COMMIT``, holding DPSDA's ``pe/`` package at ``commit`` (copied from ``source`` once).

    Raises:
        FileNotFoundError: Neither the cache nor ``source`` exists (the bench then skips Tab-PE, saying so).
        SystemExit: ``source`` has no such commit.
    """
    folder = CACHE / f"tabpe-{commit[:12]}"
    stamp = folder / "COMMIT"
    if (folder / "pe" / "__init__.py").exists() and stamp.exists() and stamp.read_text().strip() == commit:
        return folder
    git_dir = source / ".git" if (source / ".git").exists() else source
    if not source.exists():
        raise FileNotFoundError(f"no DPSDA snapshot at {source} and none cached in {folder}: git clone "
                                f"https://github.com/microsoft/DPSDA {source} (or give --tabpe-source a clone or "
                                "bare git directory of it)")
    full = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", "--verify", f"{commit}^{{commit}}"],
                          capture_output=True, text=True, check=False)
    if full.returncode != 0 or full.stdout.strip() != commit:
        raise SystemExit(f"Tab-PE's code: {source} has no commit {commit} (git fetch there, or give "
                         "--tabpe-commit the full hash of one it has)")
    archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit, "pe"],
                             capture_output=True, check=True).stdout
    staging = folder.with_name(folder.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(staging, filter="data")
    (staging / "COMMIT").write_text(commit + "\n", encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)
    print(f"Tab-PE: copied pe/ of DPSDA {commit[:12]} from {source} into {folder}", flush=True)
    return folder


def column_info(table: Table) -> list[dict[str, Any]]:
    """The declared schema as Tab-PE's column info (its ``cat`` / ``int`` / ``float`` types, bounds, categories)."""
    out = []
    for column in table.schema.columns:
        if column.kind == "categorical":
            out.append({"name": column.name, "type": "cat", "categories": list(column.categories)})
        else:
            out.append({"name": column.name, "type": "int" if column.integer else "float",
                        "min": float(column.low), "max": float(column.high)})
    return out


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """The hyper-parameters of one run: the example's, with ``num_samples`` and the rows delivered."""
    return {**EXAMPLE, "num_samples": args.tabpe_samples or args.rows, "rows": args.rows,
            "class_fractions": "uniform", "commit": args.tabpe_commit}


def run_tabpe(epsilon: float, seed: int, table: Table, args: argparse.Namespace, work: Path, python: Path | None,
              code: Path | None) -> dict[str, Any]:
    """Synthesise with Tab-PE (or reuse a finished synthesis); the row without its judgement."""
    from pcevolve.data.tabular import read_labeled_table

    folder = work / f"tabpe-eps{epsilon:g}-seed{seed}"
    synthetic = folder / "synthetic.csv"
    info_path = folder / "info.json"
    row: dict[str, Any] = {"system": "tabpe", "epsilon": epsilon, "delta": args.delta, "seed": seed,
                           "synthetic_csv": str(synthetic), "columns_synthesised": len(table.schema.columns) + 1}
    setup = {"settings": settings(args), "delta": args.delta, "data_sha256": table.fingerprint()}
    if not args.fresh and synthetic.exists() and info_path.exists():
        info = json.loads(info_path.read_text(encoding="utf-8"))
        if info.get("setup") == setup:
            print(f"tabpe ε={epsilon:g} seed {seed}: reusing {synthetic}", flush=True)
            return row | {"status": "ok", "seconds": info["wall_seconds"], "reused": True, "peer": info["peer"]}
    if args.no_run or python is None or code is None:
        return row | {"status": "not run (--no-run)", "seconds": None}
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    schema = table.schema
    write_table_csv(folder / "private.csv", schema, table.private_x,
                    [table.class_names[int(i)] for i in table.private_y])
    info = column_info(table)
    metadata = {"cat_columns": [c["name"] for c in info if c["type"] == "cat"],
                "int_columns": [c["name"] for c in info if c["type"] == "int"],
                "float_columns": [c["name"] for c in info if c["type"] == "float"],
                "label_columns": [schema.label_column]}
    (folder / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")
    options = {"epsilon": epsilon, "delta": args.delta, "seed": seed, "pe_path": str(code.resolve()),
               "private_csv": str(folder / "private.csv"), "metadata_json": str(folder / "metadata.json"),
               "columns": info, "label_column": schema.label_column, "classes": list(table.class_names),
               "settings": settings(args), "output": str(folder / "synthetic-raw.csv"),
               "info": str(folder / "peer.json")}
    (folder / "options.json").write_text(json.dumps(options, indent=2) + "\n", encoding="utf-8")
    print(f"tabpe ε={epsilon:g} δ={args.delta:g} seed {seed}: {len(table.private_x)} private rows × "
          f"{len(info) + 1} columns, {options['settings']['num_samples']} samples × "
          f"{EXAMPLE['num_iterations']} iterations; timeout {args.timeout}s", flush=True)
    env = os.environ | {"PYTHONUNBUFFERED": "1"}
    started = time.perf_counter()
    with open(folder / "peer.log", "w", encoding="utf-8") as log:
        try:
            done = subprocess.run([str(python), str(RUNNER), str(folder / "options.json")], stdout=log,
                                  stderr=subprocess.STDOUT, env=env, timeout=args.timeout, check=False)
        except subprocess.TimeoutExpired:
            seconds = time.perf_counter() - started
            print(f"  timed out after {seconds:.0f}s (log: {folder / 'peer.log'})", flush=True)
            return row | {"status": f"timeout after {args.timeout}s", "seconds": seconds}
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        tail = (folder / "peer.log").read_text(encoding="utf-8").strip().splitlines()[-5:]
        print(f"  failed (exit {done.returncode}): " + " | ".join(tail), flush=True)
        return row | {"status": f"failed (exit {done.returncode}): {tail[-1] if tail else ''}", "seconds": seconds}
    peer = json.loads((folder / "peer.json").read_text(encoding="utf-8"))
    raw = read_labeled_table(folder / "synthetic-raw.csv", schema, class_names=table.class_names, min_per_class=0)
    write_table_csv(synthetic, schema, raw.samples, [raw.class_names[int(i)] for i in raw.labels])
    info_path.write_text(json.dumps({"setup": setup, "wall_seconds": seconds, "peer": peer}, indent=2) + "\n",
                         encoding="utf-8")
    print(f"  done in {seconds:.0f}s (fit {peer['fit_seconds']:.0f}s): {synthetic}", flush=True)
    return row | {"status": "ok", "seconds": seconds, "reused": False, "peer": peer}
