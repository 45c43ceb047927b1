"""What only a benchmark may read: the source labels of a demo run's images, which no stage of a run sees.

The demo folders are named "<source label>_<name>", and every image of a retrieval run's pool is an image of the
source benchmark's training set, so its true class is found by its pixels.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def task_labels(class_names: tuple[str, ...] | list[str]) -> np.ndarray:
    """The source label of each task class, from its folder name "<source label>_<name>"."""
    return np.array([int(name.split("_", 1)[0]) for name in class_names])


def pool_truth(run: Path, train, task: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The run's pool images, their task labels (-1: outside the task) and their source labels, from the source's
    training set ``train`` (a LabeledDataset). Stops when a pool image is not in it."""
    pool = np.load(run / "decoder" / "pool.npz")["samples"]
    lookup = {image.tobytes(): int(label) for image, label in zip(train.samples, train.labels)}
    source_labels = np.array([lookup.get(image.tobytes(), -2) for image in pool])
    if np.any(source_labels == -2):
        raise SystemExit(f"{run}: {np.sum(source_labels == -2)} pool images are not in the source's training set")
    in_task = np.isin(source_labels, task)
    return pool, np.where(in_task, np.searchsorted(task, source_labels), -1), source_labels
