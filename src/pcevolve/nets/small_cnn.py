"""The small CNN: one fixed recipe for a classifier of small images, used by the run's pixel labeller
(:mod:`pcevolve.search.pool_labels`) and by the evaluation's downstream judge (:mod:`pcevolve.evaluation`).

conv(32)–pool–conv(64)–pool–linear(128)–linear(classes), ReLU, PyTorch's default init bounds drawn from a seeded
generator; Adam (lr 1e-3), batch 32, 15 epochs by default, inputs scaled to [0, 1]. ``augment=True`` adds the
*classic augmentation* of the original method's reference lines: a random shift of up to
``max(1, round(min(H, W) / 12))`` pixels (edge-replicated; 2 px at 28×28) and, if ``flip``, a horizontal flip with
probability ½ — sensible for clothes and objects, not for digits or text, so the caller decides.

Images larger than :data:`MAX_SIDE` pixels on a side are averaged down to it (aspect kept) before the network
sees them, in training and prediction alike (:func:`cnn_input`): the network's cost grows with the area (timed in
docs/performance.md, "Smaller choices"), and a float copy of 20,000 256-pixel RGB images would take ~16 GB.

It lives apart from the evaluation so that nothing a run executes depends on its judges; the recipe was fixed for
the judge first and is not tuned for the labeller. Deterministic for a seed on CPU: :func:`train_cnn` switches
PyTorch to deterministic algorithms while it runs and restores the previous setting afterwards; it does not change
the thread count.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from pcevolve.augment.image import random_flip
from pcevolve.encoders.preprocess import to_float_images

#: Fixed CNN optimiser settings (see the module docstring).
CNN_LEARNING_RATE = 1e-3
CNN_BATCH_SIZE = 32
CNN_EPOCHS = 15
CNN_HIDDEN = 128


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
    return default_init_(model, generator)


def default_init_(model: nn.Sequential, generator: torch.Generator) -> nn.Sequential:
    """Redraw every conv and linear layer's weights and biases, in order, uniform within PyTorch's default bound
    1/√fan-in, from ``generator`` (no global RNG); returns the model."""
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
    shifted = random_shift(images, shift=max_shift(tuple(images.shape[2:])), generator=generator)
    return random_flip(shifted, generator=generator) if flip else shifted


def random_shift(images: torch.Tensor, *, shift: int, generator: torch.Generator) -> torch.Tensor:
    """Each (N, C, H, W) image moved by up to ``shift`` pixels each way, its edges replicated; the vertical offsets
    are drawn first, then the horizontal ones."""
    n, _, h, w = images.shape
    s = shift
    padded = F.pad(images, (s, s, s, s), mode="replicate")
    dy = torch.randint(0, 2 * s + 1, (n,), generator=generator, device=images.device)
    dx = torch.randint(0, 2 * s + 1, (n,), generator=generator, device=images.device)
    rows = (dy[:, None] + torch.arange(h, device=images.device))[:, :, None]  # (N, H, 1)
    cols = (dx[:, None] + torch.arange(w, device=images.device))[:, None, :]  # (N, 1, W)
    batch = torch.arange(n, device=images.device)[:, None, None]
    # Advanced indices around the channel slice put their broadcast shape first: (N, H, W, C).
    return padded[batch, :, rows, cols].permute(0, 3, 1, 2).contiguous()


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


#: The largest image side the network sees (see the module docstring).
MAX_SIDE = 64


def cnn_input(images: np.ndarray, *, max_side: int = MAX_SIDE, chunk: int = 512) -> torch.Tensor:
    """uint8 images (N, H, W[, C]) → the network's float input (N, C, h, w) in [0, 1]: the images themselves when
    neither side exceeds ``max_side``, else area-averaged so that the longer side is ``max_side`` (the aspect ratio
    kept, sides rounded), converted ``chunk`` images at a time so that no full-size float copy of the set is made."""
    height, width = np.shape(images)[1:3]
    if max(height, width) <= max_side or len(images) == 0:
        return to_float_images(images)
    scale = max_side / max(height, width)
    size = (max(1, round(height * scale)), max(1, round(width * scale)))
    parts = [F.interpolate(to_float_images(images[start : start + chunk]), size=size, mode="area")
             for start in range(0, len(images), chunk)]
    return torch.cat(parts)


def check_labels(labels: np.ndarray, count: int, classes: int) -> np.ndarray:
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
        images: uint8 (N, H, W) or (N, H, W, C); larger than :data:`MAX_SIDE` a side, averaged down.
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
    x = cnn_input(images)
    y = torch.as_tensor(check_labels(labels, len(x), classes))
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


def _forward(model: nn.Sequential, images: np.ndarray, batch_size: int, *, layers: slice = slice(None)) -> torch.Tensor:
    """``model[layers]`` applied to uint8 images in batches, in eval mode (the model's mode is restored after)."""
    module = model[layers]
    device = next(model.parameters()).device
    x = cnn_input(images)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            outs = [module(x[start : start + batch_size].to(device)).cpu() for start in range(0, len(x), batch_size)]
    finally:
        model.train(was_training)
    return torch.cat(outs) if outs else torch.empty(0)


def predict(model: nn.Sequential, images: np.ndarray, *, batch_size: int = 1024) -> np.ndarray:
    """Predicted class (int64, (N,)) of each uint8 image, by a model from :func:`train_cnn`."""
    return _forward(model, images, batch_size).argmax(1).numpy().astype(np.int64)


def predict_probabilities(model: nn.Sequential, images: np.ndarray, *, batch_size: int = 1024) -> np.ndarray:
    """Class probabilities (float64, (N, classes)) of each uint8 image, by a model from :func:`train_cnn`."""
    return torch.softmax(_forward(model, images, batch_size).double(), dim=1).numpy()


def cnn_features(model: nn.Sequential, images: np.ndarray, *, batch_size: int = 1024) -> np.ndarray:
    """The 128-D penultimate activations (float32, (N, 128)) of a :func:`train_cnn` model."""
    return _forward(model, images, batch_size, layers=slice(None, -1)).numpy().astype(np.float32)
