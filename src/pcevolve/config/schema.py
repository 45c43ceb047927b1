"""The run configuration schema. Every default is the original method's value unless a comment says why not.

All models are frozen and forbid unknown keys, so a typo in a YAML file is an
error that names the key instead of a silently ignored setting.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from pcevolve.catalog.modalities import MODALITY_TRAITS
from pcevolve.config.base import Frozen
from pcevolve.config.search import SearchConfig
from pcevolve.config.synthesis import SynthesisConfig


#: A declared class as YAML gives it: text, a whole number, or (texts only) true/false.
ClassLabel = str | int | bool

# YAML 1.1 (PyYAML) reads these unquoted words as booleans, so a class list [yes, no] arrives as [True, False].
_YAML_BOOLEANS = "YAML reads unquoted yes/no/on/off/true/false as booleans"


def _label_text(value: ClassLabel) -> str:
    """A class's text form: how a CSV cell, a folder name and a report spell it. The same rule as
    :func:`pcevolve.data.dataset.label_text` (the config does not import the data readers)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _label_kind(value: ClassLabel) -> str:
    return "booleans" if isinstance(value, bool) else "numbers" if isinstance(value, int) else "text"


def class_names_from(value: object, *, typed: bool = False) -> tuple[ClassLabel, ...]:
    """Declared class names (``data.classes``), or ``ValueError`` saying what is wrong with them.

    Untyped (images, tables: a class is a folder name or a CSV cell, both text): numbers are read as their text;
    booleans and floats are refused, since YAML reads ``yes`` and ``1.0`` so while the data holds the text.

    Typed (texts: a JSON Lines label has a JSON type, which the delivered file keeps): text, whole numbers and
    booleans keep their YAML type, so ``0`` declares the number 0 and ``"0"`` the text "0". They must share one
    type, as every label of one JSON Lines file must. Floats are refused (1.0 and 1 are the same JSON number, and
    a fraction's digits do not survive every writer): a label is text, a whole number or true/false.

    In both, text is stripped and the text forms (``0`` and ``"0"`` are both "0") must be unique, two or more.
    """
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ValueError("a list of class names, e.g. [bad, good]")
    names: list[ClassLabel] = []
    for name in value:
        if isinstance(name, bool) and not typed:
            raise ValueError(f"class name {name!r} is not text ({_YAML_BOOLEANS}); quote it "
                             f"(\"{_label_text(name)}\"): a column of booleans is read as false/true, and a "
                             "DataFrame's "
                             "comes back as booleans")
        if not isinstance(name, (str, int)):
            raise ValueError(f"class name {name!r} is not text or a whole number; quote it in the YAML file "
                             f"(\"{name}\")")
        text = _label_text(name).strip()
        if not text:
            raise ValueError("a class name is empty")
        names.append(text if isinstance(name, str) or not typed else name)
    texts = [_label_text(name) for name in names]
    repeated = sorted({text for text in texts if texts.count(text) > 1})
    if repeated:
        raise ValueError(f"class names must be unique; repeated: {repeated}")
    if len(names) < 2:
        raise ValueError(f"a labelled synthetic set needs at least two classes, got {names}")
    kinds = sorted({_label_kind(name) for name in names})
    if len(kinds) > 1:
        hint = f" ({_YAML_BOOLEANS})" if "booleans" in kinds else ""
        raise ValueError(f"the classes {names} mix {' and '.join(kinds)}{hint}; every label of a JSON Lines file "
                         "has one type, so the classes must too: quote every class (\"0\") for text labels, or none "
                         "for number labels")
    return tuple(names)


