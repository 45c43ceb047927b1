"""pcevolve as a system of ``bench/tabular_peers.py``: ``pcevolve run`` in a subprocess, exactly as a user runs it.

Two systems:

* ``pcevolve`` — ``pcevolve run CONFIG`` on ``--pcevolve-config`` (default ``configs/tabular-demo.yaml``) with
  ``name``, ``seed``, ``privacy.epsilon``, ``privacy.delta`` and the data paths (private, public pool, test, schema,
  label column, declared classes) replaced. It reads the public table as its retrieval pool.
* ``pcevolve-poolfree`` — pcevolve with NO public data: only the private rows, the declared schema and the declared
  classes. Without ``--poolfree-config`` it is the one-line command::

      pcevolve run PRIVATE.csv --label-column L --classes '"bad","good"' --schema SCHEMA --epsilon E \\
          --name NAME -q --runs-root ROOT --set seed=S --set privacy.delta=D --set synthesis.per_class=ROWS/K

  (no ``--test``: the bench judges every system on the test table itself, and the run need not read it)

  (``synthesis.per_class`` so that it delivers ``--rows`` rows like every other system); with
  ``--poolfree-config PATH`` it is ``pcevolve run`` on that config with the same replacements as ``pcevolve`` but
  ``data.public: null``. A run that fails says so in its row (the exit code and the CLI's last line); the other
  systems still run.

A finished run is reused when its command (or config) and the data are unchanged; ``--fresh`` reruns it. The row's
seconds are the subprocess's wall time (the whole run, judging excluded).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from peers.tabular_data import Table

SYSTEMS = ("pcevolve", "pcevolve-poolfree")


def pcevolve_command() -> list[str]:
    script = Path(sys.executable).parent / "pcevolve"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pcevolve.cli.main"]


def run_name(system: str, epsilon: float, seed: int, tag: str) -> str:
    """The run folder's name: ``tabular-peers[-TAG][-poolfree]-epsE-seedS``."""
    mode = "-poolfree" if system == "pcevolve-poolfree" else ""
    return f"tabular-peers{'-' + tag if tag else ''}{mode}-eps{epsilon:g}-seed{seed}"


def _config(table: Table, args: argparse.Namespace, path: Path, name: str, epsilon: float, seed: int, *,
            public: bool) -> Any:
    """``path``'s config with the bench's name, seed, privacy and data (``data.public`` null unless ``public``)."""
    from pcevolve.config import load_config, parse_config

    mapping = load_config(path).model_dump(mode="json")
    mapping["name"] = name
    mapping["seed"] = seed
    mapping["privacy"]["epsilon"] = epsilon
    mapping["privacy"]["delta"] = args.delta
    # The benchmark's classes are its source's label values, known before any run (a user declares theirs).
    mapping["data"].update(private=str(table.private_csv), public=str(table.public_csv), test=str(table.test_csv),
                           schema_file=str(table.schema_file), label_column=table.schema.label_column,
                           classes=list(table.class_names))
    if not public:
        mapping["data"]["public"] = None  # null, not left out: left out, the default (the image demo's pool) applies
    return parse_config(mapping, source=f"{path} (bench)")


