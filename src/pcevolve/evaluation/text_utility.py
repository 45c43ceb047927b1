"""The utility judge of synthetic texts: two fixed probes trained on them, tested on the real test texts.

Two fixed probes, chosen in advance and never tuned on the test set, each trained on a line (the synthetic texts, and
as a reference the private texts) and tested on the real test texts
(:func:`~pcevolve.evaluation.line_scores.score_lines`): accuracy, macro-F1 and per-class precision, recall and F1 (and
the ROC AUC, as the table judges define it).

- ``"tfidf"`` — TF-IDF of words and word pairs (1–2-grams, sublinear term frequency ``1 + log tf``, rows of unit
  length, at most :data:`~pcevolve.evaluation.text_spaces.MAX_FEATURES` n-grams: the most frequent of the training
  texts), fitted on that line's training texts, then logistic regression (L2, C =
  :data:`~pcevolve.evaluation.line_scores.LOGISTIC_C`).
- ``"lsa"`` (the *LSA probe*) — the same TF-IDF followed by a truncated SVD to
  :data:`~pcevolve.evaluation.text_spaces.LSA_DIMS` dimensions (latent semantic analysis,
  :class:`~pcevolve.evaluation.text_spaces.LsaSpace`), fitted on the public texts when given (one space for every
  line), else on that line's training texts; rows of unit length, then logistic regression as above. The components
  are not standardised: that would weigh the SVD's last, noisy components as much as its main themes, and costs a
  probe much of its accuracy (measured in docs/text.md, "The judges' own settings"). Dense "topics" instead of
  sparse n-grams: a second opinion that does not reward a set for repeating the test set's exact phrases.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pcevolve.data import LabeledDataset
from pcevolve.evaluation.line_scores import ModelResult, fit_probabilities, logistic_regression, score_lines
from pcevolve.evaluation.text_spaces import LsaSpace, tfidf_vectorizer

#: The utility probes, in report order, with their names in the report.
MODELS: dict[str, str] = {"tfidf": "TF-IDF + logistic regression", "lsa": "LSA probe"}
#: The training sets of the probes, in report order.
LINES: dict[str, str] = {"synthetic": "synthetic texts (delivered)",
                         "real": "private texts (real reference, not DP)"}


def probe_matrices(model: str, train: np.ndarray, test: np.ndarray, *, lsa: LsaSpace | None = None,
                   seed: int = 0) -> tuple[Any, Any]:
    """A probe's inputs: ``"tfidf"`` sparse TF-IDF fitted on ``train``; ``"lsa"`` unit-length points of ``lsa``
    (fitted on public texts), or of an LSA space fitted on ``train`` when ``lsa`` is None."""
    if model == "tfidf":
        vectorizer = tfidf_vectorizer()
        return vectorizer.fit_transform(train), vectorizer.transform(test)
    if model == "lsa":
        space = lsa if lsa is not None else LsaSpace(train, seed=seed)
        return space.transform(train), space.transform(test)
    raise KeyError(f"unknown probe {model!r}; known: {', '.join(MODELS)}")


def utility_lines(lines: dict[str, LabeledDataset], test: LabeledDataset, *, public: np.ndarray | None = None,
                  seed: int = 0) -> list[ModelResult]:
    """Every probe of :data:`MODELS` on every line (key of :data:`LINES` → training set), tested on ``test``."""
    classes = len(test.class_names)
    shared = None if public is None else LsaSpace(public, seed=seed)  # one public space serves every line

    def probabilities(model: str, train: LabeledDataset) -> np.ndarray:
        # A ValueError here (one class only, or no word at all in the training texts) is a result with an error.
        x_train, x_test = probe_matrices(model, train.samples, test.samples, lsa=shared, seed=seed)
        return fit_probabilities(logistic_regression, x_train, train.labels, x_test, classes=classes)

    return score_lines(lines, test, line_labels=LINES, models=MODELS, probabilities=probabilities)
