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
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from pcevolve.data import LabeledDataset
from pcevolve.data.table_schema import TableSchema
from pcevolve.evaluation.line_scores import ModelResult, score_lines
from pcevolve.evaluation.table_encoding import model_matrix

#: The utility models, in report order, with their names in the report.
MODELS: dict[str, str] = {"gbdt": "gradient-boosted trees", "logistic": "logistic regression"}
#: The training sets of the utility models, in report order.
LINES: dict[str, str] = {"synthetic": "synthetic rows (delivered)",
                         "real": "private rows (real reference, not DP)"}
#: Logistic regression's fixed recipe.
LOGISTIC_C = 1.0
LOGISTIC_MAX_ITER = 2000
#: BLAS/OpenMP threads while the models fit: on small tables and a shared machine one thread is faster than
#: several waiting for each other (the image evaluation measured the same), and the results do not depend on it.
MODEL_THREADS = 1


def fit_probabilities(model: str, x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, *,
                      classes: int, seed: int) -> np.ndarray:
    """Fit one of :data:`MODELS` and return its (N_test, ``classes``) class probabilities.

    A class absent from the training labels gets probability 0, so the columns always mean the same classes.

    Raises:
        ValueError: Fewer than two classes in the training labels.
    """
    present = np.unique(y_train)
    if len(present) < 2:
        raise ValueError(f"the training set holds {len(present)} class; a classifier needs at least two")
    if model == "gbdt":
        estimator: Any = HistGradientBoostingClassifier(random_state=seed)
    elif model == "logistic":
        estimator = LogisticRegression(C=LOGISTIC_C, max_iter=LOGISTIC_MAX_ITER)
    else:
        raise KeyError(f"unknown model {model!r}; known: {', '.join(MODELS)}")
    with threadpool_limits(MODEL_THREADS):
        estimator.fit(x_train, y_train)
        proba = estimator.predict_proba(x_test)
    out = np.zeros((len(x_test), classes))
    out[:, estimator.classes_.astype(np.int64)] = proba
    return out


def utility_lines(lines: dict[str, LabeledDataset], test: LabeledDataset, schema: TableSchema, *,
                  seed: int = 0) -> list[ModelResult]:
    """Every model of :data:`MODELS` on every line (key of :data:`LINES` → training set), tested on ``test``."""
    classes = len(test.class_names)

    def probabilities(model: str, train: LabeledDataset) -> np.ndarray:
        x_train, x_test = model_matrix(train.samples, test.samples, schema)
        return fit_probabilities(model, x_train, train.labels, x_test, classes=classes, seed=seed)

    return score_lines(lines, test, line_labels=LINES, models=MODELS, probabilities=probabilities)
