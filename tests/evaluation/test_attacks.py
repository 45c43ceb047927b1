"""Membership inference (R7.4): the statistics by hand, chance on independent data, detection of planted members.

Chance tolerance: with n members and n non-members the null AUC has standard deviation
√((2n + 1) / (12 n²)) ≈ 0.020 for n = 400; the checks allow 0.1 (5σ), and the seeds are fixed.
"""

import math

import numpy as np
import pytest
import scipy.stats
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sk_roc_curve

from pcevolve.evaluation import (
    FPR_LEVELS,
    dcr_scores,
    domias_scores,
    dp_tpr_bound,
    evaluate_attack,
    membership_attacks,
    roc_auc,
    roc_curve,
)
from pcevolve.evaluation.attacks import kde_logpdf, refutes_dp_bound

N, DIM = 400, 10


def _gauss(rng, n, mean=0.0):
    return rng.normal(mean, 1.0, size=(n, DIM))


def test_auc_success_and_tpr_by_hand():
    members, non_members = np.array([3.0, 2.0, 1.0]), np.array([2.5, 0.0, -1.0])
    # Member beats non-member in 3 + 2 + 2 of 9 pairs; best threshold 1: TPR 1, FPR 1/3.
    assert roc_auc(members, non_members) == pytest.approx(7 / 9)
    result = evaluate_attack(members, non_members, attack="toy", rng=np.random.default_rng(0), resamples=20)
    assert result.auc.value == pytest.approx(7 / 9)
    assert result.success.value == pytest.approx(5 / 6)
    assert [e.value for e in result.tpr_at_fpr] == pytest.approx([1 / 3, 1 / 3])  # only FPR 0 is ≤ 1%
    assert result.to_json()["min_resolvable_fpr"] == pytest.approx(1 / 3)


def test_perfect_reversed_and_tied():
    high, low = np.arange(10.0, 20.0), np.arange(0.0, 10.0)
    assert roc_auc(high, low) == 1.0
    assert roc_auc(low, high) == 0.0
    assert roc_auc(np.ones(5), np.ones(7)) == 0.5
    perfect = evaluate_attack(high, low, attack="p", rng=np.random.default_rng(0), resamples=10)
    assert perfect.success.value == 1.0 and all(e.value == 1.0 for e in perfect.tpr_at_fpr)
    reversed_ = evaluate_attack(low, high, attack="r", rng=np.random.default_rng(0), resamples=10)
    assert reversed_.success.value == 0.5  # the "flag nobody" threshold; never below chance


def test_roc_and_auc_agree_with_sklearn_including_ties():
    rng = np.random.default_rng(1)
    pos, neg = rng.integers(0, 6, 50).astype(float), rng.integers(0, 5, 70).astype(float)
    truth, scores = np.r_[np.ones(50), np.zeros(70)], np.r_[pos, neg]
    assert roc_auc(pos, neg) == pytest.approx(roc_auc_score(truth, scores))
    fpr, tpr, thresholds = roc_curve(pos, neg)
    sk_fpr, sk_tpr, sk_thr = sk_roc_curve(truth, scores, drop_intermediate=False)
    np.testing.assert_allclose(fpr, sk_fpr)
    np.testing.assert_allclose(tpr, sk_tpr)
    np.testing.assert_allclose(thresholds[1:], sk_thr[1:])


def test_dp_bound():
    assert dp_tpr_bound(0.01, 1.0, 1e-5) == pytest.approx(math.e * 0.01 + 1e-5)
    assert dp_tpr_bound(0.01, 10.0, 0.0) == 1.0
    assert dp_tpr_bound(0.0, 3.0, 1e-5) == pytest.approx(1e-5)


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(2)
    pos, neg = rng.normal(0.3, 1, N), rng.normal(0, 1, N)
    a = evaluate_attack(pos, neg, attack="x", rng=np.random.default_rng(5))
    b = evaluate_attack(pos, neg, attack="x", rng=np.random.default_rng(5))
    assert a.to_json(curve=True) == b.to_json(curve=True)
    for est in (a.auc, a.success, *a.tpr_at_fpr):
        assert est.low <= est.value <= est.high
    # Bootstrap 95% width ≈ 4σ ≈ 0.08 for the AUC at n = 400.
    assert 0.04 < a.auc.high - a.auc.low < 0.12


def _setting(seed, *, planted):
    rng = np.random.default_rng(seed)
    members, non_members, reference = _gauss(rng, N), _gauss(rng, N), _gauss(rng, 2 * N)
    synthetic = np.concatenate([members, _gauss(rng, N)]) if planted else _gauss(rng, 2 * N)
    return members, non_members, synthetic, reference


def test_attacks_are_at_chance_on_independent_data():
    members, non_members, synthetic, reference = _setting(3, planted=False)
    results = membership_attacks(members, non_members, synthetic, reference=reference,
                                 rng=np.random.default_rng(0), resamples=100, epsilon=1.0, delta=1e-5)
    for name in ("dcr", "domias"):
        overall = results[name].overall
        assert abs(overall.auc.value - 0.5) < 0.1, name
        # Best-threshold success is optimistic under the null (≈ 0.5 + 0.44/√n = 0.52) but well under 0.6.
        assert overall.success.value < 0.58, name
        assert overall.exceeds_dp_bound is False


