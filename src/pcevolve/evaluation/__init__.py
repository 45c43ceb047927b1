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
* ``judges`` — :data:`JUDGES`, the judge of each modality, which ``pcevolve evaluate`` dispatches to.
"""

from pcevolve.evaluation.attacks import (
    FPR_LEVELS,
    AttackResult,
    Estimate,
    MembershipAttack,
    dcr_scores,
    domias_scores,
    dp_tpr_bound,
    evaluate_attack,
    membership_attacks,
    roc_auc,
    roc_curve,
)
from pcevolve.evaluation.classifiers import (
    ClassificationMetrics,
    classic_augmentation,
    classification_metrics,
    cnn_features,
    linear_probe,
    predict,
    small_cnn,
    train_cnn,
)
from pcevolve.evaluation.copies import (
    NEAR_COPY_RMS,
    CopyCheck,
    copy_check,
    find_near_copies,
    near_copy_threshold,
    nearest_neighbours,
)
from pcevolve.evaluation.distribution import (
    PerClassValue,
    distribution_metrics,
    frechet_distance,
    median_bandwidth,
    mmd_rbf,
    per_class,
    sliced_wasserstein,
)
from pcevolve.evaluation.evaluate import (
    EvaluationSettings,
    RunEvaluation,
    evaluate_run,
    membership_split,
)
from pcevolve.evaluation.hints import Hint, troubleshooting_hints
from pcevolve.evaluation.inputs import EvaluationError, RunInputs, load_run_inputs
from pcevolve.evaluation.judges import JUDGES, JudgeRequest, Verdict, judge_run
from pcevolve.evaluation.table_run import TableRunEvaluation, evaluate_table_run
from pcevolve.evaluation.tabular import TableJudgement, judge_table_files, judge_tables
from pcevolve.evaluation.text import TextJudgement, judge_text_files, judge_texts
from pcevolve.evaluation.text_run import TextRunEvaluation, evaluate_text_run

__all__ = [
    "FPR_LEVELS",
    "JUDGES",
    "NEAR_COPY_RMS",
    "AttackResult",
    "ClassificationMetrics",
    "CopyCheck",
    "Estimate",
    "EvaluationError",
    "EvaluationSettings",
    "Hint",
    "JudgeRequest",
    "MembershipAttack",
    "PerClassValue",
    "RunEvaluation",
    "RunInputs",
    "TableJudgement",
    "TableRunEvaluation",
    "TextJudgement",
    "TextRunEvaluation",
    "Verdict",
    "classic_augmentation",
    "classification_metrics",
    "cnn_features",
    "copy_check",
    "dcr_scores",
    "distribution_metrics",
    "domias_scores",
    "dp_tpr_bound",
    "evaluate_attack",
    "evaluate_run",
    "evaluate_table_run",
    "evaluate_text_run",
    "find_near_copies",
    "frechet_distance",
    "judge_run",
    "judge_table_files",
    "judge_tables",
    "judge_text_files",
    "judge_texts",
    "linear_probe",
    "load_run_inputs",
    "median_bandwidth",
    "membership_attacks",
    "membership_split",
    "mmd_rbf",
    "near_copy_threshold",
    "nearest_neighbours",
    "per_class",
    "predict",
    "roc_auc",
    "roc_curve",
    "sliced_wasserstein",
    "small_cnn",
    "train_cnn",
    "troubleshooting_hints",
]
