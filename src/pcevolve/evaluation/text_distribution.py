"""The distribution judge of synthetic texts: MMD² against the real test texts in an LSA space, overall and per class.

The unbiased MMD² with a Gaussian (RBF) kernel between the synthetic and the test texts, overall and per class (and,
as the reference, between the private and the test texts), in an LSA space of unit-length vectors
(:class:`~pcevolve.evaluation.text_spaces.LsaSpace`; distances are those of cosine similarities): fitted on the
public texts when given, else, for each comparison, on the two sets compared pooled together. Never on one side alone:
an SVD fitted on one set represents its own texts more fully than outsiders, so outsiders look far — two independent
draws of the same texts look apart in a space fitted on one of them, alike in a pooled one (measured in docs/text.md,
"The judges' own settings"). The bandwidth is the median heuristic on each comparison's points (all classes), shared by
its per-class values. Each set is thinned to at most :data:`MMD_MAX` texts (seeded choice) first: the cost is quadratic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pcevolve.data import LabeledDataset
from pcevolve.evaluation.distribution import (
    PerClassValue,
    median_bandwidth,
    mmd_rbf,
    per_class,
)
from pcevolve.evaluation.shipped import shared_distance
from pcevolve.evaluation.text_spaces import LsaSpace

#: Most texts per set in the MMD (seeded choice).
MMD_MAX = 2000


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