def test_attacks_detect_members_planted_in_the_synthetic_set():
    members, non_members, synthetic, reference = _setting(4, planted=True)
    results = membership_attacks(members, non_members, synthetic, reference=reference,
                                 rng=np.random.default_rng(0), resamples=100, epsilon=1.0, delta=1e-5)
    dcr, domias = results["dcr"].overall, results["domias"].overall
    assert dcr.auc.value == 1.0 and dcr.success.value == 1.0
    assert domias.auc.low > 0.65 and domias.success.value > 0.6
    # At ε = 1 no test can have TPR above e·1% + δ ≈ 2.7% at FPR 1%; DCR gets 100%.
    assert dcr.exceeds_dp_bound is True
    assert dcr.to_json()["dp_tpr_bound"][str(FPR_LEVELS[0])] == pytest.approx(dp_tpr_bound(0.01, 1.0, 1e-5))
    loose = evaluate_attack(dcr_scores(members, synthetic), dcr_scores(non_members, synthetic), attack="dcr",
                            rng=np.random.default_rng(0), resamples=20, epsilon=10.0, delta=1e-5)
    assert loose.exceeds_dp_bound is False  # e^10·1% > 1: nothing can exceed it


def test_per_class_results_find_the_leaking_class():
    rng = np.random.default_rng(5)
    classes = 3
    labels = np.repeat(np.arange(classes), N // 4)
    centres = 4.0 * np.eye(classes, DIM)
    members = _gauss(rng, len(labels)) + centres[labels]
    non_members = _gauss(rng, len(labels)) + centres[labels]
    reference = _gauss(rng, 2 * len(labels)) + centres[np.tile(labels, 2)]
    fresh = _gauss(rng, len(labels)) + centres[labels]
    # Only class 0's members are copied into the synthetic set; the rest of it is fresh.
    synthetic = np.concatenate([members[labels == 0], fresh[labels != 0], fresh[labels == 0]])
    results = membership_attacks(members, non_members, synthetic, reference=reference, rng=np.random.default_rng(0),
                                 member_labels=labels, non_member_labels=labels, classes=classes, resamples=50)
    dcr = results["dcr"]
    assert dcr.per_class[0].auc.value == 1.0
    assert all(abs(dcr.per_class[k].auc.value - 0.5) < 0.15 for k in (1, 2))  # n = 100 per class: σ ≈ 0.04
    assert dcr.worst_class == 0
    js = dcr.to_json()
    assert js["worst_class"] == 0 and len(js["per_class"]) == classes


def test_domias_ignores_query_order_and_validates_inputs():
    rng = np.random.default_rng(6)
    queries, synthetic, reference = _gauss(rng, 30), _gauss(rng, 60), _gauss(rng, 60)
    scores = domias_scores(queries, synthetic, reference, dims=3)
    np.testing.assert_allclose(domias_scores(queries[::-1], synthetic, reference, dims=3), scores[::-1])
    with pytest.raises(ValueError, match="reference and synthetic samples"):
        domias_scores(queries, synthetic[:3], reference, dims=3)
    with pytest.raises(ValueError, match="equally many"):
        membership_attacks(queries, queries[:10], synthetic, reference=reference, rng=rng)
    with pytest.raises(ValueError, match="together"):
        membership_attacks(queries, queries, synthetic, reference=reference, rng=rng, classes=2)


def test_kde_matches_scipy_and_survives_a_collapsed_synthetic_set():
    rng = np.random.default_rng(7)
    data, points = rng.normal(size=(200, 3)) @ rng.normal(size=(3, 3)), rng.normal(size=(20, 3))
    expected = scipy.stats.gaussian_kde(data.T, bw_method="scott").logpdf(points.T)
    np.testing.assert_allclose(kde_logpdf(points, data), expected, rtol=1e-5)  # 1e-6 ridge only
    queries, reference = _gauss(rng, 20), _gauss(rng, 50)
    collapsed = np.repeat(_gauss(rng, 1), 30, axis=0)  # a mode-collapsed candidate set
    assert np.isfinite(domias_scores(queries, collapsed, reference, dims=3)).all()


def test_the_dp_bound_alarm_needs_a_confidence_test_at_a_resolvable_fpr():
    """Five of 100 members above every non-member read as TPR 5% at FPR 0 — far above ε = 1's bound at FPR 0.1%, a
    rate 100 non-members cannot resolve — and raised the alarm from that point estimate. It is no evidence: with
    100 non-members an FPR of 0 is consistent with 3%, where the bound is 8%."""
    rng = np.random.default_rng(5)
    non_members = rng.normal(size=100)
    members = np.r_[rng.normal(size=95), np.full(5, 10.0)]
    result = evaluate_attack(members, non_members, attack="dcr", rng=np.random.default_rng(0), resamples=50,
                             epsilon=1.0, delta=1e-5)
    assert result.tpr_at_fpr[1].value >= 0.05 and result.exceeds_dp_bound is False
    assert refutes_dp_bound(members, non_members, epsilon=1.0, delta=1e-5) is False
    # A real leak is still caught: every member above every non-member, at enough non-members to resolve it.
    assert refutes_dp_bound(np.full(100, 10.0), rng.normal(size=1000), epsilon=1.0, delta=1e-5) is True
    # A row drawn ten times counts once: ten draws of the same leaking row are no more evidence than one.
    assert refutes_dp_bound(np.full(10, 10.0)[:1], rng.normal(size=1000), epsilon=1.0, delta=1e-5) is False
    drawn = evaluate_attack(np.full(10, 10.0), rng.normal(size=1000), attack="dcr", rng=np.random.default_rng(0),
                            resamples=20, epsilon=1.0, delta=1e-5, groups=np.zeros(10, int))
    assert drawn.exceeds_dp_bound is False
