"""Table rows → features: a small MLP trained contrastively on the public table (SCARF-style corruption views),
joined with the encoded row itself.

Encoding a row: each numeric column becomes its rank among the *public* values (the public table's quantiles, so
a heavy-tailed income and a 0–5 count weigh alike, and bounds come from public data), each categorical column a
one-hot block. The search features are the MLP's projection and the encoded row (centred on the public mean),
each normalised and joined — as the image encoder joins its projection with the pixels — so retrieval and the DP
class statistics see both what the contrastive model learnt and the columns themselves.

Privacy: everything here is fitted on the public table (free). The private rows are only encoded, inside the
release's mechanism; DP-SGD fine-tuning of this encoder on the private rows is not offered (its config is
refused before any budget is spent).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from safetensors.torch import save as save_safetensors
from torch import nn

from pcevolve.data.table_schema import TableSchema
from pcevolve.io import (
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_npz,
    read_json,
)
from pcevolve.progress import progress_bar

QUANTILES = 101  # public quantile grid per numeric column


def _blocks(schema: TableSchema) -> list[int]:
    return [1 if column.kind == "numeric" else len(column.categories) for column in schema.columns]


class TableEncoder(nn.Module):
    """Rows (``float64`` in schema order, see ``data/table_schema.py``) → search features.

    Args:
        schema: The table's columns.
        hidden: Width of the MLP's hidden layers.
        projection_dim: Size of the contrastive projection.
        seed: Initial weights.
    """

    def __init__(self, schema: TableSchema, *, hidden: int = 256, projection_dim: int = 64, seed: int = 0) -> None:
        super().__init__()
        self.schema = schema
        self.hidden = int(hidden)
        self.projection_dim = int(projection_dim)
        self.input_dim = int(sum(_blocks(schema)))
        generator = torch.Generator().manual_seed(int(seed))
        self.mlp = nn.Sequential(nn.Linear(self.input_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, projection_dim))
        with torch.no_grad():
            for module in self.mlp:
                if isinstance(module, nn.Linear):
                    bound = 1.0 / math.sqrt(module.in_features)
                    module.weight.uniform_(-bound, bound, generator=generator)
                    module.bias.uniform_(-bound, bound, generator=generator)
        numeric = sum(column.kind == "numeric" for column in schema.columns)
        # Public preprocessing (set by fit_public_preprocessing): quantile grids and the public mean of the input.
        self.quantiles = np.tile(np.linspace(0.0, 1.0, QUANTILES), (numeric, 1))
        self.input_mean = np.zeros(self.input_dim, dtype=np.float32)

    @property
    def feature_dim(self) -> int:
        """Size of the search features: the projection plus the encoded row."""
        return self.projection_dim + self.input_dim

    def fit_public_preprocessing(self, public_rows: np.ndarray) -> None:
        """Quantile grids of the numeric columns and the mean encoded row, from the public table only."""
        rows = np.asarray(public_rows, dtype=np.float64)
        numeric = [i for i, column in enumerate(self.schema.columns) if column.kind == "numeric"]
        grid = np.linspace(0.0, 1.0, QUANTILES)
        self.quantiles = np.stack([np.quantile(rows[:, i], grid) for i in numeric]) if numeric else self.quantiles
        self.input_mean = self.encode_rows(rows).mean(axis=0).astype(np.float32)

    def encode_rows(self, rows: np.ndarray) -> np.ndarray:
        """Rows → the MLP's input: public-quantile ranks in [0, 1] for numbers, one-hot blocks for categories."""
        rows = np.asarray(rows, dtype=np.float64)
        if rows.ndim != 2 or rows.shape[1] != len(self.schema.columns):
            raise ValueError(f"expected rows (N, {len(self.schema.columns)}), got {rows.shape}")
        parts, numeric = [], 0
        grid = np.linspace(0.0, 1.0, QUANTILES)
        for i, column in enumerate(self.schema.columns):
            if column.kind == "numeric":
                knots, first, counts = np.unique(self.quantiles[numeric], return_index=True, return_counts=True)
                numeric += 1
                # Tied quantiles (a column that is mostly 0) map to the middle of their rank range.
                ranks = (grid[first] + grid[first + counts - 1]) / 2.0
                parts.append(np.interp(rows[:, i], knots, ranks, left=0.0, right=1.0)[:, None])
            else:
                index = np.clip(np.rint(rows[:, i]).astype(np.int64), 0, len(column.categories) - 1)
                parts.append(np.eye(len(column.categories))[index])
        return np.concatenate(parts, axis=1).astype(np.float32)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """Encoded rows → projection."""
        return self.mlp(inputs)

    def join(self, projected: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        """Search features: normalised projection and normalised centred input, joined (unit length overall)."""
        view = inputs - torch.from_numpy(self.input_mean)
        return torch.cat([F.normalize(projected, dim=1), F.normalize(view, dim=1)], dim=1) / math.sqrt(2.0)

    @torch.no_grad()
    def encode_both(self, samples: np.ndarray, *, batch_size: int = 1024, progress: bool = False,
                    job_size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Rows → (projection, search features) float32, in batches (``job_size`` does not change how: every call
        runs the same way)."""
        inputs = torch.from_numpy(self.encode_rows(samples))
        projected_parts, feature_parts = [], []
        bar = progress_bar(len(inputs), "encoding", unit="row", enabled=progress)
        for start in range(0, len(inputs), batch_size):
            batch = inputs[start:start + batch_size]
            projected = self(batch)
            projected_parts.append(projected.numpy())
            feature_parts.append(self.join(projected, batch).numpy())
            bar.update(len(batch))
        bar.close()
        if not projected_parts:
            return (np.zeros((0, self.projection_dim), np.float32), np.zeros((0, self.feature_dim), np.float32))
        return np.concatenate(projected_parts), np.concatenate(feature_parts)

    def encode(self, samples: np.ndarray) -> np.ndarray:
        return self.encode_both(samples)[1]

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """``encoder.json`` (schema and sizes), ``encoder.safetensors`` (weights), ``preprocessing.npz`` (public)."""
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target / "encoder.safetensors",
                           save_safetensors({k: v.contiguous() for k, v in self.state_dict().items()}))
        atomic_write_npz(target / "preprocessing.npz", quantiles=self.quantiles, input_mean=self.input_mean)
        atomic_write_json(target / "encoder.json", {"kind": "table", "schema": self.schema.to_json(),
                                                    "hidden": self.hidden, "projection_dim": self.projection_dim})
        return target

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> TableEncoder:
        source = Path(folder)
        meta = read_json(source / "encoder.json")
        encoder = cls(TableSchema.from_json(meta["schema"], source=str(source / "encoder.json")),
                      hidden=meta["hidden"], projection_dim=meta["projection_dim"])
        encoder.load_state_dict(load_file(str(source / "encoder.safetensors")), strict=True)
        with np.load(source / "preprocessing.npz", allow_pickle=False) as data:
            encoder.quantiles, encoder.input_mean = data["quantiles"], data["input_mean"]
        return encoder.eval()


def corrupt(inputs: torch.Tensor, donors: torch.Tensor, blocks: list[int], rate: float,
            generator: torch.Generator) -> torch.Tensor:
    """SCARF view: each column (a whole one-hot block at once) is replaced, with probability ``rate``, by the same
    column of a random donor row (public), so a view keeps the marginals and loses some joint structure."""
    rows = len(inputs)
    replace = torch.rand(rows, len(blocks), generator=generator) < rate
    donor = donors[torch.randint(0, len(donors), (rows,), generator=generator)]
    mask = torch.repeat_interleave(replace, torch.tensor(blocks), dim=1)
    return torch.where(mask, donor, inputs)


def nt_xent(first: torch.Tensor, second: torch.Tensor, temperature: float) -> torch.Tensor:
    """Symmetric in-batch InfoNCE between two views (public rows only: in-batch negatives are fine here)."""
    a, b = F.normalize(first, dim=1), F.normalize(second, dim=1)
    logits = a @ b.T / temperature
    targets = torch.arange(len(a))
    return (F.cross_entropy(logits, targets) + F.cross_entropy(logits.T, targets)) / 2


@dataclass(frozen=True)
class TableRepresentationResult:
    """What the table encoder's training did (public only, nothing charged)."""

    public_steps: int
    final_loss: float
    seconds: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"mode": "public", "noise_multiplier": None, "sampling_probability": None, "steps": 0,
                "stage_epsilon": 0.0, "public_steps": self.public_steps, "public_final_loss": self.final_loss}


def train_table_representation(encoder: TableEncoder, private_samples: np.ndarray, public: np.ndarray | None, *,
                               config: Any, augment: Any, ledger: Any, noise: Any, seed: int,
                               progress: bool = False, on_record: Any = None,
                               checkpoint: Path | None = None) -> TableRepresentationResult:
    """Contrastive training of ``encoder`` on the public table (free); the private rows are not read.

    ``config.public_epochs`` passes over the public table in batches of ``config.public_batch_size`` at
    ``config.public_lr`` (Adam); the corruption rate is ``0.2 + 0.4 × augment.strength``.

    Raises:
        ValueError: No public table, or the ledger gives the representation stage a budget (DP fine-tuning of the
            table encoder is not offered; the config check refuses it first).
    """
    del private_samples, noise, checkpoint  # public training only: no private row is read, nothing is drawn
    if ledger.stages.get("representation", 0.0) > 0:
        raise ValueError("the table encoder trains on the public table only; set privacy.split.representation: 0")
    if public is None or len(public) < 2:
        raise ValueError("the table encoder needs a public table of at least two rows")
    started = time.perf_counter()
    encoder.fit_public_preprocessing(public)
    inputs = torch.from_numpy(encoder.encode_rows(public))
    blocks = _blocks(encoder.schema)
    rate = 0.2 + 0.4 * float(augment.strength)
    generator = torch.Generator().manual_seed(int(seed))
    optimiser = torch.optim.Adam(encoder.parameters(), lr=min(config.public_lr, 1e-2))
    batch = max(2, min(config.public_batch_size, len(inputs)))
    steps, loss_value = 0, float("nan")
    encoder.train()
    epochs = max(1, config.public_epochs)
    bar = progress_bar(epochs, "table encoder (public)", unit="epoch", enabled=progress)
    for epoch in range(epochs):
        order = torch.randperm(len(inputs), generator=generator)
        for start in range(0, len(order) - batch + 1, batch):
            rows = inputs[order[start:start + batch]]
            first = encoder(corrupt(rows, inputs, blocks, rate, generator))
            second = encoder(corrupt(rows, inputs, blocks, rate, generator))
            loss = nt_xent(first, second, max(config.temperature, 0.1))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            steps += 1
            loss_value = float(loss.detach())
        if on_record is not None:
            on_record({"kind": "representation_public_epoch", "epoch": epoch, "loss": loss_value})
        bar.update(1)
    bar.close()
    encoder.eval()
    return TableRepresentationResult(public_steps=steps, final_loss=loss_value,
                                     seconds={"public_training": time.perf_counter() - started})
