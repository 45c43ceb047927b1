"""What ``bench/tabular_peers.py`` makes of its syntheses: the judge's figures per row, the tables of every run and
of the mean ± sd over seeds, and ``docs/tabular-peers.md`` — one section per table (the bench's ``--tag``; no tag:
the lending-club demo) between markers, so that a run on one table rewrites its own section and keeps the others
and the hand-written ``## Notes`` at the end.

The standard deviations are over seeds, ``numpy.std`` (ddof 0), as every table of this bench has shown them.
"""

from __future__ import annotations

import re
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np

from peers.tabular_data import Table

#: The order systems are listed in.
ORDER = ("real", "pcevolve", "pcevolve-poolfree", "tabpe", "mst", "aim")


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
    order = {s: i for i, s in enumerate(ORDER)}
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
    order = {s: i for i, s in enumerate(ORDER)}
    return sorted(out, key=lambda e: (order.get(e["system"].split()[0], 9), e["system"], e["epsilon"] or 0))


def _system_label(row: dict[str, Any]) -> str:
    """The system, with the columns it synthesised when ``--max-columns`` left some to public rows (pcevolve: that it
    read the public pool)."""
    if row["system"] == "pcevolve":
        return "pcevolve (public pool)"
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


# ------------------------------------------------------------------------------------------------------------- docs
_SECTION = re.compile(r"<!-- section: (?P<key>[^ ]*) -->\n(?P<body>.*?)<!-- end of section: (?P=key) -->\n",
                      re.DOTALL)


def _header(results: dict[str, Any]) -> str:
    """The document's head: what was run and how each system was fed (the same for every table)."""
    peers, tabpe = results["peers"], results.get("tabpe") or {}
    if peers.get("sampling", "sample") == "sample":
        sampling = ("smartnoise's rows are drawn i.i.d. from the fitted model (`--sampling sample`). Its stock "
                    "draw, mbi 1.1.0's `synthetic_data(method=\"round\")`, ranks its stratified uniforms by row "
                    "index without shuffling them, so every column comes out correlated with the row number and "
                    "with its siblings (MST at ε = 100 on the lending-club table: Spearman ρ(row, column) up to "
                    "0.89; GB / LR ROC AUC 0.56 / 0.58 with the stock draw, 0.64 / 0.68 drawn i.i.d.). Sampling is "
                    "post-processing: same model, same privacy.")
    else:
        sampling = ("smartnoise's rows are drawn with mbi 1.1.0's stock `round` method (`--sampling round`), whose "
                    "columns come out correlated with the row number (see `bench/peers/smartnoise_runner.py`).")
    commit = tabpe.get("commit", "?")
    return f"""# Tables without public data: Tab-PE, AIM and MST (and pcevolve)

What was run, on the same private rows of each table below at the same (ε, δ = {results['delta']:g}), every system
delivering {peers['rows']} rows:

* **Tab-PE** — tabular Private Evolution (Microsoft's `microsoft/DPSDA`, `pe/` at commit `{commit[:12]}`; ICML 2026
  "DP Synthetic Data via APIs 4: Tabular Data"), in its own venv (`bench/.venv-tabpe`), with the hyper-parameters of
  its small-table example (`example/tabular/breast_cancer.py`): 20 iterations (19 DP histograms), mutation rate
  0.5 → 0.01 (polynomial decay, γ 0.2), L2 nearest-neighbour votes on its tabular embedding (one-hot × 1/3, numbers
  scaled to [0, 1]), 5 iterations of sampling by the histogram then rank selection with 3 variations each; its
  `num_samples` is the bench's {peers['rows']} rows in every iteration (the examples use 150 to 5,000). The
  synthetic set is the last iteration's selected rows, as its examples evaluate. All of (ε, δ) goes through its
  own accountant (Gaussian noise on each histogram, composed as Gaussian DP).
* **AIM** and **MST** — OpenDP smartnoise-synth {peers['package'].split('==')[1]}
  (`Synthesizer.create("aim" | "mst", epsilon=ε, delta=δ)`, library defaults), in `bench/.venv-peers`.
* **pcevolve** — `pcevolve run` on `{results['pcevolve_config']}` with its name, seed and ε replaced, δ and data
  paths set to the bench's. It retrieves rows of the table's PUBLIC pool (`public.csv`), which the three peers never
  see: a different setting, shown for reference. **pcevolve-poolfree** — pcevolve with no public data, the system
  that compares with the peers: the one-line `pcevolve run private.csv --classes … --schema schema.yaml --epsilon E`
  (no `--public`), the same declared schema and classes the peers get; its rows are made from one release of the
  private rows (docs/tabular.md).
* **real** — the private table itself judged the same way: no privacy, the reference line (its attack AUC and
  copies show a full leak).

Every synthetic CSV is judged by `pcevolve.evaluation.table_judgement.judge_table_files` against the table's
`test.csv`: gradient-boosted trees (GB) and logistic regression (LR) trained on the synthetic rows and scored on
the test rows (ROC AUC of the minority class, macro-F1), the mean total-variation distance of the column marginals
to the test table, a distance-to-closest-record membership attack (AUC; 0.5 is chance) and exact copies of private
rows. Seconds: wall time of one synthesis on this machine (2 CPU cores, one used), judging excluded. ± is the
standard deviation over seeds (ddof 0).

**How the peers were fed** — public knowledge only, and no ε spent on preprocessing. The schema (`schema.yaml`:
column types, numeric bounds, category lists) stands for what a data owner declares; the bench drafts it from the
table's unlabelled `public.csv`, which no peer otherwise reads except smartnoise's binning below. The label's
classes are the declared ones.

* *Tab-PE* gets the private CSV with exactly the schema's columns (numbers clipped to the schema bounds) and the
  metadata JSON its `TabularCSV` reads, and its column info (types, bounds, categories) from the declared schema,
  where its examples read bounds and categories off the private rows. Class proportions: **uniform**
  (`fraction_per_label_id = [1, 1]`), where its default takes the private proportions as public; pcevolve delivers
  equal classes too. Its noise is numpy's, seeded, so a rerun at one seed repeats.
* *AIM and MST* get integer codes: categorical columns by the schema's category lists; numeric columns binned on
  `public.csv` — an integer column with at most {peers['max_bins']} values in its schema bounds gets one bin per
  value, any other at most {peers['max_bins']} quantile bins of the public values (ties merged; each inner edge half a
  rounding step above its quantile, so a value many rows share, such as 0 in a count column, keeps a bin of its
  own), outer edges at the schema bounds. The label is an ordinary categorical column they synthesise (so they
  spend part of ε on the class proportions). smartnoise gets a domain listing every code (fitted on no data,
  `preprocessor_eps=0`), so all of ε goes to the synthesis; a code goes back to a value by a seeded draw among the
  public values in its bin (`--decode {peers['decode']}`). smartnoise treats the row count as public (MST fits
  with the known total); its Gaussian noise comes from OpenDP's secure sampler, which cannot be seeded, so a rerun
  at one seed differs.

{textwrap.fill(sampling, width=116, break_on_hyphens=False)}

Every CSV is written with the schema's rounding and has exactly the schema's columns and the label. Each table's
section below lists its columns and how smartnoise coded them, every run, and the commands that made it; every row,
with the judge's full output and the peers' own timings, is in `bench/results/tabular_peers[-TAG].json`.

"""


