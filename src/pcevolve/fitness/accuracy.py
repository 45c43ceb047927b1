"""Accuracy proxy: a linear classifier trained on the candidate, scored on the DP validation set.

The classifier is closed-form ridge regression of one-hot targets on the features with
an unpenalised intercept (one-vs-rest least squares). It is deterministic, needs one
P×P solve, and for two Gaussian classes its direction is the LDA direction of the
candidate — i.e. what a linear head trained on the synthetic set would learn, cheaply.

Reads: the candidate (features, labels) and ``targets.validation_features / _labels``.
Range [0, 1]; higher is better.
"""

from __future__ import annotations

import numpy as np

from pcevolve.fitness.candidate import Candidate
from pcevolve.fitness.targets import FitnessTargets

DEFAULT_RIDGE = 1e-3


def fit_ridge_classifier(features: np.ndarray, labels: np.ndarray, num_classes: int, *,
                         ridge: float = DEFAULT_RIDGE) -> tuple[np.ndarray, np.ndarray]:
    """One-vs-rest ridge classifier: weights (P, K) and bias (K,); predict argmax(x W + b).

    The penalty is ``ridge`` × the mean eigenvalue of the centred Gram matrix (scale-free);
    a candidate with no spread at all gets zero weights (predicts one class).
    """
    if not ridge > 0:
        raise ValueError(f"ridge must be positive, got {ridge!r}")
    x_mean = features.mean(axis=0)
    centred = features - x_mean
    one_hot = np.zeros((features.shape[0], num_classes))
    one_hot[np.arange(features.shape[0]), labels] = 1.0
    y_mean = one_hot.mean(axis=0)
    gram = centred.T @ centred
    scale = float(np.trace(gram)) / gram.shape[0]
    if scale <= 0.0:
        weights = np.zeros((features.shape[1], num_classes))
    else:
        weights = np.linalg.solve(gram + ridge * scale * np.eye(gram.shape[0]), centred.T @ (one_hot - y_mean))
    return weights, y_mean - x_mean @ weights


def accuracy(candidate: Candidate, targets: FitnessTargets, *, ridge: float = DEFAULT_RIDGE) -> float:
    """Share of the DP validation set the candidate-trained ridge classifier gets right; in [0, 1], higher better."""
    weights, bias = fit_ridge_classifier(candidate.features, candidate.labels, targets.num_classes, ridge=ridge)
    predicted = np.argmax(targets.validation_features @ weights + bias, axis=1)
    return float(np.mean(predicted == targets.validation_labels))
