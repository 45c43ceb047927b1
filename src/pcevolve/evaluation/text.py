"""The judges of synthetic texts: utility, distribution and privacy against real texts, as pure functions.

Every set here is a ``"text"`` :class:`~pcevolve.data.LabeledDataset` (``samples`` a 1-D unicode array, ``int64``
labels), as :func:`pcevolve.data.text.read_labeled_texts` returns it; the public pool, when given, is a 1-D array of
texts. :func:`judge_texts` runs all three judges and returns a :class:`TextJudgement`; :func:`judge_text_files` does
the same from JSONL or CSV files. None of the judges uses the run's own sentence encoder: they see words and word
pairs only, so they do not share that encoder's blind spots.

Every text is first normalised (:func:`normalise`: Unicode NFKC, lower-cased by case folding, runs of whitespace
made one space); words are runs of two or more letters or digits (scikit-learn's default token pattern).

* **Utility** (:func:`utility_lines`) — two fixed probes, chosen in advance and never tuned on the test set, each
  trained on a line (the synthetic texts, and as a reference the private texts) and tested on the real test texts:
  accuracy, macro-F1 and per-class precision, recall and F1 (and the ROC AUC, as the table judges define it).

  - ``"tfidf"`` — TF-IDF of words and word pairs (1–2-grams, sublinear term frequency ``1 + log tf``, rows of unit
    length, at most :data:`MAX_FEATURES` n-grams: the most frequent of the training texts), fitted on that line's
    training texts, then logistic regression (L2, C = :data:`LOGISTIC_C`).
  - ``"lsa"`` (the *LSA probe*) — the same TF-IDF followed by a truncated SVD to :data:`LSA_DIMS` dimensions
    (latent semantic analysis, :class:`LsaSpace`), fitted on the public texts when given (one space for every
    line), else on that line's training texts; rows of unit length, then logistic regression as above. The
    components are not standardised: that would weigh the SVD's last, noisy components as much as its main themes
    (on the generated texts of tests/evaluation/test_text_judges.py it took a probe fitted on 200 texts from 100%
    to 61% accuracy). Dense "topics" instead of sparse n-grams: a second opinion that does not reward a set for
    repeating the test set's exact phrases.

* **Distribution** (:func:`text_mmd`) — the unbiased MMD² with a Gaussian (RBF) kernel between the synthetic and
  the test texts, overall and per class (and, as the reference, between the private and the test texts), in an LSA
  space of unit-length vectors (distances are those of cosine similarities): fitted on the public texts when given,
  else, for each comparison, on the two sets compared pooled together. Never on one side alone: an SVD fitted on
  one set represents its own texts more fully than outsiders, so outsiders look far — two independent draws of
  the generated test texts came out 0.03–0.05 apart in a space fitted on the test texts, 0.000 in a pooled one. The
  bandwidth is the median heuristic on each comparison's points (all classes), shared by its per-class values.
  Each set is thinned to at most :data:`MMD_MAX` texts (seeded choice) first: the cost is quadratic.

* **Privacy** (:func:`membership_attack`, :func:`text_copies`) — a distance-to-closest-record membership attack:
  members are private texts, non-members as many test texts (a seeded choice following the members' class mix,
  :func:`pcevolve.evaluation.tabular.membership_split`); each is scored by its highest TF-IDF cosine similarity to a
  synthetic text (:class:`CosineSpace`, IDF from the synthetic texts: what the attacker holds), so members sitting
  closer score higher; the result is the ROC AUC with a bootstrap interval
  (:func:`pcevolve.evaluation.attacks.evaluate_attack`). 0.5 means the attacker cannot tell members from
  non-members. Copies of private texts: *exact* — equal after :func:`normalise`; *near* — TF-IDF cosine similarity
  at least :data:`NEAR_DUPLICATE_COSINE` to some private text (IDF from the private texts), exact copies included.
  The same counts against the test texts are the chance baseline (short stock phrases recur in any corpus).

What is computed on private data (the real reference lines, the private-vs-test MMD, the attack and the copy
counts) is not covered by the DP guarantee: it is an audit inside the secure zone. :meth:`TextJudgement.to_json`
holds what may leave it, rounded as :mod:`pcevolve.evaluation.shipped` rounds every modality's private-derived
figures — the attack's AUC and success and the real reference's scores to :data:`AUC_DECIMALS` decimals, the
private-vs-test MMD² and its bandwidth to 3 significant figures and at most 3 decimals — and only *whether* a
private text was copied; :meth:`TextJudgement.to_secure_json` holds the exact figures.
"""