class DataConfig(Frozen):
    """Where the data lives, what kind of samples it holds, and how images are normalised on reading."""

    # The kind of samples (pcevolve.modalities): image folders, a CSV table, or texts (JSONL / CSV).
    modality: str = "image"
    private: str = "data/demo/private"
    public: str | None = "data/demo/public"
    test: str | None = "data/demo/test"
    full: str | None = "data/demo/full"
    image_size: int = Field(28, ge=8, le=1024, description="Images are resized to this square size.")
    image_mode: Literal["L", "RGB"] = "L"
    # Tables (modality: tabular; private, public and test are CSV files): the private table's label column, and
    # the schema (column types, numeric bounds, category sets) as a YAML file — or, when null, drafted from the
    # public table. Never from the private rows: the schema shapes every file the run ships.
    label_column: str = Field("label", min_length=1)
    schema_file: str | None = None
    # Texts (modality: text; JSONL or CSV files): the field holding the text (the label is label_column's), and
    # the one holding it in the public pool when that differs (null: the same field, text_column).
    text_column: str = Field("text", min_length=1)
    public_text_column: str | None = Field(None, min_length=1)
    # The task's classes, in label order: the user's declaration, never learnt from the private data (one record
    # more or less must not change K, the files shipped, or whether a run proceeds). The private data is read
    # against it: a class with no or one private sample is accepted (its statistics are mostly noise), a label
    # outside it is an error naming the row. Required for tables and texts (`pcevolve init` proposes the label
    # values it finds, for the user to confirm); for images, null means one class per folder of data.private,
    # the folders being the declaration. For texts each class keeps its YAML type, which the delivered JSON Lines
    # file writes and the private file's labels must have (0 a number, "0" text, true a boolean); for images and
    # tables a class is text (0 reads as "0").
    classes: tuple[ClassLabel, ...] | None = None

    @field_validator("classes", mode="before")
    @classmethod
    def _class_names(cls, value: object, info: ValidationInfo) -> object:
        # modality is declared before classes, so it has been validated by now (absent only when it is invalid)
        traits = MODALITY_TRAITS.get(info.data.get("modality", ""))
        return None if value is None else class_names_from(value, typed=traits is not None and traits.typed_classes)

    @field_validator("label_column", "text_column", "public_text_column", mode="before")
    @classmethod
    def _column_name(cls, value: object) -> object:
        # A DataFrame's column may be named by a whole number; a file's header names it by its text.
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class AugmentConfig(Frozen):
    """Augmentation for positive pairs. ``strength`` scales every transform."""

    strength: float = Field(0.5, ge=0.0, le=1.0)
    crop: bool = True
    flip: bool = True
    color_jitter: bool = True
    blur: bool = True
    # Texts (word-level, each a probability per word): masking, dropout, adjacent swap, synonym replacement. Synonyms
    # are the packaged model's nearest word embeddings, which include some antonyms ("good" → "bad"): kept rare.
    word_mask: float = Field(0.15, ge=0.0, le=1.0)
    word_drop: float = Field(0.1, ge=0.0, le=1.0)
    word_swap: float = Field(0.1, ge=0.0, le=1.0)
    synonym: float = Field(0.05, ge=0.0, le=1.0)


class RepresentationConfig(Frozen):
    """Stage 2: contrastive fine-tuning under DP-SGD (defaults: the original method's reference configuration)."""

    backbone: str = "efficientnet-lite0"  # offline stand-in for the seed's resnet50
    # Side the backbone sees (images are resized to it). 64 keeps CPU runs short; 128 separates small images' classes
    # better, so more delivered labels are right, for a much longer run (measured in docs/search.md §5).
    input_size: int = Field(64, ge=16, le=512)
    freeze_fraction: float = Field(0.6, ge=0.0, le=1.0)
    # Partial unfreezing as "all but the top N blocks"; overrides freeze_fraction unless None. Default 1: DP noise grows
    # with the number of trained weights, and deeper fine-tuning did not improve features at ε = 3 (bench/encoder.py).
    trainable_blocks: int | None = Field(1, ge=0)
    feature_dim: Literal[64, 128, 256] = 256
    # The search's features are the projection joined with the image itself, downsampled to at most this many
    # pixels a side (0: the projection alone). Pretrained features and pixels err on different images, so a linear
    # class model of DP class means labels public images better in both joined than in either alone (measured in
    # docs/search.md §5). Grey stays grey, colour stays colour.
    pixel_view: int = Field(28, ge=0, le=64)
    # Texts: the search's features are the sentence embedding joined with this many numbers of the text's own words
    # and characters (encoders/lexical.py: hashed n-grams weighted by the public pool's IDF, randomly projected;
    # 0: the embedding alone). The embedding sees what a text is about, the surface how it is written, which is what
    # tells classes such as news outlets' posts apart (measured in docs/text.md, "Classes told apart by how they are
    # written").
    lexical_view: int = Field(256, ge=0, le=2048)
    proj_hidden_dim: int = Field(2048, ge=16)
    queue_size: int = Field(8192, ge=4096)
    momentum: float = Field(0.999, gt=0.0, lt=1.0)
    temperature: float = Field(0.07, gt=0.0, le=1.0)
    batch_size: int = Field(64, ge=1)
    # CPU default (seed: 80): fewer epochs keep DP fine-tuning short on a CPU (docs/method.md §2); σ follows from
    # the budget.
    epochs: int = Field(20, ge=1)
    # Seed: LARS at 0.3. Under DP the noise on the head's millions of weights is large against each gradient, so a
    # large step wrecks the features (measured in docs/method.md §2).
    base_lr: float = Field(0.01, gt=0.0)
    weight_decay: float = Field(1e-6, ge=0.0)
    clip_norm: float = Field(1.0, gt=0.0)
    # None: σ is derived by the accountant from the stage budget, epochs and batch (never a fixed σ: the
    # original method's own σ does not meet its ε).
    # A number: σ is used as given and training stops when the stage budget is spent.
    noise_multiplier: float | None = Field(None, gt=0.0)
    views_per_sample: int = Field(8, ge=2)  # cached views per private sample (issue: K = 16 e.g.; 8 halves caching)
    optimizer: Literal["sgd", "adam"] = "sgd"  # SGD with momentum 0.9 stands in for the seed's LARS
    # Free contrastive pre-training of the trainable part on the public pool (no private data, no budget)
    # before DP fine-tuning: a DP-noised head starting from random weights learns little from 500 samples.
    public_epochs: int = Field(1, ge=0)
    public_pool: int = Field(4096, ge=1, description="Public images cached for pre-training and negatives.")
    public_batch_size: int = Field(256, ge=2)
    public_lr: float = Field(0.05, gt=0.0)


