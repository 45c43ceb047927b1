"""Pool labels: which task class each image of a retrieval decoder's public pool shows, and how surely.

A retrieval decoder delivers public images under the labels the run gives them, so these labels are the
delivered labels. Two labellers, both post-processing of the DP release and public data (no ε):

* **class-model** — the DP class model (:mod:`pcevolve.search.class_model`): a linear discriminant of the
  released class means in the search basis.
* **pixel-cnn** (images) — co-training with a second view of the same pool. The class model picks, per class,
  the ``per_class`` pool images it is surest of, and the ``outside_share`` of the pool it scores lowest for
  every class (far from all released means: images of kinds outside the task) as one extra class, "outside".
  A small CNN (:mod:`pcevolve.nets.small_cnn`) is trained on those images' *pixels* with their class-model
  labels, then labels the whole pool. The two views err on different images (a linear model of pretrained
  features against a convolutional net that learns shift invariance from the pixels), so their product — each
  a posterior over the task's classes — is surer than either; an image's confidence is that posterior's top
  value times the CNN's probability that it is not "outside". Measured on the demo's data (docs/search.md §4).

Neither labeller reads private data: the class model reads the release, the CNN reads public pixels and labels
that are themselves a function of the release.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pcevolve.io import atomic_write_npz
from pcevolve.search.class_model import ClassModel

#: Pool labellers (``search.pool_labeller``).
LABELLERS: tuple[str, ...] = ("class-model", "pixel-cnn")
#: Passes of the pixel CNN over its training images: more labelled no better, in more time
#: (measured in docs/search.md §4, "Pool labels").
CNN_EPOCHS = 4


def softmax(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax of (N, K) scores."""
    shifted = scores - scores.max(axis=1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=1, keepdims=True)


@dataclass(frozen=True, eq=False)
class PoolLabels:
    """Per pool image: ``posterior`` (N, K), a distribution over the task's classes, and ``confidence`` (N,),
    how surely the image is of its most likely class (higher: surer; comparable across the pool).

    ``labeller`` names who produced them (:data:`LABELLERS`).
    """

    posterior: np.ndarray
    confidence: np.ndarray
    labeller: str

    def __post_init__(self) -> None:
        if self.posterior.ndim != 2 or self.confidence.shape != (len(self.posterior),):
            raise ValueError(f"posterior must be (N, K) and confidence (N,), got {self.posterior.shape} and "
                             f"{self.confidence.shape}")
        if self.labeller not in LABELLERS:
            raise ValueError(f"unknown pool labeller {self.labeller!r}; known: {', '.join(LABELLERS)}")

    @property
    def num_classes(self) -> int:
        return int(self.posterior.shape[1])

    @property
    def predicted(self) -> np.ndarray:
        return np.argmax(self.posterior, axis=1)

    def surest(self, k: int, count: int, eligible: np.ndarray | None = None) -> np.ndarray:
        """Up to ``count`` pool rows assigned to class ``k`` (among the ``eligible`` rows, a boolean mask, if given),
        the surest first (ties in row order)."""
        assigned = self.predicted == k
        rows = np.flatnonzero(assigned if eligible is None else assigned & np.asarray(eligible, dtype=bool))
        return rows[np.argsort(-self.confidence[rows], kind="stable")[:count]]

    def assigned(self) -> list[int]:
        """How many pool images each class is most likely for (public: a function of the release and the pool)."""
        return [int(n) for n in np.bincount(self.predicted, minlength=self.num_classes)]

    @classmethod
    def from_class_model(cls, model: ClassModel, coordinates: np.ndarray) -> PoolLabels:
        """The class model's labels: its discriminant's posterior and its margin-over-distance confidence."""
        _, confidence = model.confidence(coordinates)
        return cls(posterior=softmax(model.scores(coordinates)), confidence=confidence, labeller="class-model")

    def save(self, path: str | os.PathLike[str]) -> Path:
        return atomic_write_npz(path, posterior=self.posterior, confidence=self.confidence,
                                labeller=np.array(self.labeller))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> PoolLabels:
        with np.load(path, allow_pickle=False) as arrays:
            return cls(posterior=arrays["posterior"], confidence=arrays["confidence"],
                       labeller=str(arrays["labeller"]))


def seed_set(first: PoolLabels, model_scores: np.ndarray, *, per_class: np.ndarray,
             outside_share: float) -> tuple[np.ndarray, np.ndarray]:
    """The pixel CNN's training images (pool rows) and labels: for class k the ``per_class[k]`` rows ``first``
    assigns to k most surely, and label K ("outside") for the ``outside_share`` of the pool with the lowest best
    score among ``model_scores`` (N, K), those not already taken."""
    per_class = np.asarray(per_class, dtype=np.int64)
    if per_class.shape != (first.num_classes,) or np.any(per_class < 1) or not 0.0 <= outside_share < 1.0:
        raise ValueError(f"need {first.num_classes} positive per-class counts and outside_share in [0, 1), got "
                         f"{per_class} and {outside_share}")
    k_classes = first.num_classes
    rows = [first.surest(k, per_class[k]) for k in range(k_classes)]
    labels = [np.full(len(members), k) for k, members in enumerate(rows)]
    taken = np.concatenate(rows)
    lowest = np.argsort(np.max(model_scores, axis=1), kind="stable")[: int(outside_share * len(model_scores))]
    outside = np.setdiff1d(lowest, taken)
    return np.concatenate([taken, outside]), np.concatenate([*labels, np.full(len(outside), k_classes)])


def co_trained(images: np.ndarray, first: PoolLabels, model_scores: np.ndarray, *, per_class: np.ndarray,
               outside_share: float, seed: int, flip: bool, epochs: int = CNN_EPOCHS) -> PoolLabels:
    """The pixel-cnn labels of a pool of uint8 images (N, H, W[, C]) from the class model's labels ``first``
    and scores (see the module docstring). Deterministic for ``seed`` on a CPU."""
    # Imported here: torch is needed only by this labeller.
    from pcevolve.nets.small_cnn import predict_probabilities, train_cnn

    if len(images) != len(first.posterior):
        raise ValueError(f"{len(images)} images but {len(first.posterior)} labels")
    rows, labels = seed_set(first, model_scores, per_class=per_class, outside_share=outside_share)
    k_classes = first.num_classes
    has_outside = bool(np.any(labels == k_classes))
    network = train_cnn(images[rows], labels, classes=k_classes + int(has_outside), seed=seed, epochs=epochs,
                        augment=True, flip=flip)
    probabilities = predict_probabilities(network, images)
    inside = 1.0 - probabilities[:, k_classes] if has_outside else np.ones(len(images))
    joint = probabilities[:, :k_classes] * first.posterior
    posterior = joint / np.maximum(joint.sum(axis=1, keepdims=True), 1e-300)
    return PoolLabels(posterior=posterior, confidence=posterior.max(axis=1) * inside, labeller="pixel-cnn")
