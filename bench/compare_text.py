"""The text rows of ``bench/compare.py`` (``--modality text``): the Rotten Tomatoes demo, pcevolve against Private
Evolution's selector hosted in our engine.

    .venv/bin/python bench/compare.py --modality text                        # ε 1 and 8, seeds 0 1 2
    .venv/bin/python bench/compare.py --modality text --epsilons 8 --seeds 0

Systems (secure noise; each spends the whole ε through a ledger):

* ``ours`` — ``pcevolve run`` on ``configs/text-demo.yaml`` with that ε and seed.
* ``pe-histogram`` — Private Evolution's voting-histogram selector (``pcevolve.search.pe_selector``) in the same
  run's space (the sentence encoder, reduced to the run's public basis) over the same retrieval pool: 10
  iterations, 1,000 candidates per class, variations among the 16 nearest pool texts; the whole ε on its own
  ledger.
* ``ours-dp-encoder`` (with ``--text-encoder-share S``) — the same run with a share S of ε training the sentence
  encoder's adapter under DP-SGD and the rest on the release.
* ``real`` — the 300 private snippets themselves (the few-shot reference: not publishable).

Every set is judged by ``pcevolve.evaluation.text.judge_text_files`` against the demo's 1,000 test snippets
(TF-IDF + logistic regression and the LSA probe; attack AUC; exact and near copies). ``bench/compare.py`` writes
``bench/results/compare-text.json`` (it holds exact private-derived figures: keep it local).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import yaml
from pipeline_run import run_config

from pcevolve.data.text import read_labeled_texts
from pcevolve.data.writers import write_texts_jsonl
from pcevolve.decoders import load_decoder
from pcevolve.encoders.text import SentenceEncoder
from pcevolve.evaluation.text import judge_text_files
from pcevolve.pipeline import load_public_features
from pcevolve.privacy import BudgetLedger, SecureNoise
from pcevolve.run_folder import RunFolder
from pcevolve.search.pe_selector import PESettings, pe_select

DATA = Path("data/text")
CONFIG = Path("configs/text-demo.yaml")
PER_CLASS = 1000


def run_ours(epsilon: float, seed: int, root: Path, encoder_share: float = 0.0) -> tuple[Path, float]:
    """A finished ``pcevolve run`` of the text demo at (ε, seed) under ``root`` (reused when it exists);
    ``encoder_share`` > 0: that share of ε trains the encoder's adapter under DP, the rest goes to the release."""
    name = f"text-e{epsilon:g}-s{seed}" + (f"-enc{encoder_share:g}" if encoder_share else "")
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    config.update(name=name, seed=seed)
    config["privacy"]["epsilon"] = float(epsilon)
    if encoder_share:
        config["privacy"]["split"] = {"representation": encoder_share, "release": 1.0 - encoder_share}
    return run_config(config, root)


def pe_histogram(run: Path, epsilon: float, seed: int, out: Path) -> float:
    """PE's selector over the run's pool in the run's space; writes its delivered set to ``out``."""
    started = time.perf_counter()
    private = read_labeled_texts(DATA / "private.jsonl")
    basis = load_public_features(RunFolder.open(run)).basis
    decoder = load_decoder(run / "decoder")
    features = basis.reduce(SentenceEncoder.load(run / "encoder").encode(private.samples))
    selection = pe_select(features, private.labels, basis.reduce(decoder.encodings),
                          classes=len(private.class_names), per_class=PER_CLASS, settings=PESettings(),
                          ledger=BudgetLedger(epsilon, 1e-5, {"release": epsilon}), stage="release",
                          noise=SecureNoise(), rng=np.random.default_rng([seed, 0x9E]))
    write_texts_jsonl(out, decoder.samples[selection.indices], selection.labels, private.class_names)
    return time.perf_counter() - started


def _judge(path: Path, seed: int) -> dict:
    return judge_text_files(path, DATA / "test.jsonl", private_path=DATA / "private.jsonl",
                            public_path=DATA / "public.jsonl", seed=seed)


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
                  encoder_share: float = 0.0) -> tuple[list[dict], dict]:
    """Every text row (the real reference, then ours and PE's selector at each ε and seed, and with
    ``encoder_share`` > 0 ours with that share training the encoder under DP) and their summary (mean and standard
    deviation over seeds per system and ε; the strongest attack)."""
    runs_root.mkdir(parents=True, exist_ok=True)
    rows = [_summary("real", None, 0, 0.0, _judge(DATA / "private.jsonl", 0), DATA / "private.jsonl")]
    for epsilon in epsilons:
        for seed in seeds:
            run, seconds = run_ours(epsilon, seed, runs_root)
            rows.append(_summary("ours", epsilon, seed, seconds, _judge(run / "synthetic.jsonl", seed),
                                 run / "synthetic.jsonl"))
            pe_out = runs_root / f"pe-e{epsilon:g}-s{seed}.jsonl"
            seconds = pe_histogram(run, epsilon, seed, pe_out)
            rows.append(_summary("pe-histogram", epsilon, seed, seconds, _judge(pe_out, seed), pe_out))
            shown = 2
            if encoder_share:
                tuned, seconds = run_ours(epsilon, seed, runs_root, encoder_share)
                rows.append(_summary("ours-dp-encoder", epsilon, seed, seconds,
                                     _judge(tuned / "synthetic.jsonl", seed), tuned / "synthetic.jsonl"))
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
