"""Membership inference against a synthetic set (target for a private set: success ≈ 50%, chance).

The game: the attacker sees the synthetic set and a mix of *members* (the private
samples it was made from) and *non-members* (as many held-out real samples of the same
distribution, never used), and scores each; higher means "member". Two attacks:

* **DCR** (distance to closest record): score = −(distance to the nearest synthetic
  sample). Catches copies and near-copies; works in any space (flattened pixels or features).
* **DOMIAS**-style density ratio (van Breugel et al., 2023): score =
  ``log p_synth(x) − log p_ref(x)``, both densities Gaussian KDEs (Scott's rule bandwidth,
  full covariance, as :class:`scipy.stats.gaussian_kde`; :func:`kde_logpdf`) in a low-dimensional space — the
  top ``dims`` principal components of the *reference* data (public data, disjoint from
  members and non-members). It catches local over-density of the synthetic set around
  private samples that DCR misses. Densities are only estimable in a few dimensions, hence
  the PCA; it is fitted on reference data only so it carries no information about members.

:func:`evaluate_attack` turns scores into an :class:`AttackResult`: ROC AUC, best-threshold
success (balanced accuracy), TPR at FPR 1% and 0.1%, percentile bootstrap CIs (members and
non-members resampled separately, seeded; members by private row when a row is drawn several
times, :mod:`~pcevolve.evaluation.members`), the ROC curve, and — given the ε, δ of the
release — a check against the DP bound ``TPR ≤ e^ε·FPR + δ`` that holds for every test on
an (ε, δ)-DP output: a confidence test (:func:`refutes_dp_bound`), never a point estimate.
Target for a private set: AUC and success ≈ 0.5.

Caveats kept in the numbers' reading, not hidden: best-threshold success is optimistic
(the threshold is chosen on the data it is scored on: with n members and n non-members and no
leak at all it averages about 0.5 + 0.44/√n, 0.52 for n = 500), and a TPR at an FPR below
1/(non-members) is the TPR at FPR 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special, stats

from pcevolve.evaluation.copies import as_rows, nearest_neighbours, squared_distances
from pcevolve.evaluation.shipped import shared_estimate
from pcevolve.privacy.audit import clopper_pearson_upper

#: FPR levels at which the TPR is reported.
FPR_LEVELS: tuple[float, ...] = (0.01, 0.001)
#: 1 − confidence of the DP-bound check (:func:`refutes_dp_bound`), split over the FPR levels it tests.
DP_CHECK_ALPHA = 0.05


def dcr_scores(queries: np.ndarray, synthetic: np.ndarray) -> np.ndarray:
    """Membership score of each query: minus its Euclidean distance to the closest synthetic sample."""
    _, distance = nearest_neighbours(queries, synthetic)
    return -distance


def domias_scores(queries: np.ndarray, synthetic: np.ndarray, reference: np.ndarray, *,
                  dims: int = 5) -> np.ndarray:
    """Membership score ``log p_synth(q) − log p_ref(q)`` with Gaussian KDEs in ``dims`` principal components.

    Args:
        queries: (N, ...) samples to score.
        synthetic: (S, ...) synthetic set.
        reference: (R, ...) real samples from the same distribution, disjoint from the queries (public
            data); the PCA and the reference density are fitted on them. Needs R > dims.
        dims: Principal components kept (capped at the data's dimension).

    Returns:
        float64 (N,) scores.
    """
    q, s, r = as_rows(queries, name="queries"), as_rows(synthetic, name="synthetic"), as_rows(reference,
                                                                                             name="reference")
    if not q.shape[1] == s.shape[1] == r.shape[1]:
        raise ValueError(f"values per sample differ: queries {q.shape[1]}, synthetic {s.shape[1]}, "
                         f"reference {r.shape[1]}")
    k = min(dims, q.shape[1])
    if len(r) <= k or len(s) <= k:
        raise ValueError(f"need more than {k} reference and synthetic samples for a {k}-D density")
    centre = r.mean(0)
    # Principal axes of the reference data (deterministic: SVD, sign fixed by the largest entry).
    _, _, vt = np.linalg.svd(r - centre, full_matrices=False)
    axes = vt[:k]
    axes *= np.sign(axes[np.arange(k), np.abs(axes).argmax(1)])[:, None]
    points = (q - centre) @ axes.T
    return kde_logpdf(points, (s - centre) @ axes.T) - kde_logpdf(points, (r - centre) @ axes.T)


def kde_logpdf(points: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Log density at ``points`` (N, d) of a Gaussian KDE on ``data`` (n, d), Scott's rule.

    Kernel covariance ``n^(-2/(d+4))·(Σ + ρI)``, Σ the data's covariance (``ddof=1``), as
    :class:`scipy.stats.gaussian_kde` with ``bw_method="scott"`` — plus a ridge ρ of 1e-6 of
    the mean variance, so a collapsed synthetic set (all samples alike, singular Σ) still
    has a density instead of raising.
    """
    n, d = data.shape
    cov = np.atleast_2d(np.cov(data, rowvar=False))
    cov = cov + 1e-6 * max(float(np.trace(cov)) / d, 1e-12) * np.eye(d)
    kernel = n ** (-2.0 / (d + 4)) * cov
    chol = np.linalg.cholesky(kernel)
    # Whiten by the kernel so it becomes a standard normal: log N(z; 0, I) − log det(chol).
    white_points = np.linalg.solve(chol, points.T).T
    white_data = np.linalg.solve(chol, data.T).T
    log_norm = -0.5 * d * math.log(2 * math.pi) - float(np.log(np.diag(chol)).sum()) - math.log(n)
    out = np.empty(len(points))
    for start in range(0, len(points), 1024):
        d2 = squared_distances(white_points[start : start + 1024], white_data)
        out[start : start + 1024] = special.logsumexp(-0.5 * d2, axis=1) + log_norm
    return out


def dp_tpr_bound(fpr: float, epsilon: float, delta: float) -> float:
    """The most TPR any membership test can reach at ``fpr`` on an (ε, δ)-DP output: ``min(1, e^ε·fpr + δ)``."""
    return min(1.0, math.exp(epsilon) * fpr + delta)


def roc_curve(member_scores: np.ndarray, non_member_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROC of the test "member iff score ≥ t" over every distinct threshold t.

    Returns:
        ``(fpr, tpr, thresholds)``, starting at (0, 0) with threshold +inf and ending at (1, 1).
    """
    pos, neg = np.asarray(member_scores, np.float64), np.asarray(non_member_scores, np.float64)
    scores = np.concatenate([pos, neg])
    is_member = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])
    order = np.argsort(-scores, kind="stable")
    scores, is_member = scores[order], is_member[order]
    # Last position of each run of equal scores: tied samples cross the threshold together.
    ends = np.r_[np.flatnonzero(np.diff(scores)), len(scores) - 1]
    tp = np.cumsum(is_member)[ends]
    fp = (ends + 1) - tp
    return (np.r_[0.0, fp / len(neg)], np.r_[0.0, tp / len(pos)], np.r_[np.inf, scores[ends]])


def roc_auc(member_scores: np.ndarray, non_member_scores: np.ndarray) -> float:
    """P(member score > non-member score) + ½·P(tie) (Mann–Whitney U / (m·n))."""
    pos, neg = np.asarray(member_scores, np.float64), np.asarray(non_member_scores, np.float64)
    ranks = stats.rankdata(np.concatenate([pos, neg]))  # average ranks: ties count ½
    m, n = len(pos), len(neg)
    return float((ranks[:m].sum() - m * (m + 1) / 2) / (m * n))


def _operating_points(pos: np.ndarray, neg: np.ndarray) -> tuple[float, float, list[float]]:
    fpr, tpr, _ = roc_curve(pos, neg)
    success = float(((tpr + 1.0 - fpr) / 2.0).max())
    tprs = [float(tpr[fpr <= level].max()) for level in FPR_LEVELS]
    return roc_auc(pos, neg), success, tprs


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a percentile bootstrap interval."""

    value: float
    low: float
    high: float

    def to_json(self) -> dict[str, float]:
        return {"value": self.value, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class AttackResult:
    """How well one attack separates members from non-members.

    Attributes:
        attack: Attack name (``"dcr"``, ``"domias"``).
        auc: ROC AUC (0.5 = chance; below 0.5 the score points the wrong way).
        success: Best-threshold balanced accuracy ``max_t (TPR + TNR) / 2`` (≥ 0.5 by construction).
        tpr_at_fpr: TPR at each level of :data:`FPR_LEVELS`, same order.
        fpr, tpr: The ROC curve, for plotting.
        members, non_members: Sample counts.
        confidence: Level of the bootstrap intervals.
        resamples: Bootstrap resamples.
        epsilon, delta: The release's DP guarantee, when given.
        refutes_dp: Whether a confidence test says the attack beats what (ε, δ)-DP allows
            (:func:`refutes_dp_bound`); None without an ε.
    """

    attack: str
    auc: Estimate
    success: Estimate
    tpr_at_fpr: tuple[Estimate, ...]
    fpr: np.ndarray = field(repr=False)
    tpr: np.ndarray = field(repr=False)
    members: int
    non_members: int
    confidence: float
    resamples: int
    epsilon: float | None = None
    delta: float | None = None
    refutes_dp: bool | None = None

    def dp_bounds(self) -> tuple[float, ...] | None:
        """``dp_tpr_bound`` at each FPR level for this result's (ε, δ); None without an ε."""
        if self.epsilon is None:
            return None
        return tuple(dp_tpr_bound(level, self.epsilon, self.delta or 0.0) for level in FPR_LEVELS)

    @property
    def exceeds_dp_bound(self) -> bool | None:
        """:attr:`refutes_dp`: True when a confidence test (:func:`refutes_dp_bound`) says that at some FPR level
        the attack's TPR is above what (ε, δ)-DP allows. One run's evidence, not a calibrated audit (see
        ``privacy.audit``)."""
        return self.refutes_dp

    def to_json(self, *, curve: bool = False) -> dict[str, Any]:
        """Every figure, exact (for ``secure/``); with ``curve``, the ROC curve too."""
        out: dict[str, Any] = {
            "attack": self.attack, "auc": self.auc.to_json(), "success": self.success.to_json(),
            "tpr_at_fpr": {str(level): est.to_json() for level, est in zip(FPR_LEVELS, self.tpr_at_fpr)},
            "members": self.members, "non_members": self.non_members,
            "min_resolvable_fpr": 1.0 / self.non_members,
            "confidence": self.confidence, "resamples": self.resamples,
            "epsilon": self.epsilon, "delta": self.delta, "exceeds_dp_bound": self.exceeds_dp_bound,
        }
        bounds = self.dp_bounds()
        if bounds is not None:
            out["dp_tpr_bound"] = {str(level): bound for level, bound in zip(FPR_LEVELS, bounds)}
        if curve:
            out["roc"] = {"fpr": self.fpr.tolist(), "tpr": self.tpr.tolist()}
        return out

    def to_shared_json(self) -> dict[str, Any]:
        """What a shared report carries (:meth:`to_json` is exact, for ``secure/``): AUC, success and every TPR
        rounded by :func:`~pcevolve.evaluation.shipped.shared_rate` (their denominators are the member counts, so
        an exact value gives the count back); no member or non-member count, resolvable FPR (1/non-members) or ROC
        curve (steps of 1/members); no ε, δ or DP bound (the run's, the same for every attack: the report gives them
        once)."""
        return {"attack": self.attack, "auc": shared_estimate(self.auc.to_json()),
                "success": shared_estimate(self.success.to_json()),
                "tpr_at_fpr": {str(level): shared_estimate(est.to_json())
                               for level, est in zip(FPR_LEVELS, self.tpr_at_fpr)},
                "confidence": self.confidence, "resamples": self.resamples,
                "exceeds_dp_bound": self.exceeds_dp_bound}


def evaluate_attack(member_scores: np.ndarray, non_member_scores: np.ndarray, *, attack: str,
                    rng: np.random.Generator, resamples: int = 200, confidence: float = 0.95,
                    epsilon: float | None = None, delta: float | None = None,
                    groups: np.ndarray | None = None) -> AttackResult:
    """Score-based membership test → :class:`AttackResult` with bootstrap intervals.

    Args:
        member_scores: Scores of the members (higher = "member").
        non_member_scores: Scores of the non-members.
        attack: Name recorded in the result.
        rng: Draws the bootstrap resamples.
        resamples: Bootstrap resamples; members and non-members are resampled separately, with
            replacement, and every statistic (including the best threshold) is recomputed on each.
        confidence: Two-sided percentile interval level.
        epsilon, delta: The release's guarantee, for :attr:`AttackResult.exceeds_dp_bound`.
        groups: Each member's private row, when rows were drawn several times
            (:mod:`~pcevolve.evaluation.members`): the bootstrap then resamples rows, each with all its draws,
            and the DP-bound check counts each row once. None: every member is a row of its own.
    """
    pos = np.asarray(member_scores, np.float64).ravel()
    neg = np.asarray(non_member_scores, np.float64).ravel()
    if len(pos) < 1 or len(neg) < 1:
        raise ValueError("need at least one member and one non-member score")
    if not (np.isfinite(pos).all() and np.isfinite(neg).all()):
        raise ValueError("scores must be finite")
    if resamples < 1 or not 0 < confidence < 1:
        raise ValueError(f"need resamples >= 1 and 0 < confidence < 1, got {resamples}, {confidence}")
    rows = np.arange(len(pos)) if groups is None else np.unique(np.asarray(groups).ravel(), return_inverse=True)[1]
    if len(rows) != len(pos):
        raise ValueError(f"one group per member is needed, got {len(rows)} for {len(pos)}")
    distinct = int(rows.max()) + 1
    auc, success, tprs = _operating_points(pos, neg)
    boot = np.empty((resamples, 2 + len(FPR_LEVELS)))
    for b in range(resamples):
        p = np.repeat(pos, np.bincount(rng.integers(0, distinct, distinct), minlength=distinct)[rows])
        n = neg[rng.integers(0, len(neg), len(neg))]
        b_auc, b_success, b_tprs = _operating_points(p, n)
        boot[b] = [b_auc, b_success, *b_tprs]
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(boot, [tail, 1.0 - tail], axis=0)
    estimates = [Estimate(float(v), float(lo), float(hi)) for v, lo, hi in zip([auc, success, *tprs], low, high)]
    fpr, tpr, _ = roc_curve(pos, neg)
    first = np.unique(rows, return_index=True)[1]  # a row drawn several times scores alike: count it once
    refutes = None if epsilon is None else refutes_dp_bound(pos[first], neg, epsilon=epsilon, delta=delta or 0.0)
    return AttackResult(attack=attack, auc=estimates[0], success=estimates[1], tpr_at_fpr=tuple(estimates[2:]),
                        fpr=fpr, tpr=tpr, members=len(pos), non_members=len(neg), confidence=confidence,
                        resamples=resamples, epsilon=epsilon, delta=delta, refutes_dp=refutes)


def refutes_dp_bound(member_scores: np.ndarray, non_member_scores: np.ndarray, *, epsilon: float, delta: float,
                     alpha: float = DP_CHECK_ALPHA) -> bool:
    """Whether the test "member iff score above t" beats (ε, δ)-DP with confidence 1 − ``alpha``.

    At each level of :data:`FPR_LEVELS` the non-members can resolve (level × non-members ≥ 1), t is the score above
    which at most that share of the non-members lie; the test refutes the guarantee when the Clopper–Pearson lower
    bound of its TPR (over the distinct members) exceeds ``e^ε`` times the upper bound of its FPR, plus δ —
    ``alpha`` split over the levels and the two bounds (Bonferroni). A point estimate at an FPR below 1 / non-members
    (where one member above every non-member reads as a TPR far above the bound) never raises it.
    """
    pos, neg = np.asarray(member_scores, np.float64), np.sort(np.asarray(non_member_scores, np.float64))[::-1]
    levels = [level for level in FPR_LEVELS if level * len(neg) >= 1]
    if not levels or len(pos) == 0:
        return False
    share = alpha / (2 * len(levels))
    for level in levels:
        allowed = int(level * len(neg))
        threshold = neg[allowed] if allowed < len(neg) else -math.inf
        true_positives, false_positives = int((pos > threshold).sum()), int((neg > threshold).sum())
        tpr_low = 1.0 - clopper_pearson_upper(len(pos) - true_positives, len(pos), share)
        fpr_high = clopper_pearson_upper(false_positives, len(neg), share)
        if tpr_low > dp_tpr_bound(fpr_high, epsilon, delta):
            return True
    return False


@dataclass(frozen=True)
class MembershipAttack:
    """One attack overall and restricted to each class's members and non-members (per-class risk).

    ``per_class[k]`` is None where class k lacks members or non-members.
    """

    overall: AttackResult
    per_class: tuple[AttackResult | None, ...]

    @property
    def worst_class(self) -> int | None:
        """The class where the attack does best (highest AUC; the lowest such class on a tie)."""
        aucs = {k: r.auc.value for k, r in enumerate(self.per_class) if r is not None}
        return max(aucs, key=aucs.__getitem__) if aucs else None

    def to_json(self, *, curve: bool = False) -> dict[str, Any]:
        """Exact figures (for ``secure/``); with ``curve``, the overall ROC curve too."""
        return {"overall": self.overall.to_json(curve=curve),
                "per_class": [None if r is None else r.to_json() for r in self.per_class],
                "worst_class": self.worst_class}

    def to_shared_json(self) -> dict[str, Any]:
        """What a shared report carries: :meth:`AttackResult.to_shared_json` overall and per class."""
        return {"overall": self.overall.to_shared_json(),
                "per_class": [None if r is None else r.to_shared_json() for r in self.per_class],
                "worst_class": self.worst_class}


def membership_attacks(members: np.ndarray, non_members: np.ndarray, synthetic: np.ndarray, *,
                       reference: np.ndarray, rng: np.random.Generator,
                       member_labels: np.ndarray | None = None, non_member_labels: np.ndarray | None = None,
                       classes: int | None = None, dims: int = 5, resamples: int = 200,
                       epsilon: float | None = None, delta: float | None = None,
                       member_groups: np.ndarray | None = None) -> dict[str, MembershipAttack]:
    """Run the DCR and DOMIAS attacks and evaluate each overall and (given labels) per class.

    Args:
        members: (M, ...) private samples the synthetic set was made from.
        non_members: (M, ...) as many real samples never used (e.g. held-out test samples).
        synthetic: (S, ...) the synthetic set under attack.
        reference: (R, ...) public real samples for DOMIAS's PCA and reference density; disjoint from both.
        rng: Draws every bootstrap resample (DCR's first, then DOMIAS's; overall before per class).
        member_labels, non_member_labels, classes: For per-class results; all three or none.
        dims: DOMIAS's PCA dimensions.
        resamples: Bootstrap resamples per result.
        epsilon, delta: The release's guarantee, for the DP-bound flag.
        member_groups: Each member's private row, when rows were drawn several times (``evaluate_attack``'s
            ``groups``).

    Returns:
        ``{"dcr": ..., "domias": ...}``. Scores are computed once against the whole synthetic set;
        per-class results only restrict which members and non-members are compared.
    """
    if len(members) != len(non_members):
        raise ValueError(f"members ({len(members)}) and non-members ({len(non_members)}) must be equally many; "
                         "subsample the larger set first")
    labelled = [member_labels is not None, non_member_labels is not None, classes is not None]
    if any(labelled) and not all(labelled):
        raise ValueError("give member_labels, non_member_labels and classes together, or none of them")
    if classes is not None and (len(member_labels) != len(members) or len(non_member_labels) != len(non_members)):
        raise ValueError("one label per member and per non-member is needed")
    queries = np.concatenate([as_rows(members, name="members"), as_rows(non_members, name="non_members")])
    scores = {"dcr": dcr_scores(queries, synthetic),
              "domias": domias_scores(queries, synthetic, reference, dims=dims)}
    m = len(members)
    results: dict[str, MembershipAttack] = {}
    for name, score in scores.items():
        options = {"attack": name, "rng": rng, "resamples": resamples, "epsilon": epsilon, "delta": delta}
        pos, neg = score[:m], score[m:]
        overall = evaluate_attack(pos, neg, groups=member_groups, **options)
        per_class: list[AttackResult | None] = []
        if classes is not None:
            ml, nl = np.asarray(member_labels), np.asarray(non_member_labels)
            for label in range(classes):
                p, n = pos[ml == label], neg[nl == label]
                groups = None if member_groups is None else np.asarray(member_groups)[ml == label]
                per_class.append(evaluate_attack(p, n, groups=groups, **options) if len(p) and len(n) else None)
        results[name] = MembershipAttack(overall=overall, per_class=tuple(per_class))
    return results