from __future__ import annotations

import os
import re
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import (
    HashingVectorizer,
    TfidfTransformer,
    TfidfVectorizer,
)
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import normalize
from threadpoolctl import threadpool_limits

from pcevolve.data import LabeledDataset
from pcevolve.data.text import read_labeled_texts, read_unlabeled_texts
from pcevolve.evaluation.attacks import AttackResult, evaluate_attack
from pcevolve.evaluation.distribution import (
    PerClassValue,
    median_bandwidth,
    mmd_rbf,
    per_class,
)
from pcevolve.evaluation.shipped import shared_distance, shared_rate
from pcevolve.evaluation.tabular import (
    AUC_DECIMALS,
    ModelResult,
    membership_split,
    minority_class,
    score_lines,
    shareable_utility,
)

#: The utility probes, in report order, with their names in the report.
MODELS: dict[str, str] = {"tfidf": "TF-IDF + logistic regression", "lsa": "LSA probe"}
#: The training sets of the probes, in report order.
LINES: dict[str, str] = {"synthetic": "synthetic texts (delivered)",
                         "real": "private texts (real reference, not DP)"}
#: Word n-grams of every TF-IDF here: words and word pairs.
NGRAMS = (1, 2)
#: Most n-grams a probe's TF-IDF keeps (the most frequent of its fitting texts): bounds memory on large corpora.
MAX_FEATURES = 50_000
#: Dimensions of the LSA spaces (fewer when the fitting texts have fewer n-grams or texts).
LSA_DIMS = 128
#: Most public texts an LSA space is fitted on (seeded choice).
PUBLIC_MAX = 20_000
#: Most texts per set in the MMD (seeded choice).
MMD_MAX = 2000
#: TF-IDF cosine similarity at or above which a synthetic text is a near duplicate of a private one. Two texts at
#: 0.9 share nearly all their words and word pairs: a sentence of 25 words with one word changed comes out at
#: 0.90–0.94, with two changed at about 0.82, a paraphrase in other words at about 0.2.
NEAR_DUPLICATE_COSINE = 0.9
#: Consecutive words a text shown in a report may share with a private text, plus one (:func:`shared_runs`).
SHARED_RUN_WORDS = 8
#: Hashed n-gram slots of the copy and attack space: collisions among a corpus's n-grams are negligible at 2^20.
HASH_FEATURES = 2**20
#: Bootstrap resamples of the attack's statistics.
ATTACK_RESAMPLES = 200
#: Logistic regression's fixed recipe.
LOGISTIC_C = 1.0
LOGISTIC_MAX_ITER = 2000
#: BLAS/OpenMP threads while the probes fit: on small sets and a shared machine one thread is faster than several
#: waiting for each other, and the results do not depend on it.
MODEL_THREADS = 1
_BLOCK = 256

#: What a shared report must say about the figures in it that come from the private texts.
PRIVATE_FIGURES_CAVEAT = (
    "Not covered by the differential-privacy guarantee: these figures are computed on the private texts themselves "
    "— the real-reference probes (trained on the private texts) and their per-class scores, the private-vs-test "
    "distribution reference, the membership attack and the check for copied private texts. Read them as an audit of "
    "this run, not as released statistics. They are rounded (scores and AUCs to two decimals, distances to three "
    "decimals at most); the exact figures and counts (private texts, attack members, copied texts) stay in the "
    "run's secure/evaluation.json."
)


# ---------------------------------------------------------------------------------------------------- spaces


def normalise(text: str) -> str:
    """The form every judge compares: Unicode NFKC, case-folded, whitespace runs made one space, stripped."""
    return " ".join(unicodedata.normalize("NFKC", str(text)).casefold().split())


