"""The run configuration schema. Every default is the original method's value unless a comment says why not.

All models are frozen and forbid unknown keys, so a typo in a YAML file is an
error that names the key instead of a silently ignored setting.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)


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
            raise ValueError(f"class name {name!r} is not text ({_YAML_BOOLEANS}); quote it in the YAML file "
                             f"(\"{_label_text(name)}\")")
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


class DataConfig(_Frozen):
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
        return None if value is None else class_names_from(value, typed=info.data.get("modality") == "text")


class AugmentConfig(_Frozen):
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


class RepresentationConfig(_Frozen):
    """Stage 2: contrastive fine-tuning under DP-SGD (defaults: the original method's reference configuration)."""

    backbone: str = "efficientnet-lite0"  # offline stand-in for the seed's resnet50
    # Side the backbone sees (images are resized to it). 64 keeps CPU runs short; 128 separates small images' classes
    # better (Fashion-MNIST: delivered labels 2-5 points more often right) for ~2.8x the run time (docs/search.md §5).
    input_size: int = Field(64, ge=16, le=512)
    freeze_fraction: float = Field(0.6, ge=0.0, le=1.0)
    # Partial unfreezing as "all but the top N blocks"; overrides freeze_fraction unless None. Default 1: DP noise grows
    # with the number of trained weights, and deeper fine-tuning did not improve features at ε = 3 (bench/encoder.py).
    trainable_blocks: int | None = Field(1, ge=0)
    feature_dim: Literal[64, 128, 256] = 256
    # The search's features are the projection joined with the image itself, downsampled to at most this many
    # pixels a side (0: the projection alone). Pretrained features and pixels err on different images: on the
    # demo a linear class model of DP class means labels public images 79% right in either space alone and 83%
    # in both (docs/search.md §5). Grey stays grey, colour stays colour.
    pixel_view: int = Field(28, ge=0, le=64)
    # Texts: the search's features are the sentence embedding joined with this many numbers of the text's own words
    # and characters (encoders/lexical.py: hashed n-grams weighted by the public pool's IDF, randomly projected;
    # 0: the embedding alone). The embedding sees what a text is about, the surface how it is written: on a task
    # whose classes are news outlets' posts, a nearest-class-mean of 100 private posts per class labels test posts
    # 93% right in the lexical view (docs/text.md).
    lexical_view: int = Field(256, ge=0, le=2048)
    proj_hidden_dim: int = Field(2048, ge=16)
    queue_size: int = Field(8192, ge=4096)
    momentum: float = Field(0.999, gt=0.0, lt=1.0)
    temperature: float = Field(0.07, gt=0.0, le=1.0)
    batch_size: int = Field(64, ge=1)
    # CPU default (seed: 80). 20 epochs keep DP fine-tuning near a minute here; σ follows from the budget.
    epochs: int = Field(20, ge=1)
    # Seed: LARS at 0.3. Under DP the noise on a 3.5M-weight head has norm ~50 per step at ε = 3, so a large step
    # wrecks the features (projected-feature probe 81.7% → 74.6% at 0.3; unchanged at 0.01; bench/encoder.py).
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


class FitnessWeights(_Frozen):
    """Weights of F = acc·Acc − mmd·MMD − attack·Attack − privacy·Violation + diversity·Div + consistency·Cons
    − shift·Shift."""

    acc: float = Field(1.0, ge=0.0)
    mmd: float = Field(0.6, ge=0.0)
    attack: float = Field(0.4, ge=0.0)
    # The seed gives no weight for the privacy-violation term; we match the attack weight.
    privacy: float = Field(0.4, ge=0.0)
    diversity: float = Field(0.3, ge=0.0)
    # Label consistency (decoded, re-encoded samples keep their class); the seed names the term, not a weight.
    consistency: float = Field(0.5, ge=0.0)
    # The price of moving away from the released Gaussians (mean squared offset and spread change, in units of each
    # direction's spread): the release is the DP estimate, so the search leaves it only for a fitness gain larger
    # than the move costs. Without it, at epsilon 1 on the demo the other terms reached their maximum (accuracy 1,
    # diversity 1, consistency 1) a few thousandths above the start, anywhere on a plateau, and the search drifted
    # a third to half a spread away: the delivered set trained the CNN 0.8 points worse than the released Gaussians
    # (three runs; 0.6 over six earlier ones). With 0.05 it keeps the start at epsilon 8 and moves the CNN by
    # 0.0 to +0.4 points at epsilon 1 (three fresh runs each; docs/compare.md, "The search with a price on its moves").
    shift: float = Field(0.05, ge=0.0)


class SearchConfig(_Frozen):
    """Stage 3: evolutionary search over per-class distribution parameters."""

    # Whether the evolution runs. False: the run delivers the search's one-shot start, the released class Gaussians
    # sampled and decoded (what generation 0 is seeded with); the evolution's own settings below go unused. Off by
    # default because, measured against that start from the same release, it never won by more than the run-to-run
    # spread: on the image demo it kept the start in 11 of 12 runs at epsilon 8, and of the 14 runs where it moved the
    # start trained the CNN better in 10; on the table and text demos the downstream scores moved by a few tenths of
    # a point either way (docs/search.md section 11). True: for research, or a decoder whose round trip it learns.
    evolve: bool = False
    population: int = Field(32, ge=2)
    generations: int = Field(120, ge=1)
    elite: int = Field(8, ge=1)
    # Size of the delivered set, the user's choice: ``synthetic_per_class`` samples per class on average (the total,
    # per_class × classes, is split in proportion to the DP counts, so only the class balance comes from the
    # private data), or, when ``synthetic_multiplier`` is set instead, that many times each class's noisy count.
    # 1,000 per class serves training whether the private set has 10 or 100 per class.
    synthetic_per_class: int | None = Field(1000, ge=1, description="Delivered samples per class, on average.")
    synthetic_multiplier: int | None = Field(None, ge=1, description="Instead: multiplier × each class's noisy count.")
    mutation_sigma: float = Field(0.05, gt=0.0, le=1.0, description="Fraction of each parameter's range.")
    polynomial_every: int = Field(20, ge=1)
    coarse_generations: int = Field(30, ge=0)
    coarse_rate: float = Field(0.6, ge=0.0, le=1.0)
    fine_rate: float = Field(0.15, ge=0.0, le=1.0)
    converging_rate: float = Field(0.4, ge=0.0, le=1.0)
    eval_seeds: int = Field(3, ge=1)
    weights: FitnessWeights = FitnessWeights()
    # Operators by registry name (pcevolve.evolution): the main mutation, the crossover, and the round run every
    # ``polynomial_every`` generations.
    mutation: str = "gaussian"
    crossover: str = "interpolation"
    periodic_mutation: str = "polynomial"
    # Coarse phase: bounds widened by this factor around the fine bounds (the coarse-to-fine schedule's "wide bounds").
    coarse_bound_scale: float = Field(2.0, ge=1.0)
    # Adaptive mutation: when the population's mean per-parameter std, as a fraction of the range, drops
    # below this, the mutation rate goes to ``converging_rate``.
    diversity_threshold: float = Field(0.02, gt=0.0, lt=1.0)
    # Convergence: stop after ``patience`` generations whose best fitness improved by less than ``tolerance``.
    patience: int = Field(30, ge=1)
    tolerance: float = Field(1e-4, ge=0.0)
    # Search space: per class a mean and per-direction scales in a ``basis_dim``-d principal basis of the
    # public pool's features (free); "dp-pca" is not offered yet.
    basis: Literal["public"] = "public"
    basis_dim: int = Field(32, ge=1)
    # Images with a pixel view only: the pixel view's k x k lowest spatial frequencies (a fixed cosine basis that
    # reads no data) join the basis_dim principal directions, so the release and the search can describe shapes
    # the public pool does not show. 0: off. For a generating decoder and a pool that lacks the private classes
    # (configs/disjoint-demo.yaml: 14); a retrieval decoder can only return pool images, so it gains nothing.
    pixel_frequencies: int = Field(0, ge=0, le=64)
    # CPU scale-down: candidates are evaluated on this many sampled features per class during the search; the
    # delivered set is decoded at full size (synthetic_per_class, see above).
    candidate_per_class: int = Field(100, ge=2)
    # Decoder in the loop: a linear surrogate of decode→re-encode, fitted on public features (free), is
    # checked against real round trips of the best individual every ``roundtrip_every`` generations and refitted
    # on them (a public-only fit was optimistic where the search goes: predicted consistency 0.93, real 0.54).
    roundtrip_every: int = Field(5, ge=1)
    roundtrip_per_class: int = Field(24, ge=2)
    roundtrip_public: int = Field(1500, ge=2, description="Public features the round-trip surrogate is fitted on.")
    # The DP release, charged once to the release stage: per class count, clipped sum, full second moment
    # (in the basis) and a random-Fourier-feature sum. The clip norm is this quantile of the public ‖z‖ (free).
    clip_quantile: float = Field(0.95, gt=0.0, le=1.0)
    rff_features: int = Field(256, ge=1, description="m: the mean embedding has 2m random Fourier features.")
    # Privacy shares of the released components (count, sum, second_moment, rff); they must sum to 1. The sums carry
    # the class model that labels every delivered sample, so they get the most: on the demo, moving the sums' share
    # from 0.3 to 0.65 raised the model's right labels on public in-task images from 79% to 81% at epsilon 8 and
    # its 1,000 most confident per class from 80% to 82% right at epsilon 1.
    release_shares: tuple[float, float, float, float] = (0.05, 0.6, 0.15, 0.2)
    # The counts are released first; with release_min_snr > 0 the second moment and the RFF sum are then released
    # only if, for the noisy class size, their class means would rise this many times above their noise
    # (search/release_rule.py), and those dropped leave their share to the sums. Off by default: dropping them
    # helped the DP labeller (20 noise draws at 10 per class, epsilon 8: 70% -> 73% right) but not the delivered
    # set end to end (single runs: 10 per class epsilon 8, CNN 72.9% over 3 runs vs 75.0%; 100 per class
    # epsilon 1, 77.7% vs 79.0%), likely because the public covariance standing in for the class covariances is
    # too broad. 2 drops both at 10 per class and epsilon 8 (ratios 0.9 and 0.3) and keeps both at 100 (9.0, 2.6).
    release_min_snr: float = Field(0.0, ge=0.0)
    # How many leading basis directions the class sums are released in. None: the rule of search/release_rule.py,
    # from the noisy class sizes and public variances (the directions where a class mean rises above its noise;
    # on the demo's features at 10 per class 4 of 64 at epsilon 1 and 31-38 at epsilon 8; at 100 per class 49 at
    # epsilon 1 and all 64 at epsilon 8).
    release_dim: int | None = Field(None, ge=1)
    # Where the class means come from. "sums": released noisy sums of the private features (the class model,
    # territories and search Gaussians are built on them). "votes": the public pool is split into
    # vote_clusters_per_class x classes clusters, every private sample votes for its nearest one, and the classes are
    # given distinct clusters by the exponential mechanism on those votes (privacy/cluster_vote.py); a chosen public
    # centre is its class's mean. A choice is far cheaper than a mean when classes are small: offline, 12 draws at
    # 10 private images per class (docs/search.md section 8), the 1,000 public images per class the class model is
    # surest of were 82% right at epsilon 1 with votes against 24-29% with sums; at 100 per class the sums win
    # (89% vs 83% at epsilon 8, 84% vs 83% at 1). Choose it from what you know of your data's scale
    # (docs/quickstart.md): the setting ships with the run.
    class_means: Literal["sums", "votes"] = "sums"
    # Clusters per class (M = this x classes, rounded, never fewer than the classes). Offline on the three
    # few-shot runs' features (10 private images per class, a pool of 10 garment kinds; 8 public clusterings x 10
    # draws per run, docs/search.md section 8), the 1,000 public images per class the class model is surest of were
    # right 79 / 82 / 81 / 78% at epsilon 8 with 2 / 2.5 / 2.8 / 3.2 per class: with too few clusters k-means must
    # match the pool's kinds exactly and often merges two (T-shirts with dresses); with too many a class's ten votes
    # spread thinner.
    vote_clusters_per_class: float = Field(2.5, ge=1.0, le=50.0)
    # The clusters are found in the leading basis directions that hold this share of the public variance (the
    # trailing ones carry mostly spread within a kind, which k-means would fit too); the centres are then the
    # members' means in all directions. Same measurement, 2.5 per class: 0.8 (16 of 64 directions) against all 64,
    # 82 against 82% right on average at epsilon 8 but 80 against 66% for the worst tenth of one run's clusterings;
    # with 2 per class 79 against 75%.
    vote_cluster_variance: float = Field(0.8, gt=0.0, le=1.0)
    # A private image gives its nearest cluster a whole vote and every other cluster a part of one, exp(-excess
    # squared distance / width), width = this x the public points' mean squared distance to their nearest centre
    # (privacy/cluster_vote.py; the vote's sensitivity stays one). 0: whole votes only. Offline on the five
    # few-shot runs' own clusterings (40 draws each), 0.1 against 0: right labels 82.3 against 79.7% at epsilon 8
    # (one run's pullovers and coats voted 6/4 and 5/3 for the same two clusters, a tie the whole votes lost half
    # the time) and 80.0 against 77.7% at epsilon 1; over 6 other clusterings per run (10 draws each) 0.3 and 1.1
    # points better on average (per run -2.2 to +6.8 at epsilon 1, within the draws' noise but for the +6.8).
    vote_softness: float = Field(0.1, ge=0.0, le=10.0)

    validation_per_class: int = Field(200, ge=2, description="Samples per class drawn from the DP Gaussians.")
    # Delivery: how many candidate sets of the final population are ranked on DP fitness; the best is delivered.
    top_candidates: int = Field(3, ge=1)
    # Re-encode check before delivery: draw this many times the delivered size, decode and re-encode every sample, and
    # deliver first those the DP class Gaussians put back in their own class (post-processing). 1: no selection.
    delivery_oversample: float = Field(1.5, ge=1.0, le=10.0)
    # Retrieval decoders only: class k retrieves only among the pool images the DP class model assigns to k most
    # confidently, this many per delivered class-k sample (search/territory.py). 0: anywhere in the pool. 1 leaves
    # the search no choice of images; more lets it choose, at the price of less confident labels. On the demo
    # (docs/search.md §4) 1.5-2 trained the CNN best: 0 / 1 / 1.5 / 2 / 3 gave 78.8 / 80.9 / 81.5 / 82.0 / 80.5%.
    territory: float = Field(2.0, ge=0.0, le=100.0)
    # Retrieval decoders: who labels the pool images the territories are cut from (search/pool_labels.py), i.e. the
    # delivered labels. "class-model": the DP class model alone. "pixel-cnn" (images): the class model's territories
    # teach a small CNN the pool's pixels, and the two posteriors are multiplied (co-training; post-processing,
    # ~15 s on the demo). "auto": pixel-cnn for images, class-model for tables and texts. Offline on the demo's data
    # (3 releases at epsilon 8, docs/search.md section 4): the territories' labels right 72.5 -> 76.3%, from classes
    # outside the task 19.8 -> 15.6%.
    pool_labeller: Literal["auto", "class-model", "pixel-cnn"] = "auto"
    # pixel-cnn: the share of the pool the class model scores lowest for every class (far from every released mean)
    # that the CNN learns as one extra class, "outside the task"; an image's confidence is then discounted by its
    # probability of being outside. 0: no such class.
    labeller_outside: float = Field(0.15, ge=0.0, lt=1.0)
    # Retrieval decoders with territories, when privacy.split gives the verdict a share: this many generations in
    # which the private samples choose, by the exponential mechanism, among labellings of the pool (per-class offsets
    # of the pool labels' log posterior) the one whose territories train a probe that gets the most private samples
    # right (search/verdict.py). The offsets move by verdict_step at first, halving whenever the parent wins.
    verdict_generations: int = Field(6, ge=1, le=100)
    verdict_step: float = Field(0.5, gt=0.0, le=5.0)

    def vote_clusters(self, num_classes: int) -> int:
        """M, the public clusters the classes vote among (search.class_means "votes")."""
        return max(num_classes, int(round(self.vote_clusters_per_class * num_classes)))

    @model_validator(mode="before")
    @classmethod
    def _multiplier_replaces_the_per_class_default(cls, data: object) -> object:
        # A config that names only synthetic_multiplier means "instead of the default size".
        if isinstance(data, dict) and data.get("synthetic_multiplier") is not None \
                and "synthetic_per_class" not in data:
            return {**data, "synthetic_per_class": None}
        return data

    @model_validator(mode="after")
    def _elite_fits(self) -> "SearchConfig":
        if (self.synthetic_multiplier is None) == (self.synthetic_per_class is None):
            raise ValueError("set either synthetic_per_class (samples per class) or synthetic_multiplier (times each "
                             "class's noisy count), not both")
        if 0.0 < self.territory < 1.0:
            raise ValueError(f"territory ({self.territory}) must be 0 (off) or at least 1: each delivered sample "
                             "needs its own territory image")
        if self.elite > self.population:
            raise ValueError(f"elite ({self.elite}) must not exceed population ({self.population})")
        if self.top_candidates > self.population:
            raise ValueError(f"top_candidates ({self.top_candidates}) must not exceed population ({self.population})")
        shares = self.release_shares
        if any(w <= 0 for w in shares) or abs(sum(shares) - 1.0) > 1e-9:
            raise ValueError(f"release_shares must be positive and sum to 1, got {list(shares)}")
        return self


class VariationConfig(_Frozen):
    """The ``llm-variation`` text decoder: a small local LLM rewrites each retrieved public text into candidates, and
    the candidate whose embedding is nearest the feature the search asked for is delivered (post-processing, free).

    Slow on a CPU: about 0.5 s per candidate at batch 32 on 2 cores (SmolLM2-135M), so 2,000 texts × 2 candidates
    take 30-45 minutes; ``share`` rewrites only part of the set. On the text demo at ε 8 it did not raise the
    downstream accuracy (TF-IDF 0.655 with it, 0.660 without; bench/text_variation.py), so retrieval stays the
    text default; it delivers new sentences instead of public ones."""

    candidates: int = Field(2, ge=1, le=16, description="Rewrites generated per delivered text.")
    share: float = Field(1.0, gt=0.0, le=1.0, description="Fraction of the delivered texts offered a rewrite.")
    # Text demo at ε 8 (bench/text_variation.py): tolerance 0 rewrote 393 of 2,000 texts, TF-IDF 0.655; 0.1 rewrote
    # 1,385, 0.655; 1 (always the best rewrite) 1,974, 0.636; retrieval alone 0.660.
    tolerance: float = Field(0.0, ge=0.0, le=1.0, description="A rewrite replaces its original when its cosine to "
                             "the requested feature is at most this much below the original's.")
    instruction: str = Field("Rewrite this text in different words, keeping its meaning and its tone. Reply with the "
                             "rewritten text only.", min_length=1)
    max_new_tokens: int = Field(64, ge=8, le=512)
    temperature: float = Field(0.8, gt=0.0, le=2.0)
    top_p: float = Field(0.95, gt=0.0, le=1.0)
    batch_size: int = Field(32, ge=1)


class DecoderConfig(_Frozen):
    """Stage 4: features back to samples. Default: trained on public data only (free)."""

    # "nearest-public": returns the public sample nearest to the feature (sharp, exact round trip; needs an
    # in-domain public pool; the image demo's). "pixel-view": reads the image out of the feature's own pixel view and
    # sharpens it with a network trained on public images; with search.pixel_frequencies it draws shapes the public
    # pool lacks (configs/disjoint-demo.yaml). "conv": a small generator trained to invert the encoder from public
    # images; it draws the pool's shapes (docs/search.md §7). Tables: "nearest-public" (a public row), or "table-mlp", a
    # generator of new rows trained on the public table (lending-club demo at ε 8, gradient boosting's test ROC
    # AUC: 0.731 with retrieval, 0.706 with table-mlp; one secure-noise run each). Texts: "nearest-public", or
    # "llm-variation", retrieval whose texts a small local LLM rewrites towards the requested features (slow).
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
    # 1.0 pulled the utility probe down to 68% (adversarial texture); 0.2 keeps 75% at cosine 0.83 (bench).
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


class PrivacyConfig(_Frozen):
    """One total budget, split across stages by shares.

    The run turns the shares into per-stage ε caps for the ledger, scaled so that the accountant's composition
    of every planned release is the total ``epsilon`` (within 0.5 %, never above): composition is sub-additive, so
    caps that merely summed to ``epsilon`` would leave budget unspent (3 + 5 composes to 6.07, not 8).
    """

    # At most MAX_EPSILON: far above it a DP guarantee says nothing (e^100 bounds no attacker), and the accountant's
    # distributions grow with ε (ε = 10,000 ran out of memory at 7.4 GB after 89 s).
    epsilon: float = 8.0
    delta: float = 1e-5
    # Default: the whole budget on the release (the seed splits 3 : 5 between representation and the release). Measured
    # on the demo at ε = 8, two seeds, secure noise: the seed's split gave CNN 73.6% / 72.5%, labels right 73.8% /
    # 67.9%; all on the release 76.7% / 74.6%, 75.9% / 72.2%, and ran faster in less memory. Stage 2 still trains
    # contrastively on the public pool (free); give ``representation`` a share to fine-tune it on the private data.
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


class ExecutorConfig(_Frozen):
    """Where the bulk work runs — encoding the public pool, evaluating each generation — with identical results.

    ``local`` (default): in this process. ``ray``: on a Ray cluster (``pip install 'pcevolve[ray]'``); only public
    samples and what was released under DP are sent to it, never a private sample."""

    name: str = "local"
    # ray: the cluster to join ("host:6379", or "ray://host:10001" for Ray Client); None: $RAY_ADDRESS, else a local
    # cluster on 127.0.0.1 started for the run and stopped after it.
    address: str | None = None
    workers: int | None = Field(None, ge=1, description="Parallel workers (None: every CPU of the cluster).")
    shard_rows: int = Field(4096, ge=1, description="Samples per encoding task (rounded up to whole batches).")


class RunConfig(_Frozen):
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
        return "pixel-cnn" if self.data.modality == "image" else "class-model"

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
