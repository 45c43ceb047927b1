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
* ``run_evaluation`` — :class:`RunEvaluation`, every result of :func:`evaluate_run` and what of it may leave the secure
  zone;
* ``line_scores`` — a classifier trained on each line and scored on the real test set, the classes judged and the
  judgement's lines, shared by the table and text judges;
* ``table_encoding`` — a table's rows as numbers: one-hot categories, the utility models' and the attack's scaling;
* ``table_utility``, ``table_fidelity``, ``table_privacy`` — the judges of a table: utility of two fixed models,
  per-column and correlation fidelity, the distance-to-closest-record attack and exact copies;
* ``table_judgement`` — :func:`judge_tables` / :func:`judge_table_files`, those judges together;
* ``file_run`` — a table's or a text's run judged from its files: reading, checks, the judges, the evaluation
  and what of it may leave the secure zone, with what differs per modality handed in;
* ``table_run`` — :func:`evaluate_table_run`, those judges over a tabular run folder;
* ``text_spaces`` — the spaces texts are compared in: normalised words and word pairs as TF-IDF, LSA, hashed TF-IDF;
* ``text_duplicates`` — exact and near copies of texts, and verbatim passages shared with them;
* ``text_utility``, ``text_distribution``, ``text_privacy`` — the judges of texts: two fixed probes (TF-IDF and LSA),
  MMD in an LSA space, the closest-text attack;
* ``text_judgement`` — :func:`judge_texts` / :func:`judge_text_files`, those judges together;
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
                "dp_tpr_bound", "evaluate_attack", "membership_attacks", "refutes_dp_bound", "roc_auc", "roc_curve"],
    "classifiers": ["ClassificationMetrics", "classic_augmentation", "classification_metrics", "cnn_features",
                    "linear_probe", "predict", "small_cnn", "train_cnn"],
    "copies": ["NEAR_COPY_RMS", "CopyCheck", "copy_check", "find_near_copies", "near_copy_threshold",
               "nearest_neighbours"],
    "distribution": ["PerClassValue", "distribution_metrics", "frechet_distance", "median_bandwidth", "mmd_rbf",
                     "per_class", "sliced_wasserstein"],
    "evaluate": ["evaluate_run"],
    "members": ["MAX_MEMBERS_PER_CLASS", "MemberSplit", "membership_split", "public_member_counts"],
    "hints": ["Hint", "troubleshooting_hints"],
    "inputs": ["EvaluationError", "RunInputs", "load_run_inputs"],
    "run_evaluation": ["RunEvaluation"],
    "table_judgement": ["TableJudgement", "judge_table_files", "judge_tables"],
    "table_run": ["TableRunEvaluation", "evaluate_table_run"],
    "text_judgement": ["TextJudgement", "judge_text_files", "judge_texts"],
    "text_run": ["TextRunEvaluation", "evaluate_text_run"],
    "settings": ["EvaluationSettings"],
    "shipped": ["Violation", "shared_distance", "shared_rate", "shipped_violations"],
})
