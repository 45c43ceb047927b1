"""Classification metrics (R7.1, R7.3) against hand-computed values and scikit-learn."""

import math

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix, f1_score

from pcevolve.evaluation import classification_metrics

# y_true = 0 0 1 1 2 2, y_pred = 0 1 1 1 2 0:
#   confusion (row = true): [[1, 1, 0], [0, 2, 0], [1, 0, 1]]
#   F1 = 2·TP / (support + predicted): class 0: 2/4, class 1: 4/5, class 2: 2/3 → macro 59/90
TRUE = np.array([0, 0, 1, 1, 2, 2])
PRED = np.array([0, 1, 1, 1, 2, 0])


def test_six_element_example_by_hand():
    m = classification_metrics(TRUE, PRED, ["shirt", "shoe", "bag"])
    assert m.confusion.tolist() == [[1, 1, 0], [0, 2, 0], [1, 0, 1]]
    assert m.accuracy == pytest.approx(4 / 6)
    assert m.top1_error == pytest.approx(2 / 6)
    assert m.macro_f1 == pytest.approx(59 / 90)
    assert m.per_class_accuracy == pytest.approx((0.5, 1.0, 0.5))
    assert m.worst_class == 0
    js = m.to_json()
    assert js["worst_class"] == "shirt"
    assert js["per_class_accuracy"] == {"shirt": 0.5, "shoe": 1.0, "bag": 0.5}
    assert js["confusion"] == [[1, 1, 0], [0, 2, 0], [1, 0, 1]]


def test_agrees_with_sklearn_on_random_labels():
    rng = np.random.default_rng(0)
    t, p = rng.integers(0, 5, 200), rng.integers(0, 5, 200)
    m = classification_metrics(t, p, 5)
    assert m.macro_f1 == pytest.approx(f1_score(t, p, average="macro"))
    np.testing.assert_array_equal(m.confusion, confusion_matrix(t, p, labels=range(5)))


def test_class_absent_from_truth_has_no_accuracy_and_is_left_out_of_f1():
    # Class 2 never occurs and is never predicted: its accuracy is undefined, its F1 is not averaged.
    m = classification_metrics(np.array([0, 1]), np.array([0, 1]), 3)
    assert m.accuracy == 1.0 and m.macro_f1 == 1.0
    assert math.isnan(m.per_class_accuracy[2])
    assert m.to_json()["per_class_accuracy"]["2"] is None
    # Predicted but absent from the truth: F1 0 for it, as scikit-learn's default does.
    m = classification_metrics(np.array([0, 0]), np.array([0, 2]), 3)
    assert m.macro_f1 == pytest.approx((2 / 3 + 0) / 2)


def test_labels_are_validated():
    with pytest.raises(ValueError, match="labels must be in"):
        classification_metrics(np.array([0, 3]), np.array([0, 1]), 3)
    with pytest.raises(ValueError, match="expected 2 integer labels"):
        classification_metrics(np.array([0, 1]), np.array([0]), 3)
