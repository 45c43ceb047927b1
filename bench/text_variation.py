"""Does rewriting retrieved texts with the local LLM help? The text demo's delivered set, as delivered and rewritten.

    .venv/bin/python bench/text_variation.py                     # the ε 8 seed 0 run of bench/compare_text.py
    .venv/bin/python bench/text_variation.py --run runs/compare-text/text-e1-s0 --candidates 2

Takes a finished text run with the retrieval decoder (its delivered texts, the features the search asked for, its
encoder), rewrites every delivered text ``--candidates`` times with the packaged SmolLM2 (the ``llm-variation``
decoder's :func:`~pcevolve.decoders.text_variation.vary_texts`, rewrites cached under ``bench/results/``), and for
each tolerance judges the set that results (the tolerance of 1 takes the best rewrite of every text whatever its
cosine; "retrieval" is the run as delivered). Judged like ``bench/compare_text.py``: TF-IDF + logistic regression
and the LSA probe on the demo's test snippets, attack AUC, exact and near copies of private texts. Also times the
rewriting. Writes ``bench/results/text_variation.json`` (exact private-derived figures: keep it local).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from compare_text import DATA, _judge, _summary
from results_file import write_results

from pcevolve.config import VariationConfig
from pcevolve.data.text import read_labeled_texts
from pcevolve.data.writers import write_texts_jsonl
from pcevolve.decoders.text_variation import vary_texts
from pcevolve.encoders.text import SentenceEncoder

TOLERANCES = (0.0, 0.02, 0.05, 0.1, 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, default=Path("runs/compare-text/text-e8-s0"))
    parser.add_argument("--candidates", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    private = read_labeled_texts(DATA / "private.jsonl")
    delivered = read_labeled_texts(args.run / "synthetic.jsonl", class_names=private.class_names)
    with np.load(args.run / "synthetic.npz", allow_pickle=False) as arrays:
        requested = arrays["features"]
    encoder = SentenceEncoder.load(args.run / "encoder")
    encodings = encoder.encode(delivered.samples)
    setting = VariationConfig(candidates=args.candidates)
    cache = Path("bench/results") / f"rewrites-{args.run.name}-c{args.candidates}.jsonl"
    started = time.perf_counter()
    vary_texts(delivered.samples, encodings, requested, setting=setting, encoder=encoder, seed=args.seed,
               cache=cache)  # fills the cache once; each tolerance below reads it
    rewrite_seconds = time.perf_counter() - started
    rows = [_summary("retrieval", None, args.seed, 0.0, _judge(args.run / "synthetic.jsonl", args.seed),
                     args.run / "synthetic.jsonl")]
    with tempfile.TemporaryDirectory() as scratch:
        for tolerance in TOLERANCES:
            texts, _, notes = vary_texts(delivered.samples, encodings, requested, setting=setting, encoder=encoder,
                                         seed=args.seed, cache=cache, tolerance=tolerance)
            out = Path(scratch) / f"t{tolerance:g}.jsonl"
            write_texts_jsonl(out, texts, delivered.labels, private.class_names)
            row = _summary(f"llm-variation tol {tolerance:g}", None, args.seed, 0.0, _judge(out, args.seed), out)
            rows.append({**row, **notes, "tolerance": tolerance})
    for row in rows:
        print(f"{row['system']:>24}: TF-IDF {row['tfidf_accuracy']:.3f} LSA {row['lsa_accuracy']:.3f} attack AUC "
              f"{row['attack_auc']:.2f} rewritten {row.get('rewritten', 0)} / {len(delivered.samples)}", flush=True)
    print(f"rewriting {len(delivered.samples)} texts × {args.candidates}: {rewrite_seconds:.0f} s")
    written = write_results({"run": str(args.run), "rewrite_seconds": rewrite_seconds, "rows": rows}, "text_variation")
    print(f"wrote {written}")


if __name__ == "__main__":
    main()