def _section(results: dict[str, Any], table_md: str, summary_md: str) -> str:
    """One table's section: what the data is, the summary, every run, its columns and how to reproduce it."""
    binning = "\n".join(f"| {c['name']} | {c['kind']} | {c['how']} |" for c in results["columns"])
    commands = "\n".join(results["commands"])
    counts = results.get("private_classes") or {}
    classes = ", ".join(f"{k} {v}" for k, v in counts.items()) if counts else ", ".join(results["class_names"])
    source = results.get("source") or results["data"]
    tag = results.get("tag") or ""
    return f"""## {source}{f' (`--tag {tag}`)' if tag else ''}

`{results['data']}/private.csv`: {results['private_rows']} rows, label `{results['label_column']}` ({classes});
{results.get('description', '')}

Mean ± standard deviation over seeds (exact private copies: the most in any seed):

{summary_md}

{results.get('note', '')}

<details><summary>Every run, and how smartnoise coded each column</summary>

{table_md}

| column | kind | coded as |
|---|---|---|
{binning}

</details>

Reproduce, from the repository root, after `git clone https://github.com/microsoft/DPSDA bench/.cache/DPSDA` (Tab-PE's
code; the bench copies `pe/` at the pinned commit out of it). The first runs create `bench/.venv-peers` and
`bench/.venv-tabpe` (a few minutes); finished syntheses are reused, `--fresh` redoes them:

```
{commands}
```

"""


def write_docs(path: Path, results: dict[str, Any], table_md: str, summary_md: str) -> None:
    """Rewrite ``path``: the head, this table's section (others kept, in their order) and the ``## Notes`` kept."""
    key = results.get("tag") or "main"
    sections: dict[str, str] = {}
    notes = ""
    if path.exists():
        old = path.read_text(encoding="utf-8")
        if "\n## Notes" in old:
            notes = old[old.index("\n## Notes") + 1:]
            old = old[:old.index("\n## Notes") + 1]
        sections = {m["key"]: m["body"] for m in _SECTION.finditer(old)}
    sections[key] = _section(results, table_md, summary_md)
    order = ["main", *[k for k in sections if k != "main"]]
    text = _header(results) + "".join(f"<!-- section: {k} -->\n{sections[k]}<!-- end of section: {k} -->\n\n"
                                      for k in order if k in sections)
    path.write_text(text.rstrip("\n") + "\n" + ("\n" + notes if notes else ""), encoding="utf-8")