class VariationConfig(Frozen):
    """The ``llm-variation`` text decoder: a small local LLM rewrites each retrieved public text into candidates, and
    the candidate whose embedding is nearest the feature the search asked for is delivered (post-processing, free).

    Slow on a CPU (an LLM generates every candidate; docs/text.md gives the cost), so ``share`` rewrites only part
    of the set. On the text demo it did not raise the downstream accuracy (docs/text.md), so retrieval stays the
    text default; it delivers new sentences instead of public ones."""

    candidates: int = Field(2, ge=1, le=16, description="Rewrites generated per delivered text.")
    share: float = Field(1.0, gt=0.0, le=1.0, description="Fraction of the delivered texts offered a rewrite.")
    # A looser tolerance rewrites more texts but never trained the downstream model better, and always taking the
    # best rewrite trained it worse (measured in docs/text.md, "new sentences instead of public ones").
    tolerance: float = Field(0.0, ge=0.0, le=1.0, description="A rewrite replaces its original when its cosine to "
                             "the requested feature is at most this much below the original's.")
    instruction: str = Field("Rewrite this text in different words, keeping its meaning and its tone. Reply with the "
                             "rewritten text only.", min_length=1)
    max_new_tokens: int = Field(64, ge=8, le=512)
    temperature: float = Field(0.8, gt=0.0, le=2.0)
    top_p: float = Field(0.95, gt=0.0, le=1.0)
    batch_size: int = Field(32, ge=1)


class DecoderConfig(Frozen):
    """Stage 4: features back to samples. Default: trained on public data only (free)."""

    # "nearest-public": returns the public sample nearest to the feature (sharp, exact round trip; needs an
    # in-domain public pool; the image demo's). "pixel-view": reads the image out of the feature's own pixel view and
    # sharpens it with a network trained on public images; with search.pixel_frequencies it draws shapes the public
    # pool lacks (configs/disjoint-demo.yaml). "conv": a small generator trained to invert the encoder from public
    # images; it draws the pool's shapes (docs/search.md §7). Tables: "nearest-public" (a public row), or "table-mlp", a
    # generator of new rows trained on the public table (it trails retrieval downstream: docs/tabular.md). Texts:
    # "nearest-public", or "llm-variation", retrieval whose texts a small local LLM rewrites towards the requested
    # features (slow).
    name: str = "conv"
    # "public": public pool only (free). "public-then-dp": then DP-SGD fine-tuning on the private set.
    # "dp": DP-SGD from scratch on the private set, for users with no public pool (raise dp_epochs and
    # dp_learning_rate: the fine-tuning defaults below start from a trained network).
    training: Literal["public", "public-then-dp", "dp"] = "public"
    # Public training (free). CPU defaults from bench/decoder.py: the pool is encoded once and cached, and the
    # feature-consistency term (a pass back through the frozen encoder, the expensive part) runs on a sub-batch.
    public_images: int = Field(5000, ge=1, description="Public images the decoder trains on, or retrieves from "
                               "(nearest-public): a seeded subset.")
    epochs: int = Field(5, ge=1)
    batch_size: int = Field(64, ge=1)
    learning_rate: float = Field(2e-3, gt=0.0)
    width: int = Field(32, ge=8, description="Channels of the generator's last hidden layer (x2 before it).")
    feature_noise: float = Field(0.1, ge=0.0, description="Relative norm of noise added to input features.")
    # A strong pull makes the generator draw adversarial texture that re-encodes well but is useless; 0.2 keeps the
    # utility probe up (measured in docs/method.md §3).
    consistency_weight: float = Field(0.2, ge=0.0)
    consistency_every: int = Field(2, ge=1, description="Apply feature consistency every k-th step.")
    consistency_batch: int = Field(16, ge=1, description="Samples per consistency pass through the encoder.")
    # training: public-then-dp — DP-SGD fine-tuning on the private set, paid from the "decoder" stage.
    dp_epochs: int = Field(3, ge=1)
    dp_batch_size: int = Field(50, ge=1, description="Expected Poisson batch size (q = dp_batch_size / n).")
    dp_learning_rate: float = Field(5e-4, gt=0.0)
    clip_norm: float = Field(1.0, gt=0.0)
    # None: σ derived by the accountant from the decoder stage's budget; a number: σ as given.
    noise_multiplier: float | None = Field(None, gt=0.0)
    # name: llm-variation (texts) only.
    variation: VariationConfig = VariationConfig()