def run_pcevolve(system: str, epsilon: float, seed: int, table: Table, args: argparse.Namespace,
                 work: Path) -> dict[str, Any]:
    """One run of ``system`` (``pcevolve`` or ``pcevolve-poolfree``), or a finished one reused; the row without its
    judgement."""
    name = run_name(system, epsilon, seed, args.tag)
    run = args.runs_root / name
    row: dict[str, Any] = {"system": system, "epsilon": epsilon, "delta": args.delta, "seed": seed,
                           "synthetic_csv": str(run / "synthetic.csv"), "run_folder": str(run)}
    work.mkdir(parents=True, exist_ok=True)
    config_file = args.pcevolve_config if system == "pcevolve" else args.poolfree_config
    if config_file is not None:
        from pcevolve.config import config_hash, dump_config

        try:
            config = _config(table, args, config_file, name, epsilon, seed, public=system == "pcevolve")
        except Exception as error:  # noqa: BLE001  (a config pcevolve refuses is this row's result)
            message = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
            print(f"{system} ε={epsilon:g} seed {seed}: config refused: {message}", flush=True)
            return row | {"status": f"failed: config refused ({message})", "seconds": None}
        stamp = {"config_sha256": config_hash(config), "data_sha256": table.fingerprint()}
        command = ["run", "-q", "--runs-root", str(args.runs_root), str(work / f"{name}.yaml")]
        shown = f"pcevolve run {work / f'{name}.yaml'}"
    else:
        per_class = max(1, args.rows // len(table.class_names))
        command = ["run", str(table.private_csv), "--label-column", table.schema.label_column,
                   "--classes", ",".join(json.dumps(name) for name in table.class_names),
                   "--schema", str(table.schema_file), "--epsilon", f"{epsilon:g}", "--name", name,
                   "-q", "--runs-root", str(args.runs_root),
                   "--set", f"seed={seed}", "--set", f"privacy.delta={args.delta:g}",
                   "--set", f"synthesis.per_class={per_class}"]
        stamp = {"command_sha256": hashlib.sha256(json.dumps(command).encode()).hexdigest(),
                 "data_sha256": table.fingerprint()}
        shown = "pcevolve " + " ".join(command)
        config = None
    timing = work / f"{name}.json"
    if not args.fresh and (run / "synthetic.csv").exists() and timing.exists():
        done = json.loads(timing.read_text(encoding="utf-8"))
        if all(done.get(k) == v for k, v in stamp.items()):
            print(f"{system} ε={epsilon:g} seed {seed}: reusing {run}", flush=True)
            return row | {"status": "ok", "reused": True, "seconds": done["wall_seconds"],
                          **{k: done[k] for k in ("ledger_epsilon",) if k in done}}
    if args.no_run:
        return row | {"status": "not run (--no-run)", "seconds": None}
    shutil.rmtree(run, ignore_errors=True)
    if config is not None:
        dump_config(config, work / f"{name}.yaml")
    print(f"{system} ε={epsilon:g} δ={args.delta:g} seed {seed}: {shown}", flush=True)
    started = time.perf_counter()
    with open(work / f"{name}.log", "w", encoding="utf-8") as log:
        try:
            done = subprocess.run([*pcevolve_command(), *command], stdout=log, stderr=subprocess.STDOUT,
                                  timeout=args.timeout, check=False)
        except subprocess.TimeoutExpired:
            return row | {"status": f"timeout after {args.timeout}s", "seconds": time.perf_counter() - started}
    seconds = time.perf_counter() - started
    if done.returncode != 0 or not (run / "synthetic.csv").exists():
        tail = [line.strip(" │╭╰─") for line in
                (work / f"{name}.log").read_text(encoding="utf-8").strip().splitlines()[-8:]]
        tail = [line for line in tail if line] or [""]
        print(f"  failed (exit {done.returncode}): " + " | ".join(tail), flush=True)
        return row | {"status": f"failed (exit {done.returncode}): {tail[-1]}", "seconds": seconds,
                      "log": str(work / f"{name}.log")}
    ledger = run / "ledger.json"
    if ledger.exists():
        row["ledger_epsilon"] = json.loads(ledger.read_text(encoding="utf-8"))["summary"]["total"]["epsilon"]
    timing.write_text(json.dumps({"wall_seconds": seconds, **stamp, **{k: row[k] for k in ("ledger_epsilon",)
                                                                       if k in row}}) + "\n", encoding="utf-8")
    print(f"  done in {seconds:.0f}s: {run / 'synthetic.csv'}", flush=True)
    return row | {"status": "ok", "reused": False, "seconds": seconds}
