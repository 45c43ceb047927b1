"""A classifier trained on one line (training set) and scored on the real test set, and what the table and the text
judges build on it.

:func:`score_lines` fits every model on every line and scores each on the test set (:class:`ModelResult`, with its
:class:`ClassScores`): ROC AUC (two classes: the score of the test set's minority class, named, :func:`minority_class`;
more: the macro one-vs-rest mean), accuracy, macro-F1 and per-class precision, recall and F1. Both modalities fit
through :func:`fit_probabilities` (one thread, a class the line lacks at probability 0) and share the fixed logistic
regression (:func:`logistic_regression`). A line of :data:`PRIVATE_LINES` was trained on the private samples, a
reference the user could not publish: :func:`shareable_utility` gives its scores as a shared report may show them,
rounded by :func:`~pcevolve.evaluation.shipped.shared_rate` (:func:`shared_scores`) and without its size (the exact
private count). A modality's judgement is a :class:`LinesJudgement` (its classes, their counts and the lines' results,
and their JSON) of sets whose classes :func:`judged_classes` checked and counted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from pcevolve.data import LabeledDataset
from pcevolve.evaluation.attacks import roc_auc
from pcevolve.evaluation.shipped import shared_rate

#: Lines trained on the private rows: a reference the user could not publish.
PRIVATE_LINES = frozenset({"real"})
#: Logistic regression's fixed recipe (L2, lbfgs), the same in every modality's judges.
LOGISTIC_C = 1.0
LOGISTIC_MAX_ITER = 2000
#: BLAS/OpenMP threads while the models fit: on small sets and a shared machine one thread is faster than several
#: waiting for each other (as measured for the image evaluation in docs/performance.md, "The evaluation"), and the
#: results do not depend on it.
MODEL_THREADS = 1


@dataclass(frozen=True)
class ClassScores:
    """One model's scores on the real test set.

    Attributes:
        auc: ROC AUC; None when undefined (a class with no test row, or one class only).
        auc_kind: ``"binary"`` (the score of ``positive_class`` ranks its rows above the others) or
            ``"macro one-vs-rest"`` (the mean over classes of each class's score against the rest).
        positive_class: The class the binary AUC ranks (the test set's minority class); None for more classes.
        accuracy: Fraction of test rows predicted right.
        macro_f1: Mean F1 over the classes.
        precision, recall, f1: Per class (precision 0 for a class never predicted).
        support: Test rows per class.
    """

    auc: float | None
    auc_kind: str
    positive_class: int | None
    accuracy: float
    macro_f1: float
    precision: tuple[float, ...]
    recall: tuple[float, ...]
    f1: tuple[float, ...]
    support: tuple[int, ...]

    def to_json(self, class_names: Sequence[str]) -> dict[str, Any]:
        return {"auc": self.auc, "auc_kind": self.auc_kind,
                "positive_class": None if self.positive_class is None else class_names[self.positive_class],
                "accuracy": self.accuracy, "macro_f1": self.macro_f1,
                "per_class": {name: {"precision": p, "recall": r, "f1": f, "support": s}
                              for name, p, r, f, s in zip(class_names, self.precision, self.recall, self.f1,
                                                          self.support, strict=True)}}


def minority_class(labels: np.ndarray, classes: int) -> int:
    """The class with the fewest rows among those present (the lowest index on a tie)."""
    counts = np.bincount(np.asarray(labels, dtype=np.int64), minlength=classes).astype(np.float64)
    return int(np.where(counts > 0, counts, np.inf).argmin())


def logistic_regression() -> LogisticRegression:
    """A new, unfitted logistic regression of the fixed recipe (:data:`LOGISTIC_C`, :data:`LOGISTIC_MAX_ITER`)."""
    return LogisticRegression(C=LOGISTIC_C, max_iter=LOGISTIC_MAX_ITER)


def fit_probabilities(estimator: Callable[[], Any], x_train: Any, y_train: np.ndarray, x_test: Any, *,
                      classes: int) -> np.ndarray:
    """Fit the classifier ``estimator()`` makes (scikit-learn's interface; called once the labels hold two classes)
    with :data:`MODEL_THREADS` threads → its (N_test, ``classes``) class probabilities (dense or sparse x). A class
    absent from the training labels gets probability 0, so the columns always mean the same classes.

    Raises:
        ValueError: Fewer than two classes in the training labels.
    """
    present = np.unique(y_train)
    if len(present) < 2:
        raise ValueError(f"the training set holds {len(present)} class; a classifier needs at least two")
    model = estimator()
    with threadpool_limits(MODEL_THREADS):
        model.fit(x_train, y_train)
        proba = model.predict_proba(x_test)
    out = np.zeros((x_test.shape[0], classes))
    out[:, model.classes_.astype(np.int64)] = proba
    return out


def class_scores(y_true: np.ndarray, probabilities: np.ndarray, *, positive_class: int) -> ClassScores:
    """Scores of class probabilities (N, K) against true labels; the prediction is the most probable class.

    Args:
        y_true: (N,) labels in ``[0, K)``.
        probabilities: (N, K) scores per class (rows need not sum to 1).
        positive_class: For K = 2, the class whose score the AUC ranks.
    """
    y = np.asarray(y_true, dtype=np.int64)
    scores = np.asarray(probabilities, dtype=np.float64)
    k = scores.shape[1]
    predicted = scores.argmax(1)
    support = np.bincount(y, minlength=k)
    hits = np.bincount(y[predicted == y], minlength=k).astype(np.float64)
    chosen = np.bincount(predicted, minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = np.where(support > 0, hits / support, 0.0)
        precision = np.where(chosen > 0, hits / chosen, 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)

    def ranked(c: int) -> float | None:
        inside = y == c
        return roc_auc(scores[inside, c], scores[~inside, c]) if inside.any() and (~inside).any() else None

    if k == 2:
        auc, kind, positive = ranked(positive_class), "binary", positive_class
    else:
        each = [ranked(c) for c in range(k)]
        auc = None if any(v is None for v in each) else float(np.mean(each))
        kind, positive = "macro one-vs-rest", None
    return ClassScores(auc=auc, auc_kind=kind, positive_class=positive, accuracy=float((predicted == y).mean()),
                       macro_f1=float(f1.mean()), precision=tuple(map(float, precision)),
                       recall=tuple(map(float, recall)), f1=tuple(map(float, f1)),
                       support=tuple(int(s) for s in support))


@dataclass(frozen=True)
class ModelResult:
    """One model trained on one line (training set) and tested on the real test set.

    Attributes:
        line: The line's key (``"synthetic"``, ``"real"``).
        model: The model's key.
        scores: Its test scores; None when it could not be trained (``error`` says why).
        train_size: Training samples.
        line_label, model_label: Their names in the report.
        error: Why there are no scores.
        seconds: Fit plus prediction time.
    """

    line: str
    model: str
    scores: ClassScores | None
    train_size: int
    line_label: str = ""
    model_label: str = ""
    error: str | None = None
    seconds: float = 0.0

    def to_json(self, class_names: Sequence[str]) -> dict[str, Any]:
        return {"line": self.line, "label": self.line_label, "model": self.model, "model_label": self.model_label,
                "reference_only": self.line in PRIVATE_LINES, "train_size": self.train_size, "error": self.error,
                **({} if self.scores is None else self.scores.to_json(class_names))}


def shareable_utility(results: Sequence[ModelResult], class_names: Sequence[str]) -> list[dict[str, Any]]:
    """The results as a shared report may show them: a line trained on the private samples keeps its scores, rounded
    by :func:`~pcevolve.evaluation.shipped.shared_rate` (:func:`shared_scores`), but not its size (that would be the
    exact private count)."""
    entries = []
    for result in results:
        entry = result.to_json(class_names)
        if result.line in PRIVATE_LINES:
            entry = {**shared_scores(entry), "train_size": None}
        entries.append(entry)
    return entries


#: The scores of a :meth:`ModelResult.to_json` entry, overall and in each class's entry.
_SCORES = ("auc", "accuracy", "macro_f1")
_CLASS_SCORES = ("precision", "recall", "f1")


def shared_scores(entry: dict[str, Any]) -> dict[str, Any]:
    """A model's JSON entry with every score rounded by :func:`~pcevolve.evaluation.shipped.shared_rate`: for a model
    trained on the private samples, whose exact scores are not the release's."""
    out = {**entry, **{key: shared_rate(entry[key]) for key in _SCORES if key in entry}}
    if "per_class" in entry:
        out["per_class"] = {name: {**scores, **{key: shared_rate(scores[key]) for key in _CLASS_SCORES}}
                            for name, scores in entry["per_class"].items()}
    return out


def score_lines(lines: dict[str, LabeledDataset], test: LabeledDataset, *, line_labels: Mapping[str, str],
                models: Mapping[str, str],
                probabilities: Callable[[str, LabeledDataset], np.ndarray]) -> list[ModelResult]:
    """Every model on every line (key → training set), scored on ``test``: the loop both modalities' judges share.

    ``probabilities(model, train)`` fits ``model`` on ``train`` and returns its class probabilities on ``test``; a
    ``ValueError`` (one class only, nothing to learn from) becomes a result with ``error`` and no scores.
    """
    classes = len(test.class_names)
    positive = minority_class(test.labels, classes)
    results = []
    for line, train in lines.items():
        for model in models:
            started = time.perf_counter()
            names = {"line_label": line_labels[line], "model_label": models[model]}
            try:
                proba = probabilities(model, train)
            except ValueError as error:
                results.append(ModelResult(line, model, None, len(train), **names, error=str(error),
                                           seconds=time.perf_counter() - started))
                continue
            results.append(ModelResult(line, model, class_scores(test.labels, proba, positive_class=positive),
                                       len(train), **names, seconds=time.perf_counter() - started))
    return results


def judged_classes(what: str, check: Callable[[str, LabeledDataset], object], synthetic: LabeledDataset,
                   test: LabeledDataset, private: LabeledDataset | None) -> dict[str, Any]:
    """The classes of the sets a judge compares, as keyword arguments of a :class:`LinesJudgement`: ``class_names``,
    the test set's :func:`minority_class` and the synthetic and the test samples per class. Each set is first passed
    to ``check(its name, set)``, which raises ``ValueError`` for a set the judge cannot read.

    Raises:
        ValueError: ``check``'s, or a set's classes differ from those before it (read every ``what`` with the same
            class_names).
    """
    names = None
    for key, dataset in (("synthetic", synthetic), ("test", test), ("private", private)):
        if dataset is None:
            continue
        check(key, dataset)
        if names is not None and dataset.class_names != names:
            raise ValueError(f"the {key} set's classes {list(dataset.class_names)} differ from {list(names)}; read "
                             f"every {what} with the same class_names")
        names = dataset.class_names
    classes = len(test.class_names)
    return {"class_names": test.class_names, "minority_class": minority_class(test.labels, classes),
            "synthetic_per_class": tuple(np.bincount(synthetic.labels, minlength=classes).tolist()),
            "test_per_class": tuple(np.bincount(test.labels, minlength=classes).tolist())}


class LinesJudgement:
    """What every modality's judgement holds and shows alike: the judged sets' classes and the lines' results.

    A subclass is a dataclass with the attributes ``class_names``, ``minority_class``, ``synthetic_per_class``,
    ``test_per_class`` (:func:`judged_classes` gives these four) and ``utility`` (a tuple of :class:`ModelResult`).
    """

    def result(self, line: str, model: str) -> ModelResult | None:
        """``model`` trained on ``line``; None when no such result."""
        return next((r for r in self.utility if r.line == line and r.model == model), None)

    def lines_json(self) -> dict[str, Any]:
        """What may leave the secure zone of the classes and the lines (``to_json``'s keys ``minority_class`` to
        ``utility``): the counts per class, the minority class and :func:`shareable_utility`."""
        names = self.class_names
        return {"minority_class": names[self.minority_class],
                "synthetic_per_class": dict(zip(names, self.synthetic_per_class, strict=True)),
                "test_per_class": dict(zip(names, self.test_per_class, strict=True)),
                "utility": shareable_utility(self.utility, names)}

    def secure_utility(self) -> list[dict[str, Any]]:
        """Every line's result with its exact figures and its time (``to_secure_json``'s ``utility``)."""
        return [{**r.to_json(self.class_names), "seconds": r.seconds} for r in self.utility]

