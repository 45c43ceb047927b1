"""The search's settings (stage 3): the delivered set's size, the DP release of class statistics, the class means,
the evolution and its fitness weights. Every default is the original method's value unless a comment says why not.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pcevolve.config.base import Frozen


class FitnessWeights(Frozen):
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
    # than the move costs. Without it, at small epsilon the other terms saturate (accuracy, diversity and
    # consistency all near 1) just above the start, the search drifts anywhere on that plateau, and the delivered
    # set trains the CNN worse than the released Gaussians; with this price it keeps the start unless a move pays
    # (measured in docs/compare.md, "The search with a price on its moves").
    shift: float = Field(0.05, ge=0.0)


class SearchConfig(Frozen):
    """Stage 3: evolutionary search over per-class distribution parameters."""

    # Whether the evolution runs. False: the run delivers the search's one-shot start, the released class Gaussians
    # sampled and decoded (what generation 0 is seeded with); the evolution's own settings below go unused. Off by
    # default because, against that start from the same release, it never won by more than the run-to-run spread on
    # images, tables or texts (measured in docs/search.md §11). True: for research, or a decoder whose round trip it
    # learns.
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
    # on them (a public-only fit is optimistic where the search goes: docs/search.md §2).
    roundtrip_every: int = Field(5, ge=1)
    roundtrip_per_class: int = Field(24, ge=2)
    roundtrip_public: int = Field(1500, ge=2, description="Public features the round-trip surrogate is fitted on.")
    # The DP release, charged once to the release stage: per class count, clipped sum, full second moment
    # (in the basis) and a random-Fourier-feature sum. The clip norm is this quantile of the public ‖z‖ (free).
    clip_quantile: float = Field(0.95, gt=0.0, le=1.0)
    rff_features: int = Field(256, ge=1, description="m: the mean embedding has 2m random Fourier features.")
    # Privacy shares of the released components (count, sum, second_moment, rff); they must sum to 1. The sums carry
    # the class model that labels every delivered sample, so they get the most: a larger share for them labels the
    # public images better (measured in docs/search.md §1).
    release_shares: tuple[float, float, float, float] = (0.05, 0.6, 0.15, 0.2)
    # The counts are released first; with release_min_snr > 0 the second moment and the RFF sum are then released
    # only if, for the noisy class size, their class means would rise this many times above their noise
    # (privacy/release_rule.py), and those dropped leave their share to the sums. Off by default: dropping them
    # helped the DP labeller but not the delivered set end to end (docs/search.md §6), likely because the public
    # covariance standing in for the class covariances is too broad. Which classes a threshold drops is shown for
    # the demo's data in docs/privacy.md §3.6.
    release_min_snr: float = Field(0.0, ge=0.0)
    # How many leading basis directions the class sums are released in. None: the rule of privacy/release_rule.py,
    # from the noisy class sizes and public variances (the directions where a class mean rises above its noise:
    # few for small classes at small epsilon, the whole basis for large ones; docs/search.md §6.1).
    release_dim: int | None = Field(None, ge=1)
    # Where the class means come from. "sums": released noisy sums of the private features (the class model,
    # territories and search Gaussians are built on them). "votes": the public pool is split into
    # vote_clusters_per_class x classes clusters, every private sample votes for its nearest one, and the classes are
    # given distinct clusters by the exponential mechanism on those votes (privacy/cluster_vote.py); a chosen public
    # centre is its class's mean. A choice is far cheaper than a mean when classes are small: at ten private images
    # per class the votes label the pool far better than the sums, while at a hundred the sums' precise means win
    # (measured in docs/search.md §8). Choose it from what you know of your data's scale (docs/quickstart.md): the
    # setting ships with the run.
    class_means: Literal["sums", "votes"] = "sums"
    # Clusters per class (M = this x classes, rounded, never fewer than the classes). A little slack over the pool's
    # kinds labelled best (measured in docs/search.md §8): with too few clusters k-means must match the pool's kinds
    # exactly and often merges two (T-shirts with dresses); with too many a class's few votes spread thinner.
    vote_clusters_per_class: float = Field(2.5, ge=1.0, le=50.0)
    # The clusters are found in the leading basis directions that hold this share of the public variance (the
    # trailing ones carry mostly spread within a kind, which k-means would fit too); the centres are then the
    # members' means in all directions. As good on average as all directions, and far better on the worst
    # clusterings (measured in docs/search.md §8).
    vote_cluster_variance: float = Field(0.8, gt=0.0, le=1.0)
    # A private image gives its nearest cluster a whole vote and every other cluster a part of one, exp(-excess
    # squared distance / width), width = this x the public points' mean squared distance to their nearest centre
    # (privacy/cluster_vote.py; the vote's sensitivity stays one). 0: whole votes only. Partial votes break the
    # ties that whole votes leave when two classes split their votes over the same two clusters, and labelled
    # better on average at both epsilons (measured in docs/search.md §8, "Partial votes").
    vote_softness: float = Field(0.1, ge=0.0, le=10.0)

    validation_per_class: int = Field(200, ge=2, description="Samples per class drawn from the DP Gaussians.")
    # Delivery: how many candidate sets of the final population are ranked on DP fitness; the best is delivered.
    top_candidates: int = Field(3, ge=1)
    # Re-encode check before delivery: draw this many times the delivered size, decode and re-encode every sample, and
    # deliver first those the DP class Gaussians put back in their own class (post-processing). 1: no selection.
    delivery_oversample: float = Field(1.5, ge=1.0, le=10.0)
    # Retrieval decoders only: class k retrieves only among the pool images the DP class model assigns to k most
    # confidently, this many per delivered class-k sample (search/territory.py). 0: anywhere in the pool. 1 leaves
    # the search no choice of images; more lets it choose, at the price of less confident labels. A little choice
    # trains the CNN best, since it gains as much from variety as from sure labels (measured in docs/search.md §4).
    territory: float = Field(2.0, ge=0.0, le=100.0)
    # Retrieval decoders: which part of the pool looks like the task's classes at all (search/in_task.py; the release's
    # kernel mean embeddings against the pool's own, post-processing). Territories are cut from that part only, and
    # at most in_task_fraction of its estimated size is delivered. false: every pool sample counts as one of the
    # task's classes.
    in_task: bool = True
    in_task_fraction: float = Field(1.0, gt=0.0, le=1.0)
    # Retrieval decoders: who labels the pool images the territories are cut from (search/pool_labels.py), i.e. the
    # delivered labels. "class-model": the DP class model alone. "pixel-cnn" (images): the class model's territories
    # teach a small CNN the pool's pixels, and the two posteriors are multiplied (co-training; post-processing, a
    # short step). "auto": pixel-cnn for images, class-model for tables and texts. The two views err on different
    # images, so the territories' labels are right more often and fewer come from outside the task (measured in
    # docs/search.md §4, "Pool labels").
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
