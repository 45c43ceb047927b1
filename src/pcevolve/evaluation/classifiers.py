"""Downstream utility models: train on one set (synthetic, or few-shot real), test on real.

Two fixed recipes, chosen in advance and never tuned on a test set:

* :func:`train_cnn` — a small CNN on the images themselves: conv(32)–pool–conv(64)–pool–
  linear(128)–linear(classes), ReLU, PyTorch's default init bounds drawn from a seeded
  generator; Adam (lr 1e-3), batch 32, 15 epochs by default, inputs scaled to [0, 1]. This is
  the recipe of ``bench/decoder.py`` plus a 128-unit hidden layer, whose output
  (:func:`cnn_features`) is a compact feature space for judging independently of the
  search's encoder. ``augment=True`` adds the *classic augmentation* of the original method's
  reference lines: a random shift of up to ``max(1, round(min(H, W) / 12))`` pixels
  (edge-replicated; 2 px at 28×28) and, if ``flip``, a horizontal flip with probability ½ —
  sensible for clothes and objects, not for digits or text, so the caller decides.
* :func:`linear_probe` — multinomial logistic regression (L2, lbfgs) on standardised
  features; the inverse regularisation C is picked from :data:`PROBE_CS` by stratified
  k-fold accuracy on the training set only.

Both are deterministic for a seed on CPU. :func:`train_cnn` switches PyTorch to deterministic
algorithms while it runs and restores the previous setting afterwards; it does not change the
thread count.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler
from torch import nn

from pcevolve.augment.image import random_flip
from pcevolve.encoders.preprocess import to_float_images

#: Fixed CNN optimiser settings (see the module docstring).
CNN_LEARNING_RATE = 1e-3
CNN_BATCH_SIZE = 32
CNN_EPOCHS = 15
CNN_HIDDEN = 128
#: Linear-probe grid of inverse L2 strengths and the most cross-validation folds.
PROBE_CS: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0)
PROBE_FOLDS = 5
PROBE_MAX_ITER = 2000


def small_cnn(classes: int, *, channels: int, size: tuple[int, int], generator: torch.Generator) -> nn.Sequential:
    """The fixed downstream CNN, weights drawn from ``generator`` (no global RNG).

    Args:
        classes: Output logits.
        channels: Input channels (1 grey, 3 RGB).
        size: Input (H, W); both at least 4 (two 2× poolings).
        generator: CPU generator for the initial weights.

    Returns:
        An ``nn.Sequential`` whose last layer is the classifier; ``model[:-1]`` gives the
        128-D penultimate features.
    """
    if min(size) < 4:
        raise ValueError(f"images must be at least 4×4 for the CNN, got {size}")
    model = nn.Sequential(
        nn.Conv2d(channels, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * (size[0] // 4) * (size[1] // 4), CNN_HIDDEN), nn.ReLU(),
        nn.Linear(CNN_HIDDEN, classes),
    )
    with torch.no_grad():
        for layer in model:
            if isinstance(layer, (nn.Conv2d, nn.Linear)):
                bound = 1.0 / layer.weight[0].numel() ** 0.5
                layer.weight.uniform_(-bound, bound, generator=generator)
                layer.bias.uniform_(-bound, bound, generator=generator)
    return model


def max_shift(size: tuple[int, int]) -> int:
    """Largest shift of the classic augmentation, in pixels, for images of this (H, W)."""
    return max(1, round(min(size) / 12))


def classic_augmentation(images: torch.Tensor, *, generator: torch.Generator, flip: bool) -> torch.Tensor:
    """Random shift (edge-replicated, up to :func:`max_shift` px each way) then an optional random flip.

    Args:
        images: (N, C, H, W) floats.
        generator: Source of every draw (on the images' device).
        flip: Also flip left-right with probability ½.
    """
    n, _, h, w = images.shape
    s = max_shift((h, w))
    padded = F.pad(images, (s, s, s, s), mode="replicate")
    dy = torch.randint(0, 2 * s + 1, (n,), generator=generator, device=images.device)
    dx = torch.randint(0, 2 * s + 1, (n,), generator=generator, device=images.device)
    rows = (dy[:, None] + torch.arange(h, device=images.device))[:, :, None]  # (N, H, 1)
    cols = (dx[:, None] + torch.arange(w, device=images.device))[:, None, :]  # (N, 1, W)
    batch = torch.arange(n, device=images.device)[:, None, None]
    # Advanced indices around the channel slice put their broadcast shape first: (N, H, W, C).
    shifted = padded[batch, :, rows, cols].permute(0, 3, 1, 2).contiguous()
    return random_flip(shifted, generator=generator) if flip else shifted


@contextlib.contextmanager
def _deterministic() -> Iterator[None]:
    # Global switch, so restore it: importing or calling pcevolve must not leave state behind.
    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)


def _check_labels(labels: np.ndarray, count: int, classes: int) -> np.ndarray:
    y = np.asarray(labels)
    if y.shape != (count,) or not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"expected {count} integer labels, got shape {y.shape} dtype {y.dtype}")
    if count and (y.min() < 0 or y.max() >= classes):
        raise ValueError(f"labels must be in [0, {classes}), got [{y.min()}, {y.max()}]")
    return y.astype(np.int64)


def train_cnn(images: np.ndarray, labels: np.ndarray, *, classes: int, seed: int, epochs: int = CNN_EPOCHS,
              augment: bool = False, flip: bool = True, device: str | torch.device = "cpu") -> nn.Sequential:
    """Train the fixed small CNN on uint8 images.

    Args:
        images: uint8 (N, H, W) or (N, H, W, C).
        labels: (N,) integers in ``[0, classes)``.
        classes: Number of classes.
        seed: Seeds the initial weights, the batch order and the augmentation draws.
        epochs: Passes over the data.
        augment: Apply :func:`classic_augmentation` to every batch.
        flip: With ``augment``, include the horizontal flip.
        device: Where to train; data, shuffling and augmentation stay on the CPU, batches move.

    Returns:
        The trained model, in eval mode, on ``device``.
    """
    x = to_float_images(images)
    y = torch.as_tensor(_check_labels(labels, len(x), classes))
    if len(x) == 0 or epochs < 1:
        raise ValueError(f"need at least one image and one epoch, got {len(x)} and {epochs}")
    generator = torch.Generator().manual_seed(seed)
    with _deterministic():
        model = small_cnn(classes, channels=x.shape[1], size=tuple(x.shape[2:]), generator=generator).to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=CNN_LEARNING_RATE)
        model.train()
        for _ in range(epochs):
            order = torch.randperm(len(x), generator=generator)
            for start in range(0, len(x), CNN_BATCH_SIZE):
                rows = order[start : start + CNN_BATCH_SIZE]
                batch = classic_augmentation(x[rows], generator=generator, flip=flip) if augment else x[rows]
                loss = F.cross_entropy(model(batch.to(device)), y[rows].to(device))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    return model.eval()


def _forward(module: nn.Module, images: np.ndarray, batch_size: int) -> torch.Tensor:
    device = next(module.parameters()).device
    x = to_float_images(images)
    with torch.no_grad():
        outs = [module(x[start : start + batch_size].to(device)).cpu() for start in range(0, len(x), batch_size)]
    return torch.cat(outs) if outs else torch.empty(0)


def predict(model: nn.Sequential, images: np.ndarray, *, batch_size: int = 1024) -> np.ndarray:
    """Predicted class (int64, (N,)) of each uint8 image, by a model from :func:`train_cnn`."""
    was_training = model.training
    model.eval()
    try:
        return _forward(model, images, batch_size).argmax(1).numpy().astype(np.int64)
    finally:
        model.train(was_training)


def predict_probabilities(model: nn.Sequential, images: np.ndarray, *, batch_size: int = 1024) -> np.ndarray:
    """Class probabilities (float64, (N, classes)) of each uint8 image, by a model from :func:`train_cnn`."""
    was_training = model.training
    model.eval()
    try:
        return torch.softmax(_forward(model, images, batch_size).double(), dim=1).numpy()
    finally:
        model.train(was_training)


def cnn_features(model: nn.Sequential, images: np.ndarray, *, batch_size: int = 1024) -> np.ndarray:
    """The 128-D penultimate activations (float32, (N, 128)) of a :func:`train_cnn` model."""
    was_training = model.training
    model.eval()
    try:
        return _forward(model[:-1], images, batch_size).numpy().astype(np.float32)
    finally:
        model.train(was_training)


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
    t = _check_labels(y_true, len(np.asarray(y_true)), k)
    p = _check_labels(y_pred, len(t), k)
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