#: The largest total ε a run accepts (``privacy.epsilon``).
MAX_EPSILON = 100.0


# The ledger's stages: the stages of a run that may pay (``pipeline/stages.py``), and delivery (always 0).
StageName = Literal["representation", "decoder", "release", "verdict", "delivery"]


STAGES: tuple[StageName, ...] = ("representation", "decoder", "release", "verdict", "delivery")


class PrivacyConfig(Frozen):
    """One total budget, split across stages by shares.

    The run turns the shares into per-stage ε caps for the ledger, scaled so that the accountant's composition
    of every planned release is the total ``epsilon`` (within 0.5 %, never above): composition is sub-additive, so
    caps that merely summed to ``epsilon`` would leave budget unspent (3 + 5 composes to 6.07, not 8).
    """

    # At most MAX_EPSILON: far above it a DP guarantee says nothing (e^100 bounds no attacker), and the accountant's
    # distributions grow with ε until they exhaust memory (docs/privacy.md §4).
    epsilon: float = 8.0
    delta: float = 1e-5
    # Default: the whole budget on the release (the seed splits 3 : 5 between representation and the release): the
    # seed's split delivered worse sets and ran slower in more memory (measured in docs/method.md §2). Stage 2 still
    # trains contrastively on the public pool (free); give ``representation`` a share to fine-tune it on the private
    # data.
    split: dict[StageName, float] = Field(
        default_factory=lambda: {"representation": 0.0, "decoder": 0.0, "release": 1.0, "verdict": 0.0,
                                 "delivery": 0.0}
    )
    neighbouring: Literal["add_remove", "replace_one"] = "add_remove"
    # Mechanism noise and private sampling come from the operating system's secure source. True derives them from
    # ``seed`` instead — reproducible, for tests and research only: anyone with the config can regenerate the noise,
    # so the run is NOT differentially private and its ledger, summary and report say so.
    reproducible_noise: bool = False

    @field_validator("epsilon")
    @classmethod
    def _epsilon_in_range(cls, value: float) -> float:
        if not 0.0 < value <= MAX_EPSILON:  # NaN and infinities fail too
            raise ValueError(f"ε must be a number in (0, {MAX_EPSILON:g}]: 8 is the usual choice, 1 a strong "
                             f"guarantee; beyond {MAX_EPSILON:g} a DP guarantee bounds no attacker")
        return value

    @field_validator("delta")
    @classmethod
    def _delta_in_range(cls, value: float) -> float:
        if not 0.0 < value < 1.0:
            raise ValueError("δ must be a number strictly between 0 and 1, well below 1 / (the number of private "
                             "samples), e.g. 1e-5")
        return value

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: object) -> object:
        if isinstance(data, dict) and "secure_noise" in data:
            raise ValueError("privacy.secure_noise was removed: noise is secure by default now; for reproducible "
                             "(not DP) noise in tests and research set privacy.reproducible_noise: true")
        if isinstance(data, dict) and "stages" in data:
            raise ValueError("privacy.stages (ε per stage) was replaced by privacy.split (each stage's share of "
                             "epsilon, summing to 1), e.g. split: {representation: 0.375, release: 0.625}; the run "
                             "scales the shares so that the accountant's total is exactly epsilon")
        split = data.get("split") if isinstance(data, dict) else None
        if isinstance(split, dict) and "fitness" in split:
            raise ValueError("privacy.split.fitness was renamed privacy.split.release (the DP release of class "
                             "statistics the search is judged on), e.g. split: {representation: 0.375, release: 0.625}")
        return data

    @field_validator("split")
    @classmethod
    def _shares(cls, split: dict[str, float]) -> dict[str, float]:
        for name, value in split.items():
            if not value >= 0:
                raise ValueError(f"stage {name!r} has a negative share {value}")
        total = sum(split.values())
        if abs(total - 1.0) > 1e-9:
            raise ValueError(f"the shares of privacy.split must sum to 1, got {total:g}")
        # A stage left out has no budget (post-processing only); every stage has an entry in the ledger.
        return {name: float(split.get(name, 0.0)) for name in STAGES}


