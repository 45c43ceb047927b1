"""Utility lines: the same two models trained on each training set, tested on one real test set.

A *line* is one training set judged with both fixed recipes of
:mod:`pcevolve.evaluation.classifiers`: the small CNN on pixels and the linear probe on the
independent encoder's features. The lines of a report (those of the original method's reference experiment):

=================  ==========================================  ===========
key                trained on                                  publishable
=================  ==========================================  ===========
``synthetic``      the delivered synthetic set (ours)          yes
``synthetic_aug``  synthetic + classic augmentation            yes
``fewshot``        the private images themselves               no: reference only, not DP
``fewshot_aug``    private + classic augmentation              no: reference only, not DP
``full``           the full real set (``--full``), thinned     reference
=================  ==========================================  ===========

Same budget for every line: the CNN trains for the same number of **epochs** (passes over its own
training set; the recipe's 15 by default) on every line, so a line's optimizer steps scale with its
size. Equal steps would give the few-shot lines many times more passes; on the demo data that buys
them nothing and costs more CPU time, so epochs it is (measured in docs/compare.md, "The evaluation's
own recipe"). The full real set is thinned to a fixed size first
(``load_run_inputs(full_max=...)``) so its line costs no more than the synthetic one. Classic
augmentation is a training-time transform of pixels, so the augmented lines exist for the CNN
only; the probe's frozen features would need every augmented copy re-encoded.

No peeking: both recipes are fixed in advance (the probe picks its regulariser by
cross-validation on its training set); the test set is only ever predicted.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from threadpoolctl import threadpool_limits

from pcevolve.evaluation.classifiers import (
    CNN_BATCH_SIZE,
    ClassificationMetrics,
    classification_metrics,
    linear_probe,
    predict,
    train_cnn,
)

#: Human-readable names of the lines, in report order.
LINE_LABELS: dict[str, str] = {
    "synthetic": "synthetic (ours)",
    "synthetic_aug": "synthetic + classic augmentation",
    "fewshot": "few-shot real (private, reference only)",
    "fewshot_aug": "few-shot real + classic augmentation (private, reference only)",
    "full": "full real",
}
#: Lines trained on the private images: a reference the user could not publish, not DP.
PRIVATE_LINES = frozenset({"fewshot", "fewshot_aug"})


@dataclass(frozen=True)
class TrainingSet:
    """One line's training data.

    Attributes:
        key: A key of :data:`LINE_LABELS`.
        images: uint8 images for the CNN.
        labels: (N,) class labels.
        features: (N, D) independent features for the probe, or None (no probe line, e.g. augmented lines).
        augment: Train the CNN with classic augmentation.
    """

    key: str
    images: np.ndarray
    labels: np.ndarray
    features: np.ndarray | None
    augment: bool = False


@dataclass(frozen=True)
class UtilityResult:
    """One model on one line.

    Attributes:
        key: The line.
        model: ``"cnn"`` or ``"probe"``.
        metrics: Test-set metrics.
        train_size: Training samples.
        epochs: CNN passes over the training set (None for the probe).
        steps: CNN optimizer steps (None for the probe).
        seconds: Training plus prediction time.
    """

    key: str
    model: str
    metrics: ClassificationMetrics
    train_size: int
    epochs: int | None
    steps: int | None
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"line": self.key, "label": LINE_LABELS[self.key], "model": self.model,
                "reference_only": self.key in PRIVATE_LINES, "train_size": self.train_size,
                "epochs": self.epochs, "steps": self.steps, "seconds": self.seconds, **self.metrics.to_json()}


def evaluate_cnn(line: TrainingSet, test_images: np.ndarray, test_labels: np.ndarray, *,
                 class_names: tuple[str, ...], epochs: int, seed: int, flip: bool) -> UtilityResult:
    """Train the small CNN on a line for ``epochs`` passes and test it on the real test images."""
    started = time.perf_counter()
    model = train_cnn(line.images, line.labels, classes=len(class_names), seed=seed, epochs=epochs,
                      augment=line.augment, flip=flip)
    metrics = classification_metrics(test_labels, predict(model, test_images), class_names)
    return UtilityResult(key=line.key, model="cnn", metrics=metrics, train_size=len(line.labels), epochs=epochs,
                         steps=epochs * math.ceil(len(line.labels) / CNN_BATCH_SIZE),
                         seconds=time.perf_counter() - started)


def evaluate_probe(line: TrainingSet, test_features: np.ndarray, test_labels: np.ndarray, *,
                   class_names: tuple[str, ...], folds: int) -> UtilityResult:
    """Fit the linear probe on a line's independent features (C by ``folds``-fold CV on them) and test it."""
    if line.features is None:
        raise ValueError(f"line {line.key!r} has no features for the probe")
    started = time.perf_counter()
    predicted = linear_probe(line.features, line.labels, test_features, folds=folds)
    metrics = classification_metrics(test_labels, predicted, class_names)
    return UtilityResult(key=line.key, model="probe", metrics=metrics, train_size=len(line.labels), epochs=None,
                         steps=None, seconds=time.perf_counter() - started)