def _texts(texts: Sequence[str] | np.ndarray, what: str = "texts") -> np.ndarray:
    array = np.asarray(texts, dtype=str)
    if array.ndim != 1:
        raise ValueError(f"{what} must be a 1-D array of texts, got shape {array.shape}")
    return array


def tfidf_vectorizer(*, max_features: int | None = MAX_FEATURES) -> TfidfVectorizer:
    """The probes' TF-IDF recipe: 1–2-grams of :func:`normalise`d words, sublinear tf, unit-length rows."""
    return TfidfVectorizer(preprocessor=normalise, ngram_range=NGRAMS, sublinear_tf=True, max_features=max_features,
                           dtype=np.float64)


class LsaSpace:
    """TF-IDF (:func:`tfidf_vectorizer`) then a truncated SVD, fitted on one corpus; rows of unit length.

    Raises (on construction):
        ValueError: Fewer than two texts, or no word of two characters in any of them.
    """

    def __init__(self, corpus: Sequence[str] | np.ndarray, *, dims: int = LSA_DIMS, seed: int = 0) -> None:
        corpus = _texts(corpus, "the LSA corpus")
        if len(corpus) < 2:
            raise ValueError(f"an LSA space needs at least two texts, got {len(corpus)}")
        self.vectorizer = tfidf_vectorizer()
        matrix = self.vectorizer.fit_transform(corpus)
        # The SVD needs fewer components than n-grams and texts; a tiny corpus gets a smaller space, never an error.
        self.dims = max(1, min(dims, matrix.shape[1] - 1, matrix.shape[0] - 1))
        self.svd = TruncatedSVD(self.dims, algorithm="randomized", random_state=seed)
        with threadpool_limits(MODEL_THREADS):
            self.svd.fit(matrix)
        self.corpus_size = len(corpus)

    def transform(self, texts: Sequence[str] | np.ndarray) -> np.ndarray:
        """(N,) texts → float64 (N, dims); a text with no known n-gram is the zero vector."""
        with threadpool_limits(MODEL_THREADS):
            points = self.svd.transform(self.vectorizer.transform(_texts(texts)))
        return normalize(points).astype(np.float64, copy=False)


class CosineSpace:
    """Hashed TF-IDF of 1–2-grams with the IDF of a reference corpus; rows of unit length (dot product = cosine).

    Hashing keeps every n-gram of every text, not only the reference's vocabulary: an n-gram the reference never
    uses gets the highest IDF instead of being dropped, so a text made of new words stays far from every reference
    text. The space depends on the reference only, so the same pair of texts always gets the same similarity
    whatever else is compared (the report's safety check and the judge agree text by text).
    """

    def __init__(self, reference: Sequence[str] | np.ndarray) -> None:
        self.hasher = HashingVectorizer(preprocessor=normalise, ngram_range=NGRAMS, n_features=HASH_FEATURES,
                                        alternate_sign=False, norm=None, dtype=np.float64)
        self.idf = TfidfTransformer(sublinear_tf=True).fit(self.hasher.transform(_texts(reference)))

    def transform(self, texts: Sequence[str] | np.ndarray) -> sparse.csr_matrix:
        return self.idf.transform(self.hasher.transform(_texts(texts))).tocsr()


