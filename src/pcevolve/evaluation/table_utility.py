"""The utility judge of a synthetic table: two fixed models trained on it, tested on the real test table.

Two fixed recipes, chosen in advance and never tuned on the test set: gradient-boosted trees
(``HistGradientBoostingClassifier``, library defaults, seeded) and logistic regression (L2, C = 1, lbfgs). Both see
the same encoding (:func:`~pcevolve.evaluation.table_encoding.model_matrix`): every categorical column one-hot over
the schema's categories, every numeric column standardised with the mean and standard deviation of *that model's
training set*. Each is trained on the synthetic set and, as a reference line, on the private rows themselves, then
tested on the real test set (:func:`~pcevolve.evaluation.line_scores.score_lines`): ROC AUC (two classes: the score
of the test set's minority class, named; more: the macro one-vs-rest mean), accuracy, macro-F1 and per-class
precision, recall and F1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier

from pcevolve.data import LabeledDataset
from pcevolve.data.table_schema import TableSchema
from pcevolve.evaluation.line_scores import ModelResult, fit_probabilities, logistic_regression, score_lines
from pcevolve.evaluation.table_encoding import model_matrix

#: The utility models, in report order, with their names in the report.
MODELS: dict[str, str] = {"gbdt": "gradient-boosted trees", "logistic": "logistic regression"}
#: The training sets of the utility models, in report order.
LINES: dict[str, str] = {"synthetic": "synthetic rows (delivered)",
                         "real": "private rows (real reference, not DP)"}


def estimator(model: str, *, seed: int) -> Any:
    """A new, unfitted model of :data:`MODELS` (the trees seeded with ``seed``).

    Raises:
        KeyError: Not a model of :data:`MODELS`.
    """
    if model == "gbdt":
        return HistGradientBoostingClassifier(random_state=seed)
    if model == "logistic":
        return logistic_regression()
    raise KeyError(f"unknown model {model!r}; known: {', '.join(MODELS)}")


def utility_lines(lines: dict[str, LabeledDataset], test: LabeledDataset, schema: TableSchema, *,
                  seed: int = 0) -> list[ModelResult]:
    """Every model of :data:`MODELS` on every line (key of :data:`LINES` → training set), tested on ``test``."""
    classes = len(test.class_names)

    def probabilities(model: str, train: LabeledDataset) -> np.ndarray:
        x_train, x_test = model_matrix(train.samples, test.samples, schema)
        return fit_probabilities(lambda: estimator(model, seed=seed), x_train, train.labels, x_test, classes=classes)

    return score_lines(lines, test, line_labels=LINES, models=MODELS, probabilities=probabilities)
