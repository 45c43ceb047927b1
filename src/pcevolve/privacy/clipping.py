"""Per-sample L2 clipping: the step that makes a sum's sensitivity true. Clip first, then sum, then noise.

After :func:`clip_rows` every row has L2 norm at most ``max_norm`` — exactly, in
floating point: rows that are scaled down get a safety factor of a few units in
the last place, so rounding can never push a norm above the bound. Rows already
within the bound are returned unchanged. Zero rows stay zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pcevolve.privacy.noise import check_positive

if TYPE_CHECKING:
    import torch

_SAFETY_ULPS = 64.0  # far above the rounding error of a norm (pairwise summation)


def clip_rows(x: np.ndarray, max_norm: float) -> np.ndarray:
    """Scale each row of a 2-D array to L2 norm at most ``max_norm`` (float64 result).

    Args:
        x: Shape (n, d); one row per sample.
        max_norm: The bound C.

    Returns:
        A new float64 array, each row ``x_i · min(1, C / ‖x_i‖)`` (slightly less when scaled).

    Raises:
        ValueError: ``x`` is not 2-D or holds non-finite values.
    """
    bound = check_positive("max_norm", max_norm)
    rows = np.asarray(x, dtype=np.float64)
    if rows.ndim != 2:
        raise ValueError(f"expected a 2-D array (samples × features), got shape {rows.shape}")
    if not np.all(np.isfinite(rows)):
        raise ValueError("cannot clip non-finite values (NaN or inf)")
    norms = np.linalg.norm(rows, axis=1)
    shrink = norms > bound
    factors = np.ones_like(norms)
    factors[shrink] = (bound / norms[shrink]) * (1.0 - _SAFETY_ULPS * np.finfo(np.float64).eps)
    return rows * factors[:, None]


def clip_rows_torch(x: "torch.Tensor", max_norm: float) -> "torch.Tensor":
    """Torch version of :func:`clip_rows` for a (n, ...) tensor; each sample is flattened to one vector.

    Keeps dtype and device; differentiable. The safety factor uses the tensor's own precision.
    """
    import torch

    bound = check_positive("max_norm", max_norm)
    if x.ndim < 1 or not torch.is_floating_point(x):
        raise ValueError("expected a floating-point tensor with a leading sample dimension")
    if not bool(torch.isfinite(x).all()):
        raise ValueError("cannot clip non-finite values (NaN or inf)")
    flat = x.reshape(x.shape[0], -1)
    norms = torch.linalg.vector_norm(flat, dim=1)
    safety = 1.0 - _SAFETY_ULPS * torch.finfo(x.dtype).eps
    factors = torch.where(norms > bound, bound * safety / norms.clamp_min(bound), torch.ones_like(norms))
    return (flat * factors[:, None]).reshape(x.shape)
