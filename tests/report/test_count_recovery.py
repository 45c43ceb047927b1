"""Two attacks on what an evaluation ships, run against a tiny few-shot run: neither gives a private count back.

1. **Class sizes from the attack figures.** Members per class used to be min(private rows, test rows): with fewer
   private rows than test rows (the few-shot case), every per-class figure is a ratio over the private class size,
   and the smallest member count consistent with all of a class's rounded figures was exactly that size. The
   attacker here scans member counts and keeps the smallest one that every shipped figure fits. It recovers every
   class size from figures computed the old way (shown, so the attack has power) and none from what ships now, whose
   member counts are public.
2. **n from the figures that should not depend on it.** The synthetic and test images were encoded in one batched
   job with the private ones, so the unrounded synthetic-vs-test distances moved with n. The same run judged
   against a private set three images smaller must ship every such figure bit for bit the same; whatever differs is
   private-derived and must be rounded (:func:`~pcevolve.evaluation.shipped.dependence_violations`, reading every
   key).
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from pcevolve.evaluation.attacks import membership_attacks
from pcevolve.evaluation.shipped import RATE_DECIMALS, dependence_violations
from pcevolve.report import write_report

from conftest import evaluate_fake  # tests/report/conftest.py

#: Half a unit of the last shipped decimal: a rounded figure is within this of the exact one.
SLACK = 0.5 * 10.0 ** -RATE_DECIMALS + 1e-9


def _fits(value: float, count: int, denominator: int, low: int = 0) -> bool:
    """Whether some whole numerator in low..count over ``denominator`` rounds to ``value``."""
    numerator = round(value * denominator)
    return any(low <= k <= count and abs(k / denominator - value) <= SLACK for k in (numerator - 1, numerator,
                                                                                     numerator + 1))


def _consistent(figures: list[dict], members: int) -> bool:
    """Whether every figure could come from ``members`` members and as many non-members: a TPR is i / c, a success
    (TPR + TNR) / 2 = s / (2c) with s ≥ c, an AUC U / c² counting ties half (2U / 2c²)."""
    c = members
    for figure in figures:
        if not _fits(figure["success"]["value"], 2 * c, 2 * c, low=c):
            return False
        if not _fits(figure["auc"]["value"], 2 * c * c, 2 * c * c):
            return False
        if not all(_fits(tpr["value"], c, c) for tpr in figure["tpr_at_fpr"].values()):
            return False
    return True


def smallest_member_count(figures: list[dict], most: int = 200) -> int | None:
    """The attack: the smallest member count that every shipped figure of one class fits."""
    return next((c for c in range(1, most + 1) if _consistent(figures, c)), None)


def _class_figures(attacks: dict, k: int) -> list[dict]:
    return [by_name[name]["per_class"][k] for by_name in attacks.values() for name in sorted(by_name)
            if by_name[name]["per_class"][k] is not None]


def test_the_attack_figures_give_no_class_size_back(clean):
    evaluation, report = clean
    inputs = evaluation.inputs
    private, test = inputs.private, inputs.test
    sizes = np.bincount(private.labels, minlength=inputs.classes)
    assert (sizes < np.bincount(test.labels, minlength=inputs.classes)).all()  # the few-shot case
    # The old split: every private row of a class, and as many of its test rows.
    members = np.flatnonzero(np.isin(private.labels, np.arange(inputs.classes)))
    non_members = np.concatenate([np.flatnonzero(test.labels == k)[:sizes[k]] for k in range(inputs.classes)])
    old = membership_attacks(private.samples[members], test.samples[non_members], inputs.synthetic.samples,
                             reference=inputs.public, rng=np.random.default_rng(17), classes=inputs.classes,
                             member_labels=private.labels[members], non_member_labels=test.labels[non_members],
                             dims=3, resamples=30)
    old_shared = {"pixel": {name: result.to_shared_json() for name, result in old.items()}}
    assert [smallest_member_count(_class_figures(old_shared, k)) for k in range(inputs.classes)] == sizes.tolist()

    shipped = json.loads((report / "evaluation.json").read_text(encoding="utf-8"))["privacy"]["attacks"]
    recovered = [smallest_member_count(_class_figures(shipped, k)) for k in range(inputs.classes)]
    assert not any(found == size for found, size in zip(recovered, sizes.tolist())), (recovered, sizes)


def _judged(root: Path, source: Path, settings, *, drop: int) -> Path:
    """The fake run ``source`` copied under ``root``, judged against its private set with ``drop`` images fewer in
    the first class; its report folder."""
    root = Path(shutil.copytree(source.parent, root))
    run = root / "run"
    config = (run / "config.yaml").read_text(encoding="utf-8")
    (run / "config.yaml").write_text(config.replace(str(source.parent), str(root)), encoding="utf-8")
    first = sorted((root / "data" / "private").iterdir())[0]
    for image in sorted(first.iterdir())[:drop]:
        image.unlink()
    shutil.rmtree(run / "report", ignore_errors=True)
    return write_report(evaluate_fake(run, settings))


@pytest.fixture(scope="module")
def smaller(tmp_path_factory, tiny_run, tiny_settings):
    """The report of the same run judged against a private set three images smaller."""
    return _judged(tmp_path_factory.mktemp("smaller") / "root", tiny_run, tiny_settings, drop=3)


def test_no_shipped_figure_follows_the_private_set_beyond_rounding(clean, smaller):
    from test_shipped_figures import _bench_cli

    _, report = clean
    one, other = (json.loads((folder / "evaluation.json").read_text(encoding="utf-8")) for folder in (report, smaller))
    assert [str(v) for v in dependence_violations(one, other, file="evaluation.json")] == []
    assert [str(v) for v in _bench_cli().against(report, smaller)] == []  # the command line's check: every file
    for space in ("search", "independent"):
        assert one["distribution"][space]["synthetic"] == other["distribution"][space]["synthetic"]
    assert one["privacy"]["attacks"] != other["privacy"]["attacks"]  # the check compared private-derived figures


class _BatchSensitiveEncoder:
    """Features whose last bits move with the size of the job they are computed in, as a batched encoder's floats
    move with its batches' boundaries (the frozen copy's fixed-size calls at the demo's 128 px)."""

    def encode_both(self, images, *, batch_size, progress):
        base = images.reshape(len(images), -1).astype(np.float64).mean(axis=1, keepdims=True)
        features = np.hstack([base, base ** 0.5]) * (1.0 + 1e-9 * (len(images) % 7))
        return features, features.astype(np.float32)


def test_private_images_never_share_an_encoding_job_with_the_shipped_ones():
    from pcevolve.evaluation.evaluate import search_space_features

    rng = np.random.default_rng(0)
    synthetic, test = rng.integers(0, 255, (40, 8, 8), dtype=np.uint8), rng.integers(0, 255, (36, 8, 8), np.uint8)
    features = [search_space_features(_BatchSensitiveEncoder(), synthetic, rng.integers(0, 255, (n, 8, 8), np.uint8),
                                      test, {"batch_size": 16, "progress": False}) for n in (14, 21, 29)]
    for name in ("synthetic", "test"):
        assert all(np.array_equal(features[0][name], other[name]) for other in features[1:]), name
