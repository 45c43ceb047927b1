"""Run one smartnoise-synth synthesiser (AIM or MST) on pre-binned integer columns; executed in the peers' venv.

    bench/.venv-peers/bin/python bench/peers/smartnoise_runner.py OPTIONS.json

``OPTIONS.json`` (written by ``bench/tabular_peers.py``)::

    {"system": "aim" | "mst", "epsilon": 8.0, "delta": 1e-5, "seed": 0,
     "input": "codes.csv",            # header + one integer code per cell, code < cardinality
     "cardinalities": [16, 2, ...],   # the public domain of each column, in the input's column order
     "rows": 2000,                    # rows to sample from the fitted model (post-processing)
     "output": "synthetic-codes.csv", # written: same header, integer codes
     "info": "info.json",             # written: timings and what was spent
     "aim": {"rounds": null, "max_model_size": 80, "degree": 2, "max_cells": 10000},
     "sampling": "sample"}            # how mbi draws rows from the fitted model (below)

Only integer codes cross this boundary: the binning of continuous columns (on the public table) and the mapping
of codes back to values happen in pcevolve's environment. The domain handed to smartnoise is fitted on a frame that
lists every code of every column (public information), never on the private rows, so a bin or category that no
private row has still belongs to the domain, and the preprocessor spends no ε (``preprocessor_eps=0``): the
whole (ε, δ) goes to the synthesiser. This file imports nothing from pcevolve.

Sampling: mbi 1.1.0's default ``MarkovRandomField.synthetic_data(method="round")`` draws each column after the first
with stratified uniforms ranked by *row index* inside each parent group and never shuffles them, so every column
comes out correlated with the row number and siblings of one parent with each other (on the lending-club table at
ε = 100, Spearman ρ(row, column) reached 0.89 and MST's synthetic rows showed associations the private rows do not
have). ``"sampling": "sample"`` (the default here) makes smartnoise draw rows i.i.d. from the same fitted model
instead: post-processing, no privacy cost, the fitted model unchanged; ``"round"`` keeps smartnoise's stock behaviour.

Seeding: ``numpy.random`` (AIM's and MST's selection, MST's domain decompression, mbi's sampling) is seeded; the
Gaussian noise comes from OpenDP's secure sampler, which is not seedable, so reruns at one seed differ.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd


def domain_transformer(columns: list[str], cardinalities: list[int]):
    """A fitted ``TableTransformer`` whose domain is exactly ``0 .. card-1`` per column (no data read)."""
    from snsynth.transform import LabelTransformer
    from snsynth.transform.table import TableTransformer

    width = max(cardinalities)
    frame = pd.DataFrame({name: [i % card for i in range(width)] for name, card in zip(columns, cardinalities)})
    transformer = TableTransformer([LabelTransformer(nullable=False) for _ in columns])
    transformer.fit(frame, epsilon=0.0)
    if list(transformer.cardinality) != list(cardinalities):
        raise SystemExit(f"domain transformer has cardinalities {transformer.cardinality}, wanted {cardinalities}")
    if transformer.needs_epsilon:
        raise SystemExit("domain transformer would spend epsilon")
    return transformer


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    options = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    from snsynth import Synthesizer

    system = options["system"]
    codes = pd.read_csv(options["input"])
    columns = list(codes.columns)
    cards = [int(c) for c in options["cardinalities"]]
    if len(cards) != len(columns):
        raise SystemExit(f"{len(cards)} cardinalities for {len(columns)} columns")
    values = codes.to_numpy()
    if values.min() < 0 or np.any(values >= np.asarray(cards)[None, :]):
        raise SystemExit("a code lies outside its column's domain")
    np.random.seed(int(options["seed"]))
    kwargs = {}
    if system == "aim":
        aim = options.get("aim") or {}
        kwargs = {k: aim[k] for k in ("rounds", "max_model_size", "degree", "max_cells") if aim.get(k) is not None}
    synth = Synthesizer.create(system, epsilon=float(options["epsilon"]), delta=float(options["delta"]),
                               verbose=bool(options.get("verbose", False)), **kwargs)
    transformer = domain_transformer(columns, cards)
    start = time.perf_counter()
    synth.fit(codes, transformer=transformer, preprocessor_eps=0.0)
    fit_s = time.perf_counter() - start
    sampling = options.get("sampling", "sample")
    if sampling != "round":
        from functools import partialmethod

        from mbi.markov_random_field import MarkovRandomField

        MarkovRandomField.synthetic_data = partialmethod(MarkovRandomField.synthetic_data, method=sampling)
    start = time.perf_counter()
    sample = synth.sample(int(options["rows"]))
    sample_s = time.perf_counter() - start
    sample = pd.DataFrame(sample, columns=columns).astype(int)
    sample.to_csv(options["output"], index=False)
    import snsynth

    info = {"system": system, "epsilon": float(options["epsilon"]), "delta": float(options["delta"]),
            "epsilon_left_for_training": float(synth.epsilon), "preprocessor_epsilon": 0.0,
            "fit_seconds": fit_s, "sample_seconds": sample_s, "rows_in": len(codes), "rows_out": len(sample),
            "smartnoise_synth": getattr(snsynth, "__version__", None) or _version("smartnoise-synth"),
            "synth_kwargs": kwargs, "sampling": sampling}
    Path(options["info"]).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return 0


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
