"""Exact per-sample gradient norms without materialising per-sample gradients ("ghost clipping").

DP-SGD needs, for every private sample i, the L2 norm of its whole gradient G_i (all
views, all trainable parameters) to clip it. Materialising G_i for a 3.5M-parameter
head costs gigabytes per step on a CPU. Instead, with the input activations a and
output gradients g of each trainable layer (rows t = view × position of sample i):

* linear / pointwise (1×1) convolution: G_i = Σ_t g_t a_tᵀ, so
  ‖G_i‖² = Σ_{t,t'} (g_t·g_t')(a_t·a_t')  — only Gram matrices of size T×T;
  a bias adds ‖Σ_t g_t‖²;
* depthwise convolution: its per-sample gradient is small (channels × k²), so it is
  materialised from unfolded patches.

The squared norms of all layers add up to ‖G_i‖². A second backward pass of
Σ_i c_i·L_i, with c_i = min(1, C/‖G_i‖), then yields the clipped sum Σ_i c_i·G_i
exactly. Tests compare both against one-sample-at-a-time autograd.

Rows are ordered view-major: row v·B + i is view v of sample i.
Layers this module cannot handle raise ``NotImplementedError`` rather than being skipped,
since a skipped layer would under-count the norm and break the privacy guarantee.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn


def _trainable_layers(model: nn.Module) -> list[nn.Module]:
    layers = [m for m in model.modules() if any(p.requires_grad for p in m.parameters(recurse=False))]
    for layer in layers:
        if not isinstance(layer, (nn.Linear, nn.Conv2d)):
            raise NotImplementedError(f"no per-sample norm rule for trainable layer {type(layer).__name__}")
    return layers


def _by_sample(x: torch.Tensor, views: int) -> torch.Tensor:
    """(V·B, ...) rows → (B, V, ...)."""
    return x.reshape(views, -1, *x.shape[1:]).transpose(0, 1)


def _rows_of_each_sample(x: torch.Tensor, views: int) -> torch.Tensor:
    """(V·B, ..., width) → (B, T, width): every row vector that belongs to one sample, T = V × positions."""
    return _by_sample(x, views).reshape(x.shape[0] // views, -1, x.shape[-1])


def _gram_norms(a: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """Σ_{t,t'} (a_t·a_t')(g_t·g_t') per sample for a (B, T, in), g (B, T, out)."""
    return ((a @ a.transpose(1, 2)) * (g @ g.transpose(1, 2))).sum(dim=(1, 2))


def _linear_sq_norms(layer: nn.Linear, a: torch.Tensor, g: torch.Tensor, views: int) -> torch.Tensor:
    a_s = _rows_of_each_sample(a, views)
    g_s = _rows_of_each_sample(g, views)
    norms = _gram_norms(a_s, g_s) if layer.weight.requires_grad else torch.zeros(len(a_s))
    if layer.bias is not None and layer.bias.requires_grad:
        norms = norms + g_s.sum(dim=1).pow(2).sum(dim=1)
    return norms


def _conv_input(layer: nn.Conv2d, a: torch.Tensor) -> torch.Tensor:
    padding = getattr(layer, "static_padding", None)  # EfficientNet's Conv2dStaticSamePadding pads in forward
    return padding(a) if padding is not None else a


def _conv_sq_norms(layer: nn.Conv2d, a: torch.Tensor, g: torch.Tensor, views: int) -> torch.Tensor:
    if layer.bias is not None and layer.bias.requires_grad:
        raise NotImplementedError("per-sample norms of convolution biases are not implemented")
    if not layer.weight.requires_grad:
        return torch.zeros(a.shape[0] // views)
    kernel = tuple(layer.kernel_size)
    stride = tuple(layer.stride)
    if kernel == (1, 1) and stride == (1, 1) and layer.groups == 1 and tuple(layer.padding) == (0, 0):
        # Pointwise: a linear map applied at every position; positions join the views as rows.
        # Channels last: (V·B, H, W, C) → rows of each sample.
        return _gram_norms(_rows_of_each_sample(a.permute(0, 2, 3, 1), views),
                           _rows_of_each_sample(g.permute(0, 2, 3, 1), views))
    if layer.groups == layer.in_channels == layer.out_channels:
        # Depthwise: per-sample gradient has C·k² entries; materialise it from unfolded patches.
        x = _conv_input(layer, a)
        patches = F.unfold(x, kernel, dilation=tuple(layer.dilation), padding=tuple(layer.padding), stride=stride)
        rows, channels = a.shape[0], a.shape[1]
        patches = patches.reshape(rows, channels, kernel[0] * kernel[1], -1)  # (R, C, k², L)
        grads = torch.einsum("rckl,rcl->rck", patches, g.reshape(rows, channels, -1))
        per_sample = _by_sample(grads, views).sum(dim=1)
        return per_sample.pow(2).sum(dim=(1, 2))
    raise NotImplementedError(f"no per-sample norm rule for convolution {layer}")


class GhostNorms:
    """Records each trainable layer's input and output during a forward pass.

    Use :meth:`recording` around the forward pass, then :meth:`squared_norms` with the
    summed loss to get ‖G_i‖² for every sample.
    """

    def __init__(self, model: nn.Module) -> None:
        self.layers = _trainable_layers(model)
        self._inputs: dict[nn.Module, torch.Tensor] = {}
        self._outputs: dict[nn.Module, torch.Tensor] = {}

    @contextmanager
    def recording(self) -> Iterator[None]:
        def hook(module: nn.Module, inputs: tuple[torch.Tensor, ...], output: torch.Tensor) -> None:
            self._inputs[module] = inputs[0].detach()
            self._outputs[module] = output

        handles = [layer.register_forward_hook(hook) for layer in self.layers]
        try:
            yield
        finally:
            for handle in handles:
                handle.remove()

    def squared_norms(self, loss: torch.Tensor, *, views: int) -> torch.Tensor:
        """‖G_i‖² per sample from the recorded pass; keeps the graph for a second backward."""
        if len(self._outputs) != len(self.layers):
            raise RuntimeError("call squared_norms after a forward pass inside recording()")
        outputs = [self._outputs[layer] for layer in self.layers]
        grads = torch.autograd.grad(loss, outputs, retain_graph=True)
        total = None
        for layer, g in zip(self.layers, grads):
            a = self._inputs[layer]
            if isinstance(layer, nn.Linear):
                part = _linear_sq_norms(layer, a, g.detach(), views)
            else:
                part = _conv_sq_norms(layer, a, g.detach(), views)
            total = part if total is None else total + part
        self._inputs.clear()
        self._outputs.clear()
        assert total is not None
        return total
