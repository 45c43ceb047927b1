"""Table generator (registry key ``"table-mlp"``): a feature vector → a new table row, column by column.

An MLP from the search features to one head per column: a sigmoid rank for each numeric column (turned into a
value through the public table's quantiles, so it stays inside the public bounds and follows the public
distribution's shape; whole-number columns are rounded) and softmax logits for each categorical column (the most
likely category). Trained on the public table only: the encoder's features of public rows → those rows (mean
squared rank error plus cross-entropy per category). Unlike retrieval it can make rows the public table does not
hold; its round trip (decode, re-encode) is learnt by the search's surrogate, as for the image generator.

Privacy: reads the public table and the public-fitted encoder only (free). It is not offered for DP-SGD training
on the private rows (its config is refused before any budget is spent).
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from pcevolve.config import DecoderConfig
from pcevolve.data.table_schema import TableSchema
from pcevolve.decoders.base import (
    DecoderTrainingResult,
    decoder_from_meta,
    load_weights,
    save_weights,
    write_decoder_meta,
)
from pcevolve.decoders.round_trips import LearnedRoundTrip
from pcevolve.io import (
    atomic_write_json,
    atomic_write_npz,
    read_json,
)

if TYPE_CHECKING:
    from pcevolve.encoders.table import TableEncoder
    from pcevolve.executors import Executor

_PUBLIC = "public_quantiles.npz"
_SCHEMA = "schema.json"


class _Heads(nn.Module):
    def __init__(self, feature_dim: int, hidden: int, numeric: int, categories: list[int], seed: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(feature_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.numeric = nn.Linear(hidden, max(numeric, 1))
        self.categorical = nn.Linear(hidden, max(sum(categories), 1))
        generator = torch.Generator().manual_seed(int(seed))  # its own stream: the global RNG is left alone
        with torch.no_grad():
            for layer in (*self.body, self.numeric, self.categorical):
                if isinstance(layer, nn.Linear):
                    bound = 1.0 / math.sqrt(layer.in_features)
                    layer.weight.uniform_(-bound, bound, generator=generator)
                    layer.bias.uniform_(-bound, bound, generator=generator)

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.body(features)
        return torch.sigmoid(self.numeric(hidden)), self.categorical(hidden)


class TableGeneratorDecoder(LearnedRoundTrip):
    """Features → rows (``float64`` in schema order: numeric values, category indices).

    Args:
        config: ``epochs``, ``batch_size``, ``learning_rate``, ``public_images`` (rows trained on, a seeded
            subset) and ``width`` (hidden width = 8 × width).
        feature_dim: Size of the encoder's search features.
        sample_shape: ``(columns,)``.
        seed: Initial weights and the training order.
    """

    name: ClassVar[str] = "table-mlp"
    modalities: ClassVar[tuple[str, ...]] = ("tabular",)
    trainable_under_dp: ClassVar[bool] = False

    def __init__(self, config: DecoderConfig, *, feature_dim: int, sample_shape: tuple[int, ...], seed: int) -> None:
        if len(sample_shape) != 1:
            raise ValueError(f"the table generator makes rows, shape (columns,); got {sample_shape}")
        self.config = config
        self.feature_dim = int(feature_dim)
        self.sample_shape = (int(sample_shape[0]),)
        self.seed = seed
        self.schema: TableSchema | None = None
        self.quantiles = np.zeros((0, 0))
        self.network: _Heads | None = None

    def _build(self, schema: TableSchema, quantiles: np.ndarray) -> None:
        if len(schema.columns) != self.sample_shape[0]:
            raise ValueError(f"the schema has {len(schema.columns)} columns, the decoder makes {self.sample_shape[0]}")
        self.schema, self.quantiles = schema, np.asarray(quantiles, dtype=np.float64)
        self.network = _Heads(self.feature_dim, 8 * self.config.width, len(self._numeric), self._categories,
                              self.seed).eval()

    @property
    def _numeric(self) -> list[int]:
        assert self.schema is not None
        return [i for i, column in enumerate(self.schema.columns) if column.kind == "numeric"]

    @property
    def _categories(self) -> list[int]:
        assert self.schema is not None
        return [len(column.categories) for column in self.schema.columns if column.kind == "categorical"]

    def fit(self, public_samples: np.ndarray, *, encoder: TableEncoder, seed: int, progress: bool = False,
            executor: Executor | None = None) -> DecoderTrainingResult:
        """Train on (a seeded subset of) the public rows: free, nothing is charged."""
        rows = np.asarray(public_samples, dtype=np.float64)
        if rows.ndim != 2 or rows.shape[1:] != self.sample_shape or len(rows) == 0:
            raise ValueError(f"expected public rows (N, {self.sample_shape[0]}), got {rows.shape}")
        if encoder.feature_dim != self.feature_dim:
            raise ValueError(f"encoder gives {encoder.feature_dim}-d features, decoder expects {self.feature_dim}")
        started = time.perf_counter()
        rng = np.random.default_rng(seed)
        if len(rows) > self.config.public_images:
            rows = rows[np.sort(rng.choice(len(rows), self.config.public_images, replace=False))]
        self._build(encoder.schema, encoder.quantiles)
        assert self.network is not None
        features = torch.from_numpy(encoder.encode(rows))
        inputs = encoder.encode_rows(rows)
        numeric_at = self._input_positions(encoder)
        ranks = torch.from_numpy(inputs[:, numeric_at]) if numeric_at else torch.zeros(len(rows), 1)
        indices = torch.from_numpy(np.rint(rows[:, [i for i in range(rows.shape[1]) if i not in self._numeric]])
                                   .astype(np.int64)) if self._categories else None
        featured = time.perf_counter()
        optimiser = torch.optim.Adam(self.network.parameters(), lr=self.config.learning_rate)
        generator = torch.Generator().manual_seed(int(seed))
        batch = max(2, min(self.config.batch_size * 4, len(rows)))
        self.network.train()
        steps, loss_value = 0, float("nan")
        for _ in range(self.config.epochs * 4):  # rows are cheap: four passes per configured epoch
            order = torch.randperm(len(rows), generator=generator)
            for start in range(0, len(order), batch):
                chosen = order[start:start + batch]
                predicted_ranks, logits = self.network(features[chosen])
                loss = F.mse_loss(predicted_ranks[:, :ranks.shape[1]], ranks[chosen]) if numeric_at else 0.0
                if indices is not None:
                    loss = loss + self._category_loss(logits, indices[chosen])
                optimiser.zero_grad()
                loss.backward()  # type: ignore[union-attr]
                optimiser.step()
                steps += 1
                loss_value = float(loss.detach())  # type: ignore[union-attr]
        self.network.eval()
        # How well decoding lands where it was asked: mean cosine between public features and the re-encoded rows.
        check = features[:512].numpy()
        again = encoder.encode(self.decode(check))
        consistency = float(np.mean(np.sum(check * again, axis=1)
                                    / np.maximum(np.linalg.norm(check, axis=1) * np.linalg.norm(again, axis=1),
                                                 1e-12)))
        return DecoderTrainingResult(steps=steps, images=len(rows),
                                     seconds={"features": featured - started,
                                              "training": time.perf_counter() - featured},
                                     final_consistency=consistency, final_reconstruction=loss_value)

    def _input_positions(self, encoder: TableEncoder) -> list[int]:
        """Where each numeric column's rank sits in the encoder's input vector (one-hot blocks between them)."""
        positions, at = [], 0
        for column in encoder.schema.columns:
            if column.kind == "numeric":
                positions.append(at)
                at += 1
            else:
                at += len(column.categories)
        return positions

    def _category_loss(self, logits: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
        loss, at = logits.new_zeros(()), 0
        for block, size in enumerate(self._categories):
            loss = loss + F.cross_entropy(logits[:, at:at + size], indices[:, block])
            at += size
        return loss / max(len(self._categories), 1)

    @torch.no_grad()
    def decode(self, features: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
        """Features (N, feature_dim) → rows (N, columns); ``labels`` are accepted for the interface and ignored."""
        if self.network is None or self.schema is None:
            raise ValueError("the table generator is not trained: call fit() or load() first")
        feats = torch.as_tensor(np.asarray(features, dtype=np.float32))
        if feats.ndim != 2 or feats.shape[1] != self.feature_dim:
            raise ValueError(f"expected features (N, {self.feature_dim}), got {tuple(feats.shape)}")
        if labels is not None and len(labels) != len(feats):
            raise ValueError(f"{len(labels)} labels for {len(feats)} features")
        ranks, logits = self.network(feats)
        ranks, logits = ranks.numpy().astype(np.float64), logits.numpy()
        rows = np.zeros((len(feats), len(self.schema.columns)), dtype=np.float64)
        grid = np.linspace(0.0, 1.0, self.quantiles.shape[1]) if self.quantiles.size else np.zeros(0)
        numeric, at = 0, 0
        for i, column in enumerate(self.schema.columns):
            if column.kind == "numeric":
                value = np.interp(ranks[:, numeric], grid, self.quantiles[numeric])
                rows[:, i] = np.clip(np.rint(value) if column.integer else value, column.low, column.high)
                numeric += 1
            else:
                size = len(column.categories)
                rows[:, i] = np.argmax(logits[:, at:at + size], axis=1)
                at += size
        return rows

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """``decoder.safetensors``, ``public_quantiles.npz``, ``schema.json`` and ``decoder.json`` (atomically)."""
        if self.network is None or self.schema is None:
            raise ValueError("the table generator is not trained: nothing to save")
        target = Path(folder)
        save_weights(target, self.network)
        atomic_write_npz(target / _PUBLIC, quantiles=self.quantiles)
        atomic_write_json(target / _SCHEMA, self.schema.to_json())
        write_decoder_meta(target, self)
        return target

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> TableGeneratorDecoder:
        source = Path(folder)
        decoder = decoder_from_meta(cls, source)
        with np.load(source / _PUBLIC, allow_pickle=False) as data:
            quantiles = data["quantiles"]
        decoder._build(TableSchema.from_json(read_json(source / _SCHEMA), source=str(source / _SCHEMA)), quantiles)
        assert decoder.network is not None
        load_weights(decoder.network, source)
        return decoder

