"""Stage 5 evaluation: utility, distribution and privacy metrics on arrays (SPEC R7).

Pure functions of arrays and explicit generators; the report assembles them. Modules
(one concept each):

* ``classifiers`` — the downstream CNN and linear probe, and classification metrics (utility);
* ``distribution`` — MMD², sliced Wasserstein and Fréchet distances, overall and per class;
* ``attacks`` — membership inference (DCR and DOMIAS) with bootstrap intervals and the DP bound;
* ``copies`` — nearest private sample of each synthetic one, and the near-copy predicate.
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
from pcevolve.evaluation.copies import CopyCheck, copy_check, find_near_copies, nearest_neighbours
from pcevolve.evaluation.distribution import (
    PerClassValue,
    distribution_metrics,
    frechet_distance,
    median_bandwidth,
    mmd_rbf,
    per_class,
    sliced_wasserstein,
)

__all__ = [
    "FPR_LEVELS",
    "AttackResult",
    "ClassificationMetrics",
    "CopyCheck",
    "Estimate",
    "MembershipAttack",
    "PerClassValue",
    "classic_augmentation",
    "classification_metrics",
    "cnn_features",
    "copy_check",
    "dcr_scores",
    "distribution_metrics",
    "domias_scores",
    "dp_tpr_bound",
    "evaluate_attack",
    "find_near_copies",
    "frechet_distance",
    "linear_probe",
    "median_bandwidth",
    "membership_attacks",
    "mmd_rbf",
    "nearest_neighbours",
    "per_class",
    "predict",
    "roc_auc",
    "roc_curve",
    "sliced_wasserstein",
    "small_cnn",
    "train_cnn",
]
