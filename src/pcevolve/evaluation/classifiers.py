"""Downstream utility models: train on one set (synthetic, or few-shot real), test on real.

Two fixed recipes, chosen in advance and never tuned on a test set:

* :func:`train_cnn` — the small CNN of :mod:`pcevolve.nets.small_cnn` on the images themselves (15 epochs by
  default; images over 64 pixels a side averaged down to it). This is the recipe of ``bench/decoder.py`` plus a
  128-unit hidden layer, whose output (:func:`cnn_features`) is a compact feature space for judging independently
  of the search's encoder.
* :func:`linear_probe` — multinomial logistic regression (L2, lbfgs) on standardised
  features; the inverse regularisation C is picked from :data:`PROBE_CS` by stratified
  k-fold accuracy on the training set only.

Both are deterministic for a seed on CPU.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler

from pcevolve.nets.small_cnn import (
    CNN_BATCH_SIZE,
    CNN_EPOCHS,
    check_labels,
    classic_augmentation,
    cnn_features,
    max_shift,
    predict,
    small_cnn,
    train_cnn,
)

# The judge's CNN is the shared recipe (pcevolve.nets.small_cnn), re-exported under the evaluation's names.
__all__ = ["CNN_BATCH_SIZE", "CNN_EPOCHS", "PROBE_CS", "PROBE_FOLDS", "ClassificationMetrics", "classic_augmentation",
           "classification_metrics", "cnn_features", "linear_probe", "max_shift", "predict", "small_cnn", "train_cnn"]

#: Linear-probe grid of inverse L2 strengths and the most cross-validation folds.
PROBE_CS: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0)
PROBE_FOLDS = 5
PROBE_MAX_ITER = 2000


def linear_probe(train_features: np.ndarray, train_labels: np.ndarray, test_features: np.ndarray, *,
                 folds: int = PROBE_FOLDS) -> np.ndarray:
    """Multinomial logistic regression fitted on the training features; predicted labels of the test ones.

    Features are standardised with the training set's mean and scale. C is chosen from
    :data:`PROBE_CS` by mean accuracy over ``min(folds, smallest class count)`` stratified
    folds of the *training* set (ties → the stronger regularisation); with fewer than 2
    samples in some class there is nothing to cross-validate and C = 1. Deterministic: lbfgs
    and unshuffled folds.

    Args:
        train_features: (N, D) floats.
        train_labels: (N,) integer labels (any integers; at least two distinct values).
        test_features: (M, D) floats.
        folds: Most cross-validation folds (at least 2). The cost is about ``folds × len(PROBE_CS)`` fits.

    Returns:
        (M,) predicted labels, same dtype as ``train_labels``.
    """
    x_train = np.asarray(train_features, dtype=np.float64).reshape(len(train_features), -1)
    x_test = np.asarray(test_features, dtype=np.float64).reshape(len(test_features), -1)
    y = np.asarray(train_labels)
    if len(y) != len(x_train) or x_train.shape[1] != x_test.shape[1]:
        raise ValueError("need one label per training row and the same feature width for train and test")
    _, counts = np.unique(y, return_counts=True)
    if len(counts) < 2:
        raise ValueError("need at least two classes in the training labels")
    scaler = StandardScaler().fit(x_train)
    x_train, x_test = scaler.transform(x_train), scaler.transform(x_test)
    if folds < 2:
        raise ValueError(f"folds must be at least 2, got {folds}")
    folds = min(folds, int(counts.min()))
    best_c = 1.0
    if folds >= 2:
        scores = []
        for c in PROBE_CS:
            correct = 0
            for fit_rows, val_rows in StratifiedKFold(n_splits=folds).split(x_train, y):
                model = LogisticRegression(C=c, max_iter=PROBE_MAX_ITER).fit(x_train[fit_rows], y[fit_rows])
                correct += int((model.predict(x_train[val_rows]) == y[val_rows]).sum())
            scores.append(correct)
        best_c = PROBE_CS[int(np.argmax(scores))]  # argmax takes the first best: the smallest C
    model = LogisticRegression(C=best_c, max_iter=PROBE_MAX_ITER).fit(x_train, y)
    return model.predict(x_test)


@dataclass(frozen=True)
class ClassificationMetrics:
    """Utility of a classifier on a labelled test set, overall and per class.

    Attributes:
        accuracy: Fraction correct.
        macro_f1: Mean F1 over the classes that occur in the truth or the predictions (F1 = 0 for such a
            class never predicted correctly).
        per_class_accuracy: Recall of each class (NaN for a class absent from the truth).
        confusion: (classes, classes) counts; row = true class, column = predicted class.
        class_names: One name per class.
    """

    accuracy: float
    macro_f1: float
    per_class_accuracy: tuple[float, ...]
    confusion: np.ndarray
    class_names: tuple[str, ...]

    @property
    def top1_error(self) -> float:
        return 1.0 - self.accuracy

    @property
    def worst_class(self) -> int | None:
        """The class with the lowest accuracy (None if no class occurs in the truth)."""
        values = np.asarray(self.per_class_accuracy)
        present = np.isfinite(values)
        return int(np.where(present, values, np.inf).argmin()) if present.any() else None

    def to_json(self) -> dict[str, Any]:
        return {"accuracy": self.accuracy, "top1_error": self.top1_error, "macro_f1": self.macro_f1,
                "per_class_accuracy": {name: (None if math.isnan(v) else v)
                                       for name, v in zip(self.class_names, self.per_class_accuracy)},
                "worst_class": None if self.worst_class is None else self.class_names[self.worst_class],
                "confusion": self.confusion.tolist(), "class_names": list(self.class_names),
                "direction": {"accuracy": "max", "top1_error": "min", "macro_f1": "max"}}


def classification_metrics(y_true: np.ndarray, y_pred: np.ndarray, classes: int | Sequence[str]
                           ) -> ClassificationMetrics:
    """Accuracy, top-1 error, macro-F1, per-class accuracy and the confusion matrix.

    Args:
        y_true: (N,) true labels in ``[0, K)``, N ≥ 1.
        y_pred: (N,) predicted labels in ``[0, K)``.
        classes: K, or the K class names (index = label).
    """
    names = tuple(str(k) for k in range(classes)) if isinstance(classes, Integral) else tuple(map(str, classes))
    k = len(names)
    t = check_labels(y_true, len(np.asarray(y_true)), k)
    p = check_labels(y_pred, len(t), k)
    if len(t) == 0:
        raise ValueError("need at least one test sample")
    confusion = np.bincount(t * k + p, minlength=k * k).reshape(k, k)
    hits = np.diag(confusion).astype(np.float64)
    support, predicted = confusion.sum(1), confusion.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = hits / support
        f1 = np.where(support + predicted > 0, 2 * hits / (support + predicted), np.nan)
    return ClassificationMetrics(
        accuracy=float(hits.sum() / len(t)),
        macro_f1=float(np.nanmean(f1)),
        per_class_accuracy=tuple(float(v) for v in recall),
        confusion=confusion,
        class_names=names,
    )
