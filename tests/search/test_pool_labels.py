"""Pool labels: the class model's labels, the pixel CNN's seed set, and co-training that corrects the class model."""

import numpy as np
import pytest

from pcevolve.config import parse_config
from pcevolve.search.pool_labels import PoolLabels, co_trained, seed_set, softmax


def _striped_pool(rng: np.random.Generator, per_kind: int) -> tuple[np.ndarray, np.ndarray]:
    """16×16 grey images of four kinds a CNN tells apart at a glance: horizontal stripes, vertical stripes, a
    bright square (the task's three classes) and a checkerboard (a kind outside the task, label 3)."""
    rows, cols = np.indices((16, 16))
    kinds = [(rows // 2) % 2, (cols // 2) % 2, ((rows > 4) & (rows < 11) & (cols > 4) & (cols < 11)),
             ((rows // 4 + cols // 4) % 2)]
    images, labels = [], []
    for label, pattern in enumerate(kinds):
        shifts = rng.integers(0, 4, size=(per_kind, 2))
        for dy, dx in shifts:
            image = np.roll(pattern, (dy, dx), axis=(0, 1)) * 180 + rng.integers(0, 60, (16, 16))
            images.append(image.clip(0, 255).astype(np.uint8))
        labels += [label] * per_kind
    return np.stack(images), np.array(labels)


def _noisy_first_labels(truth: np.ndarray, rng: np.random.Generator, wrong: float) -> tuple[PoolLabels, np.ndarray]:
    """Class-model-like labels over 3 classes: right, except for a ``wrong`` share of the task's images, which get
    a wrong class as surely (a posterior of about 0.6 either way); outside images score low for every class."""
    scores = rng.normal(0.0, 0.1, (len(truth), 3))
    inside = truth < 3
    scores[inside, truth[inside]] += 1.0
    flipped = np.flatnonzero(inside & (rng.uniform(size=len(truth)) < wrong))
    scores[flipped] = rng.normal(0.0, 0.1, (len(flipped), 3))
    scores[flipped, (truth[flipped] + 1) % 3] += 1.0
    scores[~inside] -= 4.0
    labels = PoolLabels(posterior=softmax(scores), confidence=scores.max(axis=1), labeller="class-model")
    return labels, scores


def test_the_seed_set_takes_each_class_s_surest_images_and_the_lowest_scoring_as_outside():
    posterior = softmax(np.array([[5.0, 0, 0], [4, 0, 0], [3, 0, 0], [0, 5, 0], [0, 4, 0], [0, 0, 5], [0, 0, 1],
                                  [1, 0, 0]]))
    confidence = np.array([9.0, 8, 7, 9, 8, 9, 1, 0.5])
    first = PoolLabels(posterior=posterior, confidence=confidence, labeller="class-model")
    scores = np.log(posterior) + np.array([0, 0, 0, 0, 0, 0, -9, -10])[:, None]
    rows, labels = seed_set(first, scores, per_class=np.array([2, 1, 1]), outside_share=0.25)
    assert rows.tolist() == [0, 1, 3, 5, 6, 7] and labels.tolist() == [0, 0, 1, 2, 3, 3]
    rows, labels = seed_set(first, scores, per_class=np.array([2, 1, 1]), outside_share=0.0)
    assert 3 not in labels
    with pytest.raises(ValueError, match="positive per-class counts"):
        seed_set(first, scores, per_class=np.array([2, 0, 1]), outside_share=0.1)


def test_co_training_on_the_pixels_corrects_the_class_model_and_flags_the_outside_kind(tmp_path):
    rng = np.random.default_rng(0)
    images, truth = _striped_pool(rng, per_kind=100)
    first, scores = _noisy_first_labels(truth, rng, wrong=0.2)
    inside = truth < 3
    before = np.mean(first.predicted[inside] == truth[inside])
    labels = co_trained(images, first, scores, per_class=np.array([100, 100, 100]), outside_share=0.2, seed=0,
                        flip=False)
    after = np.mean(labels.predicted[inside] == truth[inside])
    # The CNN learns the stripes from the 80% the class model has right and outweighs it on the rest.
    assert before < 0.85 and after > 0.95
    # The outside kind is the least confident: the CNN learnt it as "outside".
    assert labels.confidence[~inside].max() < np.quantile(labels.confidence[inside], 0.05)
    assert labels.labeller == "pixel-cnn"
    again = co_trained(images, first, scores, per_class=np.array([100, 100, 100]), outside_share=0.2, seed=0,
                       flip=False)
    np.testing.assert_array_equal(again.posterior, labels.posterior)  # deterministic for a seed
    saved = PoolLabels.load(labels.save(tmp_path / "pool_labels.npz"))
    np.testing.assert_array_equal(saved.posterior, labels.posterior)
    assert saved.labeller == "pixel-cnn" and saved.assigned() == labels.assigned()


def test_the_pool_labeller_is_resolved_by_modality_and_pixel_cnn_needs_images():
    assert parse_config({}).pool_labeller == "pixel-cnn"
    table = {"data": {"modality": "tabular", "label_column": "y", "schema_file": "schema.json",
                      "classes": ["no", "yes"]},
             "decoder": {"name": "nearest-public"}}
    assert parse_config(table).pool_labeller == "class-model"
    with pytest.raises(ValueError, match="search.pool_labeller: pixel-cnn learns from image pixels"):
        parse_config({**table, "search": {"pool_labeller": "pixel-cnn"}})
    assert parse_config({"search": {"pool_labeller": "class-model"}}).pool_labeller == "class-model"
