"""smartnoise-synth's AIM and MST as systems of ``bench/tabular_peers.py``: their virtual environment and one
synthesis, run by ``bench/peers/smartnoise_runner.py`` on integer codes (``peers.tabular_data.column_codes``) and
decoded back into the schema's values (see that bench's docstring for what they are fed).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from peers.tabular_data import Table, write_table_csv

PEERS = ("mst", "aim")
SMARTNOISE = "smartnoise-synth==1.0.8"
PEERS_TORCH = "torch==2.13.0"
RUNNER = Path(__file__).resolve().with_name("smartnoise_runner.py")


def peers_python(venv: Path, *, install: bool) -> Path:
    """The peers' interpreter; the venv is created and smartnoise-synth installed on first use."""
    python = venv / "bin" / "python"
    if python.exists():
        probe = subprocess.run([str(python), "-c", "import snsynth, mbi"], capture_output=True, text=True, check=False)
        if probe.returncode == 0:
            return python
    if not install:
        raise SystemExit(f"{venv} has no working smartnoise-synth; run without --no-install to create it")
    base = shutil.which("python3") or sys.executable
    print(f"creating {venv} ({base} -m venv) and installing {PEERS_TORCH} and {SMARTNOISE} there (with JAX; "
          "minutes)", flush=True)
    if not python.exists():
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    # smartnoise-synth asks for any torch >= 1.3 (AIM and MST never import it): pcevolve's pin first, as the Makefile
    # does, so pip takes the CPU wheel where the machine has one instead of a CUDA build (several GB).
    subprocess.run([str(python), "-m", "pip", "install", "-q", PEERS_TORCH], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", SMARTNOISE], check=True)
    return python


def peer_columns(table: Table, max_columns: int | None) -> list[int]:
    """Schema columns a peer synthesises (the label always): the first ``max_columns - 1``, or all."""
    n = len(table.schema.columns)
    if max_columns is None or max_columns >= n + 1:
        return list(range(n))
    if max_columns < 2:
        raise SystemExit("--max-columns counts the label: at least 2")
    return list(range(max_columns - 1))


def run_peer(system: str, epsilon: float, seed: int, table: Table, args: argparse.Namespace, work: Path,
             python: Path | None) -> dict[str, Any]:
    """Synthesise with one peer (or reuse a finished synthesis); the row without its judgement."""
    max_columns = args.aim_max_columns if system == "aim" and args.aim_max_columns else args.max_columns
    keep = peer_columns(table, max_columns)
    folder = work / f"{system}-eps{epsilon:g}-seed{seed}"
    synthetic = folder / "synthetic.csv"
    info_path = folder / "info.json"
    row: dict[str, Any] = {"system": system, "epsilon": epsilon, "delta": args.delta, "seed": seed,
                           "synthetic_csv": str(synthetic), "columns_synthesised": len(keep) + 1}
    setup = {"max_bins": args.max_bins, "decode": args.decode, "rows": args.rows, "columns": keep,
             "sampling": args.sampling,
             "aim": aim_options(args) if system == "aim" else None, "delta": args.delta,
             "data_sha256": table.fingerprint()}
    if not args.fresh and synthetic.exists() and info_path.exists():
        info = json.loads(info_path.read_text(encoding="utf-8"))
        if info.get("setup") == setup:
            print(f"{system} ε={epsilon:g} seed {seed}: reusing {synthetic}", flush=True)
            return row | {"status": "ok", "seconds": info["wall_seconds"], "reused": True, "peer": info["peer"]}
    if args.no_run or python is None:
        return row | {"status": "not run (--no-run)", "seconds": None}
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    names = [table.schema.columns[j].name for j in keep] + [table.schema.label_column]
    cards = [table.codes[j].cardinality for j in keep] + [len(table.class_names)]
    codes = np.column_stack([table.codes[j].encode(table.private_x[:, j]) for j in keep] + [table.private_y])
    with open(folder / "private-codes.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(names)
        writer.writerows(codes.tolist())
    options = {"system": system, "epsilon": epsilon, "delta": args.delta, "seed": seed,
               "input": str(folder / "private-codes.csv"), "cardinalities": cards, "rows": args.rows,
               "output": str(folder / "synthetic-codes.csv"), "info": str(folder / "peer.json"),
               "aim": aim_options(args), "verbose": args.verbose_peers, "sampling": args.sampling}
    (folder / "options.json").write_text(json.dumps(options, indent=2) + "\n", encoding="utf-8")
    print(f"{system} ε={epsilon:g} δ={args.delta:g} seed {seed}: {len(codes)} private rows × {len(names)} columns, "
          f"domain {int(np.prod(np.asarray(cards, dtype=float))):.3g} cells; timeout {args.timeout}s", flush=True)
    env = os.environ | {"JAX_PLATFORMS": "cpu", "PYTHONUNBUFFERED": "1"}
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
    sampled = np.loadtxt(folder / "synthetic-codes.csv", delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
    rng = np.random.default_rng([seed, 0x7AB])
    x = table.public_x[rng.integers(0, len(table.public_x), len(sampled))].copy()  # columns no peer synthesised
    for i, j in enumerate(keep):
        x[:, j] = table.codes[j].decode(sampled[:, i], rng, args.decode)
    labels = [table.class_names[int(c)] for c in sampled[:, -1]]
    write_table_csv(synthetic, table.schema, x, labels)
    info = {"setup": setup, "wall_seconds": seconds, "peer": peer}
    info_path.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    print(f"  done in {seconds:.0f}s (fit {peer['fit_seconds']:.0f}s): {synthetic}", flush=True)
    return row | {"status": "ok", "seconds": seconds, "reused": False, "peer": peer}


def aim_options(args: argparse.Namespace) -> dict[str, Any]:
    return {"rounds": args.aim_rounds, "max_model_size": args.aim_max_model_size, "degree": 2, "max_cells": 10000}