def best_cosine(queries: sparse.csr_matrix, reference: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """For each query row, the index of and cosine similarity to its most similar reference row (unit rows).

    Ties go to the lowest index; a query with no n-gram in common with any reference row gets similarity 0.
    """
    indices = np.zeros(queries.shape[0], np.int64)
    cosines = np.zeros(queries.shape[0], np.float64)
    if reference.shape[0] == 0:
        return indices, cosines
    transposed = reference.T.tocsc()
    for start in range(0, queries.shape[0], _BLOCK):
        block = (queries[start : start + _BLOCK] @ transposed).toarray()
        indices[start : start + len(block)] = block.argmax(1)
        # Rounding can put a copy at 1 + 1e-16: clip, so that "1.0" means an equal n-gram profile.
        cosines[start : start + len(block)] = np.clip(block.max(1), 0.0, 1.0)
    return indices, cosines


# ------------------------------------------------------------------------------------------------------ copies


@dataclass(frozen=True)
class TextCopies:
    """How close each candidate text comes to a reference text (see :func:`text_copies`).

    Attributes:
        exact: (N,) bool: equal to a reference text after :func:`normalise`.
        cosine: (N,) the highest TF-IDF cosine similarity to a reference text.
        nearest: (N,) the index of that reference text.
        threshold: The near-duplicate threshold.
    """

    exact: np.ndarray
    cosine: np.ndarray
    nearest: np.ndarray
    threshold: float

    @property
    def near(self) -> np.ndarray:
        """(N,) bool: a near duplicate — cosine at least the threshold, or an exact copy."""
        return self.exact | (self.cosine >= self.threshold)


def text_copies(candidates: Sequence[str] | np.ndarray, reference: Sequence[str] | np.ndarray, *,
                threshold: float = NEAR_DUPLICATE_COSINE) -> TextCopies:
    """Exact and near duplicates of ``reference`` texts among ``candidates`` (IDF from ``reference``)."""
    candidates, reference = _texts(candidates, "candidates"), _texts(reference, "reference")
    if len(reference) == 0 or len(candidates) == 0:
        none = np.zeros(len(candidates), bool)
        return TextCopies(none, np.zeros(len(candidates)), np.zeros(len(candidates), np.int64), threshold)
    known = {normalise(text) for text in reference}
    exact = np.array([normalise(text) in known for text in candidates], dtype=bool)
    space = CosineSpace(reference)
    nearest, cosine = best_cosine(space.transform(candidates), space.transform(reference))
    return TextCopies(exact, cosine, nearest, float(threshold))


_WORD = re.compile(r"\w+")


def _runs(text: str, words: int) -> set[str]:
    tokens = _WORD.findall(normalise(text))
    return {" ".join(tokens[i : i + words]) for i in range(len(tokens) - words + 1)}


def shared_runs(candidates: Sequence[str] | np.ndarray, reference: Sequence[str] | np.ndarray, *,
                words: int = SHARED_RUN_WORDS) -> np.ndarray:
    """(N,) bool: the candidate shares a run of at least ``words`` consecutive words (after :func:`normalise`) with
    some reference text — a verbatim passage, which the cosine of whole texts misses when the rest differs (a
    shortened text shown in a report, a private sentence inside a longer text)."""
    known: set[str] = set()
    for text in _texts(reference, "reference"):
        known |= _runs(text, words)
    return np.array([not _runs(text, words).isdisjoint(known) for text in _texts(candidates, "candidates")],
                    dtype=bool)


# ----------------------------------------------------------------------------------------------------- utility


def fit_probabilities(x_train: Any, y_train: np.ndarray, x_test: Any, *, classes: int) -> np.ndarray:
    """Logistic regression (the fixed recipe) → (N_test, ``classes``) class probabilities (dense or sparse x).

    A class absent from the training labels gets probability 0, so the columns always mean the same classes.

    Raises:
        ValueError: Fewer than two classes in the training labels.
    """
    present = np.unique(y_train)
    if len(present) < 2:
        raise ValueError(f"the training set holds {len(present)} class; a classifier needs at least two")
    estimator = LogisticRegression(C=LOGISTIC_C, max_iter=LOGISTIC_MAX_ITER)
    with threadpool_limits(MODEL_THREADS):
        estimator.fit(x_train, y_train)
        proba = estimator.predict_proba(x_test)
    out = np.zeros((x_test.shape[0], classes))
    out[:, estimator.classes_.astype(np.int64)] = proba
    return out


def probe_matrices(model: str, train: np.ndarray, test: np.ndarray, *, lsa: LsaSpace | None = None,
                   seed: int = 0) -> tuple[Any, Any]:
    """A probe's inputs: ``"tfidf"`` sparse TF-IDF fitted on ``train``; ``"lsa"`` unit-length points of ``lsa``
    (fitted on public texts), or of an LSA space fitted on ``train`` when ``lsa`` is None."""
    if model == "tfidf":
        vectorizer = tfidf_vectorizer()
        return vectorizer.fit_transform(train), vectorizer.transform(test)
    if model == "lsa":
        space = lsa if lsa is not None else LsaSpace(train, seed=seed)
        return space.transform(train), space.transform(test)
    raise KeyError(f"unknown probe {model!r}; known: {', '.join(MODELS)}")


def utility_lines(lines: dict[str, LabeledDataset], test: LabeledDataset, *, public: np.ndarray | None = None,
                  seed: int = 0) -> list[ModelResult]:
    """Every probe of :data:`MODELS` on every line (key of :data:`LINES` → training set), tested on ``test``."""
    classes = len(test.class_names)
    shared = None if public is None else LsaSpace(public, seed=seed)  # one public space serves every line

    def probabilities(model: str, train: LabeledDataset) -> np.ndarray:
        # A ValueError here (one class only, or no word at all in the training texts) is a result with an error.
        x_train, x_test = probe_matrices(model, train.samples, test.samples, lsa=shared, seed=seed)
        return fit_probabilities(x_train, train.labels, x_test, classes=classes)

    return score_lines(lines, test, line_labels=LINES, models=MODELS, probabilities=probabilities)


# ------------------------------------------------------------------------------------------------ distribution


@dataclass(frozen=True)
class TextMmd:
    """MMD² between the synthetic (and the private) texts and the test texts, overall and per class.

    Attributes:
        synthetic: Synthetic vs test.
        real: Private vs test (how close real data gets; None without private texts).
        space: The space, in words (which texts the LSA was fitted on, its dimensions).
        bandwidth, real_bandwidth: The RBF kernel's σ of each comparison (median heuristic on its points).
        synthetic_used, test_used: Texts in the comparison after thinning to :data:`MMD_MAX`.
    """

    synthetic: PerClassValue
    real: PerClassValue | None
    space: str
    bandwidth: float
    real_bandwidth: float | None
    synthetic_used: int
    test_used: int

    def to_json(self) -> dict[str, Any]:
        """Shareable: the private-vs-test MMD² and its bandwidth (computed on the private texts) rounded by
        :func:`~pcevolve.evaluation.shipped.shared_distance`; :meth:`to_secure_json` holds them exactly."""
        return {"metric": "unbiased MMD², Gaussian kernel, median-heuristic bandwidth", "space": self.space,
                "bandwidth": self.bandwidth, "real_bandwidth": shared_distance(self.real_bandwidth),
                "synthetic": self.synthetic.to_json(),
                "real_reference": None if self.real is None else self.real.to_shared_json(),
                "synthetic_used": self.synthetic_used, "test_used": self.test_used, "most_per_set": MMD_MAX}

    def to_secure_json(self) -> dict[str, Any]:
        """The private-vs-test comparison, exact."""
        return {"real_bandwidth": self.real_bandwidth,
                "real_reference": None if self.real is None else self.real.to_json()}


def _thin(dataset: LabeledDataset, most: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if len(dataset) <= most:
        return dataset.samples, dataset.labels
    chosen = np.sort(rng.choice(len(dataset), most, replace=False))
    return dataset.samples[chosen], dataset.labels[chosen]


def _mmd_pair(texts: np.ndarray, labels: np.ndarray, test: np.ndarray, test_labels: np.ndarray, *, classes: int,
              space: LsaSpace | None, seed: int) -> tuple[PerClassValue, float, int]:
    """(per-class MMD², bandwidth, dimensions) of one comparison; ``space`` None: an LSA of both sets pooled."""
    space = space if space is not None else LsaSpace(np.concatenate([texts, test]), seed=seed)
    x, y = space.transform(texts), space.transform(test)
    bandwidth = median_bandwidth(x, y)

    def metric(a: np.ndarray, b: np.ndarray) -> float:
        return mmd_rbf(a, b, bandwidth=bandwidth)

    return per_class(metric, x, labels, y, test_labels, classes=classes), bandwidth, space.dims


def text_mmd(synthetic: LabeledDataset, test: LabeledDataset, *, private: LabeledDataset | None = None,
             public: np.ndarray | None = None, seed: int = 0, most: int = MMD_MAX) -> TextMmd:
    """The MMD judge (see the module docstring); the LSA is fitted on ``public``, else on each compared pair.

    Raises:
        ValueError: Fewer than two synthetic or test texts.
    """
    rng = np.random.default_rng([seed, 23])
    syn, syn_labels = _thin(synthetic, most, rng)
    ref, ref_labels = _thin(test, most, rng)
    classes = len(test.class_names)
    shared = None if public is None else LsaSpace(public, seed=seed)
    ours, bandwidth, dims = _mmd_pair(syn, syn_labels, ref, ref_labels, classes=classes, space=shared, seed=seed)
    real, real_bandwidth = None, None
    if private is not None:
        own, own_labels = _thin(private, most, rng)
        real, real_bandwidth, _ = _mmd_pair(own, own_labels, ref, ref_labels, classes=classes, space=shared,
                                            seed=seed)
    basis = ("the public texts" if shared is not None else
             "the two sets compared, pooled (synthetic + test texts; private + test texts for the reference)")
    return TextMmd(synthetic=ours, real=real,
                   space=f"LSA of TF-IDF word and word-pair weights, {dims} dimensions, fitted on {basis}; "
                         "unit-length vectors", bandwidth=bandwidth, real_bandwidth=real_bandwidth,
                   synthetic_used=len(syn), test_used=len(ref))


# ----------------------------------------------------------------------------------------------------- privacy


def membership_attack(members: np.ndarray, non_members: np.ndarray, synthetic: np.ndarray, *,
                      rng: np.random.Generator, resamples: int = ATTACK_RESAMPLES, epsilon: float | None = None,
                      delta: float | None = None) -> AttackResult:
    """The distance-to-closest-record attack: score = the highest TF-IDF cosine similarity to a synthetic text, in
    a :class:`CosineSpace` with the synthetic texts' IDF; evaluated with bootstrap intervals drawn from ``rng``."""
    space = CosineSpace(synthetic)
    reference = space.transform(synthetic)
    _, member_cosine = best_cosine(space.transform(members), reference)
    _, non_member_cosine = best_cosine(space.transform(non_members), reference)
    return evaluate_attack(member_cosine, non_member_cosine, attack="dcr", rng=rng, resamples=resamples,
                           epsilon=epsilon, delta=delta)


@dataclass(frozen=True)
class TextPrivacyJudgement:
    """The membership attack and the copy check.

    Attributes:
        attack: The distance-to-closest-record attack's result.
        members: Members (= non-members) in the attack.
        private_exact, private_near: Synthetic texts that are exact / near duplicates of a private text.
        test_exact, test_near: The same against the test texts (the chance baseline).
        private_texts: Texts of the private set.
        threshold: The near-duplicate cosine threshold.
    """

    attack: AttackResult
    members: int
    private_exact: int
    private_near: int
    test_exact: int
    test_near: int
    private_texts: int
    threshold: float = NEAR_DUPLICATE_COSINE

    def to_json(self) -> dict[str, Any]:
        """Shareable: the AUC and success rounded (:func:`~pcevolve.evaluation.shipped.shared_rate`), whether any
        private text was copied, the test copy counts."""
        auc, success = self.attack.auc, self.attack.success
        return {"attack": "closest synthetic text (TF-IDF cosine similarity)",
                "auc": shared_rate(auc.value), "auc_interval": [shared_rate(auc.low), shared_rate(auc.high)],
                "success": shared_rate(success.value), "exceeds_dp_bound": self.attack.exceeds_dp_bound,
                "confidence": self.attack.confidence, "auc_decimals": AUC_DECIMALS,
                "near_duplicate_cosine": self.threshold,
                "private_texts_copied": self.private_exact > 0, "private_texts_near_copied": self.private_near > 0,
                "test_texts_copied": self.test_exact, "test_texts_near_copied": self.test_near}

    def to_secure_json(self) -> dict[str, Any]:
        return {"attack": self.attack.to_json(curve=True), "members": self.members, "non_members": self.members,
                "private_exact_copies": self.private_exact, "private_near_copies": self.private_near,
                "test_exact_copies": self.test_exact, "test_near_copies": self.test_near,
                "near_duplicate_cosine": self.threshold, "private_texts": self.private_texts}


# -------------------------------------------------------------------------------------------------- the verdict


@dataclass(frozen=True)
class TextJudgement:
    """Every result of :func:`judge_texts`.

    Attributes:
        class_names: The classes, in label order.
        minority_class: The test set's smallest class (the binary AUC's positive class; marked in the report).
        synthetic_per_class, test_per_class: Texts per class.
        utility: Every (line, probe) result; the ``"real"`` line only with private texts.
        lsa_basis: What the LSA probe's space was fitted on, in words.
        distribution: The MMD judge.
        privacy: The attack and copy check (None without private texts).
        seed: Seeds the SVDs, the thinning, the attack's split and its bootstrap.
        seconds: Time of each judge.
    """

    class_names: tuple[str, ...]
    minority_class: int
    synthetic_per_class: tuple[int, ...]
    test_per_class: tuple[int, ...]
    utility: tuple[ModelResult, ...]
    lsa_basis: str
    distribution: TextMmd
    privacy: TextPrivacyJudgement | None
    seed: int
    seconds: dict[str, float] = field(default_factory=dict)

    def result(self, line: str, model: str) -> ModelResult | None:
        return next((r for r in self.utility if r.line == line and r.model == model), None)

    def to_json(self) -> dict[str, Any]:
        """What may leave the secure zone: no private text count, no exact attack figure, no timing."""
        names = self.class_names
        return {
            "class_names": list(names), "minority_class": names[self.minority_class],
            "synthetic_per_class": dict(zip(names, self.synthetic_per_class, strict=True)),
            "test_per_class": dict(zip(names, self.test_per_class, strict=True)),
            "utility": shareable_utility(self.utility, names), "lsa_basis": self.lsa_basis,
            "probes": {"tfidf": f"TF-IDF of words and word pairs (sublinear tf, at most {MAX_FEATURES} n-grams) "
                                f"fitted on each training set, logistic regression (L2, C = {LOGISTIC_C:g})",
                       "lsa": f"the same TF-IDF reduced by truncated SVD to at most {LSA_DIMS} dimensions, fitted on "
                              f"{self.lsa_basis}; unit-length rows; logistic regression (L2, C = {LOGISTIC_C:g})"},
            "distribution": self.distribution.to_json(),
            "privacy": None if self.privacy is None else {"caveat": PRIVATE_FIGURES_CAVEAT, **self.privacy.to_json()},
            "seed": self.seed,
        }

    def to_secure_json(self) -> dict[str, Any]:
        """The exact private-derived figures :meth:`to_json` leaves out or rounds, and the timings."""
        return {"privacy": None if self.privacy is None else self.privacy.to_secure_json(),
                "utility": [{**r.to_json(self.class_names), "seconds": r.seconds} for r in self.utility],
                "distribution": self.distribution.to_secure_json(),
                "seconds": dict(self.seconds)}


def _check_sets(**sets: LabeledDataset | None) -> tuple[str, ...]:
    names = None
    for what, dataset in sets.items():
        if dataset is None:
            continue
        if dataset.modality != "text":
            raise ValueError(f"the {what} set holds {dataset.modality} samples, not texts")
        if names is not None and dataset.class_names != names:
            raise ValueError(f"the {what} set's classes {list(dataset.class_names)} differ from {list(names)}; read "
                             "every file with the same class_names")
        names = dataset.class_names
    assert names is not None
    return names


def judge_texts(synthetic: LabeledDataset, test: LabeledDataset, *, private: LabeledDataset | None = None,
                public: Sequence[str] | np.ndarray | None = None, seed: int = 0, epsilon: float | None = None,
                delta: float | None = None, resamples: int = ATTACK_RESAMPLES) -> TextJudgement:
    """Judge synthetic texts against real test texts (and, given, the private texts they were made from).

    Args:
        synthetic: The synthetic texts (at least two).
        test: Real held-out texts, never used to make the synthetic set (the judge).
        private: The private texts: the real reference lines, the attack's members, the copy check.
        public: Unlabelled public texts: the LSA spaces of the probe and the MMD (at most :data:`PUBLIC_MAX`,
            a seeded choice).
        seed: Seeds the SVDs, the thinning, the attack's choice of texts and its bootstrap.
        epsilon, delta: The release's guarantee: flags an attack that beats what (ε, δ)-DP allows.
        resamples: Bootstrap resamples of the attack's statistics.

    Raises:
        ValueError: The sets are not texts, have different classes, or are too small to compare.
    """
    names = _check_sets(synthetic=synthetic, test=test, private=private)
    classes = len(names)
    pool = None
    if public is not None:
        pool = _texts(public, "public")
        if len(pool) > PUBLIC_MAX:
            pool = pool[np.sort(np.random.default_rng([seed, 29]).choice(len(pool), PUBLIC_MAX, replace=False))]
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    lines = {"synthetic": synthetic, **({} if private is None else {"real": private})}
    utility = utility_lines(lines, test, public=pool, seed=seed)
    seconds["utility"] = time.perf_counter() - started

    started = time.perf_counter()
    distribution = text_mmd(synthetic, test, private=private, public=pool, seed=seed)
    seconds["distribution"] = time.perf_counter() - started

    privacy = None
    if private is not None:
        started = time.perf_counter()
        members, non_members = membership_split(private.labels, test.labels, classes=classes,
                                                rng=np.random.default_rng([seed, 13]))
        attack = membership_attack(private.samples[members], test.samples[non_members], synthetic.samples,
                                   rng=np.random.default_rng([seed, 17]), resamples=resamples, epsilon=epsilon,
                                   delta=delta)
        own, chance = text_copies(synthetic.samples, private.samples), text_copies(synthetic.samples, test.samples)
        privacy = TextPrivacyJudgement(attack=attack, members=len(members), private_exact=int(own.exact.sum()),
                                       private_near=int(own.near.sum()), test_exact=int(chance.exact.sum()),
                                       test_near=int(chance.near.sum()), private_texts=len(private))
        seconds["privacy"] = time.perf_counter() - started
    return TextJudgement(
        class_names=names, minority_class=minority_class(test.labels, classes),
        synthetic_per_class=tuple(np.bincount(synthetic.labels, minlength=classes).tolist()),
        test_per_class=tuple(np.bincount(test.labels, minlength=classes).tolist()),
        utility=tuple(utility), lsa_basis="the public texts" if pool is not None else "each training set's own texts",
        distribution=distribution, privacy=privacy, seed=seed, seconds=seconds)


def judge_text_files(synthetic_path: str | os.PathLike[str], test_path: str | os.PathLike[str], *,
                     private_path: str | os.PathLike[str] | None = None,
                     public_path: str | os.PathLike[str] | None = None, text_field: str = "text",
                     label_field: str = "label", seed: int = 0) -> dict[str, Any]:
    """:func:`judge_texts` on JSONL or CSV files: ``TextJudgement.to_json()`` with the exact figures under
    ``"secure"``.

    Classes come from the private file when given, else from the test file; the other files are read with those
    classes (a label they lack is an error; the synthetic file may miss a class). The result holds private-derived
    exact figures: keep it where the private data is (research and benchmarks), not in a shared report.

    Raises:
        pcevolve.data.DataError: A file is missing or unreadable (each problem names its line and field).
    """
    fields = {"text_field": text_field, "label_field": label_field}
    private = None if private_path is None else read_labeled_texts(private_path, **fields)
    # class_labels: the classes with their labels' JSON type, which the other JSON Lines files must share
    test = read_labeled_texts(test_path, class_names=None if private is None else private.class_labels, **fields)
    synthetic = read_labeled_texts(synthetic_path, class_names=test.class_labels, min_per_class=0, **fields)
    public = None if public_path is None else read_unlabeled_texts(public_path, **fields).samples
    judgement = judge_texts(synthetic, test, private=private, public=public, seed=seed)
    return {**judgement.to_json(), "secure": judgement.to_secure_json()}
