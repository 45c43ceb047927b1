"""The judges of synthetic texts: utility, distribution and privacy against real texts, as pure functions.

Every set here is a ``"text"`` :class:`~pcevolve.data.LabeledDataset` (``samples`` a 1-D unicode array, ``int64``
labels), as :func:`pcevolve.data.text.read_labeled_texts` returns it; the public pool, when given, is a 1-D array of
texts. :func:`judge_texts` runs all three judges and returns a :class:`TextJudgement`; :func:`judge_text_files` does
the same from JSONL or CSV files. None of the judges uses the run's own sentence encoder: they see words and word
pairs only (:mod:`~pcevolve.evaluation.text_spaces`), so they do not share that encoder's blind spots.

* **Utility** (:mod:`~pcevolve.evaluation.text_utility`) — two fixed probes (TF-IDF and LSA, each with logistic
  regression) trained on the synthetic texts and, as a reference, on the private texts, tested on the test texts.
* **Distribution** (:mod:`~pcevolve.evaluation.text_distribution`) — MMD² between the synthetic (and the private) and
  the test texts in an LSA space, overall and per class.
* **Privacy** (:mod:`~pcevolve.evaluation.text_privacy`) — a closest-text membership attack, and the exact and near
  copies of private texts (:mod:`~pcevolve.evaluation.text_duplicates`; of test texts as the chance baseline).

What is computed on private data (the real reference lines, the private-vs-test MMD, the attack and the copy
counts) is not covered by the DP guarantee: it is an audit inside the secure zone. :meth:`TextJudgement.to_json`
holds what may leave it, rounded as :mod:`pcevolve.evaluation.shipped` rounds every modality's private-derived
figures — the attack's AUC and success and the real reference's scores to
:data:`~pcevolve.evaluation.table_privacy.AUC_DECIMALS` decimals, the private-vs-test MMD² and its bandwidth to 3
significant figures and at most 3 decimals — and only *whether* a private text was copied;
:meth:`TextJudgement.to_secure_json` holds the exact figures.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pcevolve.data import LabeledDataset
from pcevolve.data.text import read_labeled_texts, read_unlabeled_texts
from pcevolve.evaluation.line_scores import LOGISTIC_C, LinesJudgement, ModelResult, judged_classes
from pcevolve.evaluation.members import membership_split
from pcevolve.evaluation.text_distribution import TextMmd, text_mmd
from pcevolve.evaluation.text_duplicates import text_copies
from pcevolve.evaluation.text_privacy import ATTACK_RESAMPLES, TextPrivacyJudgement, membership_attack
from pcevolve.evaluation.text_spaces import LSA_DIMS, MAX_FEATURES, _texts
from pcevolve.evaluation.text_utility import utility_lines

#: Most public texts an LSA space is fitted on (seeded choice).
PUBLIC_MAX = 20_000

#: What a shared report must say about the figures in it that come from the private texts.
PRIVATE_FIGURES_CAVEAT = (
    "Not covered by the differential-privacy guarantee: these figures are computed on the private texts themselves "
    "— the real-reference probes (trained on the private texts) and their per-class scores, the private-vs-test "
    "distribution reference, the membership attack and the check for copied private texts. Read them as an audit of "
    "this run, not as released statistics. They are rounded (scores and AUCs to two decimals, distances to three "
    "decimals at most); the exact figures and counts (private texts, attack members, copied texts) stay in the "
    "run's secure/evaluation.json."
)


@dataclass(frozen=True)
class TextJudgement(LinesJudgement):
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

    def to_json(self) -> dict[str, Any]:
        """What may leave the secure zone: no private text count, no exact attack figure, no timing."""
        return {
            "class_names": list(self.class_names), **self.lines_json(), "lsa_basis": self.lsa_basis,
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
                "utility": self.secure_utility(),
                "distribution": self.distribution.to_secure_json(),
                "seconds": dict(self.seconds)}


def _only_texts(what: str, dataset: LabeledDataset) -> None:
    if dataset.sample_form != "texts":
        raise ValueError(f"the {what} set holds {dataset.modality} samples, not texts")


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
    classes = judged_classes("file", _only_texts, synthetic, test, private)
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
        split = membership_split(private.labels, test.labels, classes=len(test.class_names),
                                 rng=np.random.default_rng([seed, 13]))
        attack = membership_attack(private.samples[split.members], test.samples[split.non_members],
                                   synthetic.samples, rng=np.random.default_rng([seed, 17]), resamples=resamples,
                                   epsilon=epsilon, delta=delta, groups=split.members)
        own, chance = text_copies(synthetic.samples, private.samples), text_copies(synthetic.samples, test.samples)
        privacy = TextPrivacyJudgement(attack=attack, members=len(split), private_exact=int(own.exact.sum()),
                                       private_near=int(own.near.sum()), test_exact=int(chance.exact.sum()),
                                       test_near=int(chance.near.sum()), private_texts=len(private))
        seconds["privacy"] = time.perf_counter() - started
    return TextJudgement(
        **classes, utility=tuple(utility),
        lsa_basis="the public texts" if pool is not None else "each training set's own texts",
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