def comparisons(accuracy: dict[str, float]) -> dict[str, Any]:
    """The original method's headline comparisons from the accuracy of each line (points = percentage points).

    Returns:
        ``delta_over_fewshot`` (ours − few-shot real), ``gap_to_full`` (full real − ours) and
        ``synthetic_aug_over_fewshot``, each as points and relative to the baseline line; a
        comparison is None when a line is missing.
    """
    def versus(a: str, b: str) -> dict[str, float] | None:
        if a not in accuracy or b not in accuracy:
            return None
        points = 100.0 * (accuracy[a] - accuracy[b])
        relative = 100.0 * (accuracy[a] / accuracy[b] - 1.0) if accuracy[b] > 0 else None
        return {"points": points, "relative_percent": relative}

    return {"delta_over_fewshot": versus("synthetic", "fewshot"),
            "gap_to_full": versus("full", "synthetic"),
            "synthetic_aug_over_fewshot": versus("synthetic_aug", "fewshot")}


@dataclass(frozen=True)
class LineRecipe:
    """What every line is judged with: the test set and both fixed recipes' settings."""

    test_images: np.ndarray
    test_labels: np.ndarray
    test_features: np.ndarray
    class_names: tuple[str, ...]
    epochs: int
    seed: int
    flip: bool
    folds: int


@contextlib.contextmanager
def thread_limit(threads: int) -> Iterator[None]:
    """Torch and BLAS threads limited to ``threads`` inside the block (0: left alone)."""
    # Global switches, so restore them: calling pcevolve must not leave state behind.
    if threads < 1:
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with threadpool_limits(threads, user_api="blas"):
            yield
    finally:
        torch.set_num_threads(previous)


def evaluate_lines(lines: list[TrainingSet], recipe: LineRecipe, *, workers: int = 1,
                   threads: int = 1) -> list[UtilityResult]:
    """The CNN on every line, then the probe on every line that has features; results in that order.

    The models are independent and each is deterministic for its seed, so ``workers`` > 1 trains them in that
    many spawned processes (``threads`` torch/BLAS threads each, 0: their defaults) with the same results as
    one process, and single-threaded workers, one per core, divide the models' time between them (measured in
    docs/performance.md, "The evaluation").
    """
    jobs = [("cnn", line) for line in lines] + [("probe", line) for line in lines if line.features is not None]
    if workers <= 1:
        with thread_limit(threads):
            return [_evaluate_job(kind, line, recipe) for kind, line in jobs]
    # Longest first, so that the last job to start is a short one.
    order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i][1].labels))
    context = multiprocessing.get_context("spawn")  # fork would copy the parent's OpenMP/torch thread state
    results: list[UtilityResult | None] = [None] * len(jobs)
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_limit_threads,
                             initargs=(threads,)) as pool:
        futures = {pool.submit(_evaluate_job, *jobs[i], recipe): i for i in order}
        try:
            for future in as_completed(futures):
                results[futures[future]] = future.result()
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return [result for result in results if result is not None]


def _limit_threads(threads: int) -> None:
    if threads >= 1:
        torch.set_num_threads(threads)
        threadpool_limits(threads, user_api="blas")  # held for the worker's life


def _evaluate_job(kind: str, line: TrainingSet, recipe: LineRecipe) -> UtilityResult:
    if kind == "cnn":
        return evaluate_cnn(line, recipe.test_images, recipe.test_labels, class_names=recipe.class_names,
                            epochs=recipe.epochs, seed=recipe.seed, flip=recipe.flip)
    return evaluate_probe(line, recipe.test_features, recipe.test_labels, class_names=recipe.class_names,
                          folds=recipe.folds)