class ExecutorConfig(Frozen):
    """Where the bulk work runs — encoding the public pool, evaluating each generation — with identical results.

    ``local`` (default): in this process. ``ray``: on a Ray cluster (``pip install 'pcevolve[ray]'``); only public
    samples and what was released under DP are sent to it, never a private sample."""

    name: str = "local"
    # ray: the cluster to join ("host:6379", or "ray://host:10001" for Ray Client); None: $RAY_ADDRESS, else a local
    # cluster on 127.0.0.1 started for the run and stopped after it.
    address: str | None = None
    workers: int | None = Field(None, ge=1, description="Parallel workers (None: every CPU of the cluster).")
    shard_rows: int = Field(4096, ge=1, description="Samples per encoding task (rounded up to whole batches).")


class RunConfig(Frozen):
    """A whole run. ``seed`` drives every public random generator of the run; mechanism noise is secure unless
    ``privacy.reproducible_noise`` is set (see ``pcevolve.randomness``)."""

    # The run folder's name (runs/NAME): one path component, portable to every file system.
    name: str = "demo"
    seed: int = Field(0, ge=0)
    data: DataConfig = DataConfig()
    augment: AugmentConfig = AugmentConfig()
    representation: RepresentationConfig = RepresentationConfig()
    search: SearchConfig = SearchConfig()
    decoder: DecoderConfig = DecoderConfig()
    privacy: PrivacyConfig = PrivacyConfig()
    # A table run without a public pool (data.public: null): how its rows are made (config/synthesis.py).
    synthesis: SynthesisConfig = SynthesisConfig()
    # Where the work runs does not change a result, so it is not part of the config's hash: a run started on a
    # cluster may be resumed on one machine and the other way round.
    executor: ExecutorConfig = ExecutorConfig()

    @field_validator("name")
    @classmethod
    def _folder_name(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", value):
            raise ValueError("a run name is the name of its folder: letters, digits, '.', '_' and '-', starting with "
                             "a letter or digit (e.g. clinic-2026)")
        return value

    @model_validator(mode="before")
    @classmethod
    def _executor_by_name(cls, data: object) -> object:
        if isinstance(data, dict) and isinstance(data.get("executor"), str):
            return {**data, "executor": {"name": data["executor"]}}  # `executor: ray` for `executor: {name: ray}`
        return data

    @property
    def pool_labeller(self) -> str:
        """The pool labeller ``search.pool_labeller`` names, "auto" resolved by the modality."""
        if self.search.pool_labeller != "auto":
            return self.search.pool_labeller
        traits = MODALITY_TRAITS.get(self.data.modality)
        return "pixel-cnn" if traits is not None and traits.pixels else "class-model"

    @property
    def makes_samples(self) -> bool:
        """Whether the run has no public pool (``data.public: null``): its samples are made from what the private
        data releases (:mod:`pcevolve.synthesis`) instead of retrieved or decoded with a pool's help."""
        return self.data.public is None

    @property
    def trains_with_dp_sgd(self) -> bool:
        """Whether a stage trains on the private samples with DP-SGD (the representation given a share, or a decoder
        trained under DP): the only part of a run whose sampling rate, batch / n, needs the private set's size."""
        return self.privacy.split["representation"] > 0 or self.decoder.training != "public"

    @property
    def basis_size(self) -> int:
        """Directions of the search basis: ``search.basis_dim`` principal ones plus, per image channel, the pixel
        view's ``search.pixel_frequencies``² lowest spatial frequencies."""
        channels = 3 if self.data.image_mode == "RGB" else 1
        return self.search.basis_dim + channels * self.search.pixel_frequencies**2

    @model_validator(mode="after")
    def _parts_exist_and_fit(self) -> "RunConfig":
        # Every registry key and cross-field rule, checked here so nothing fails after ε is spent.
        from pcevolve.config.parts import check_run_config

        check_run_config(self)
        return self
