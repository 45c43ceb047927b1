"""Stage 5 evaluation: utility, distribution and privacy metrics on arrays.

Pure functions of arrays and explicit generators; the report assembles them. Modules
(one concept each):

* ``classifiers`` — the downstream CNN and linear probe, and classification metrics (utility);
* ``distribution`` — MMD², sliced Wasserstein and Fréchet distances, overall and per class;
* ``attacks`` — membership inference (DCR and DOMIAS) with bootstrap intervals and the DP bound;
* ``copies`` — nearest private sample of each synthetic one, and the near-copy predicate;
* ``features`` — the two feature spaces: the search's own encoder and an independent one;
* ``inputs`` — reading a finished run folder and the real data it is judged against;
* ``utility`` — the reference lines (ours, few-shot real, augmentation, full real) with both models;
* ``hints`` — the report's troubleshooting rules (what to change when a number is poor) applied to the numbers;
* ``evaluate`` — :func:`evaluate_run`, the orchestration of all of the above over a run folder;
* ``tabular`` — the judges of a table (utility of two fixed models, per-column and correlation fidelity, the
  distance-to-closest-record attack and exact copies) and :func:`judge_tables` / :func:`judge_table_files`;
* ``table_run`` — :func:`evaluate_table_run`, those judges over a tabular run folder;
* ``text`` — the judges of texts (two fixed probes, TF-IDF and LSA; MMD in an LSA space; the closest-text attack
  and exact and near copies) and :func:`judge_texts` / :func:`judge_text_files`;
* ``text_run`` — :func:`evaluate_text_run`, those judges over a text run folder;
* ``shipped`` — how figures computed on private samples are rounded before they leave the secure zone, and the
  check that a run folder's shared JSON files hold no exact one and no absolute path;
* ``settings`` — :class:`EvaluationSettings`, the sizes and recipes of an image evaluation (no torch).
"""

from pcevolve.lazy_exports import lazy_exports

# Each module is imported when one of its names is first used: the models load torch, and the command line shows
# the settings' defaults without them.
__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "attacks": ["FPR_LEVELS", "AttackResult", "Estimate", "MembershipAttack", "dcr_scores", "domias_scores",
                "dp_tpr_bound", "evaluate_attack", "membership_attacks", "roc_auc", "roc_curve"],
    "classifiers": ["ClassificationMetrics", "classic_augmentation", "classification_metrics", "cnn_features",
                    "linear_probe", "predict", "small_cnn", "train_cnn"],
    "copies": ["NEAR_COPY_RMS", "CopyCheck", "copy_check", "find_near_copies", "near_copy_threshold",
               "nearest_neighbours"],
    "distribution": ["PerClassValue", "distribution_metrics", "frechet_distance", "median_bandwidth", "mmd_rbf",
                     "per_class", "sliced_wasserstein"],
    "evaluate": ["RunEvaluation", "evaluate_run", "membership_split"],
    "hints": ["Hint", "troubleshooting_hints"],
    "inputs": ["EvaluationError", "RunInputs", "load_run_inputs"],
    "table_run": ["TableRunEvaluation", "evaluate_table_run"],
    "tabular": ["TableJudgement", "judge_table_files", "judge_tables"],
    "text": ["TextJudgement", "judge_text_files", "judge_texts"],
    "text_run": ["TextRunEvaluation", "evaluate_text_run"],
    "settings": ["EvaluationSettings"],
    "shipped": ["Violation", "shared_distance", "shared_rate", "shipped_violations"],
})
