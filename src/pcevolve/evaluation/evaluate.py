"""``evaluate_run``: judge a finished run on utility, distribution and privacy, class by class.

The steps, each timed and shown on one progress bar:

1. Read the run and the real data (:mod:`~pcevolve.evaluation.inputs`).
2. Features: the independent evaluator (EfficientNet-Lite2, pooled) of every set, and the
   search's own encoder (``RUN/encoder``, projected) of a fixed subset of the synthetic set,
   the private and the test images (:mod:`~pcevolve.evaluation.features`).
3. Utility (:mod:`~pcevolve.evaluation.utility`): CNN and linear probe per line, tested on the
   whole test folder.
4. Distribution: MMD² (RBF, median bandwidth), sliced Wasserstein and Fréchet distance to the
   test set in both spaces, overall and per class; the private images against the same test
   set with the same bandwidth give the scale ("as close as real data is").
5. Membership attacks: DCR and DOMIAS in pixel space and in the independent space. Members
   are the private images; non-members as many test images of each class (seeded choice).
   The non-members also stay in the utility test set: the attacks score them against the
   synthetic set only and the utility models never train on them, so neither number leaks into
   the other, and the utility test set stays the whole folder, comparable with the seed's.
   DOMIAS's reference density comes from the public pool.
6. Copy check: nearest private image of every synthetic one, in pixels.
7. Per-class table and the troubleshooting hints (:mod:`~pcevolve.evaluation.hints`).

The attack and copy statistics read private data directly: they are evaluation inside the
secure zone, not DP releases, and the report says so. What the shared report carries of them, and of the few-shot
lines trained on the private images, is rounded (:mod:`~pcevolve.evaluation.shipped`: rates, AUCs and accuracies to
2 decimals, distances to 3 significant figures and at most 3 decimals), with no private-to-private distance, no
member or copy count and every folder by its name only; :meth:`RunEvaluation.to_secure_json` holds them exactly.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from pcevolve.config import RunConfig
from pcevolve.encoders import ImageEncoder
from pcevolve.evaluation.attacks import FPR_LEVELS, MembershipAttack, dp_tpr_bound, membership_attacks
from pcevolve.evaluation.copies import (
    NEAR_COPY_RMS,
    CopyCheck,
    copy_check,
    near_copy_threshold,
)
from pcevolve.evaluation.distribution import (
    PerClassValue,
    distribution_metrics,
    median_bandwidth,
)
from pcevolve.evaluation.features import (
    INDEPENDENT_BACKBONE,
    independent_encoder,
    pooled_features,
    projected_features,
    search_encoder,
)
from pcevolve.evaluation.hints import Hint, RunChoices, troubleshooting_hints
from pcevolve.evaluation.inputs import (
    EvaluationError,
    RunInputs,
    audit_json,
    ledger_json,
    load_run_inputs,
)
from pcevolve.evaluation.settings import EvaluationSettings
from pcevolve.evaluation.shipped import path_name, shared_distance, shared_estimate, shared_rate
from pcevolve.evaluation.utility import (
    LINE_LABELS,
    PRIVATE_LINES,
    LineRecipe,
    TrainingSet,
    UtilityResult,
    comparisons,
    evaluate_lines,
    thread_limit,
)
from pcevolve.progress import progress_bar

EVALUATION_FORMAT = "pcevolve.evaluation"
# 2: private counts as DP estimates; exact ones in secure/. 3: private-derived figures rounded (evaluation.shipped),
# copy counts as whether there are any, no private-to-private distance, every folder by its name only.
EVALUATION_VERSION = 3

#: The original method's reported figures. It does not say whether its percentages are points or relative.
SEED_FIGURES: dict[str, Any] = {
    "delta_over_fewshot": {"value": 17.8, "unit": "%", "text": "+17.8%"},
    "gap_to_full": {"value": 4.2, "unit": "points", "text": "4.2 points"},
    "synthetic_aug_over_fewshot": {"value": 24.6, "unit": "%", "text": "+24.6%"},
    "attack_success": {"value": 0.512, "unit": "fraction", "text": "51.2%"},
}
ATTACK_SPACES = ("pixel", "independent")
FEATURE_SPACES = ("search", "independent")
#: Sets of :attr:`RunEvaluation.distribution` that are the private images (their distances are rounded to ship).
PRIVATE_SETS = frozenset({"fewshot"})
#: Comparisons of :func:`~pcevolve.evaluation.utility.comparisons` with a line trained on the private images.
PRIVATE_COMPARISONS = ("delta_over_fewshot", "synthetic_aug_over_fewshot")


@dataclass
class RunEvaluation:
    """Every result of :func:`evaluate_run`, with the arrays the report draws from.

    Attributes:
        inputs: What was read (the report's sample grids and its no-private-image check use it).
        settings: The settings used.
        utility: One result per (line, model).
        distribution: ``space → set → metric → PerClassValue``; set ``"synthetic"`` (ours) or ``"fewshot"``.
        attacks: ``space → attack → MembershipAttack``.
        copies: Nearest private image of every synthetic one (pixels).
        member_count: Members (= non-members) in the attacks.
        hints: The troubleshooting rules, each with its numbers and whether it fired.
        seconds: Time of each step.
    """

    inputs: RunInputs
    settings: EvaluationSettings
    utility: list[UtilityResult]
    distribution: dict[str, dict[str, dict[str, PerClassValue]]]
    attacks: dict[str, dict[str, MembershipAttack]]
    copies: CopyCheck
    member_count: int
    hints: list[Hint] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    # ------------------------------------------------------------------ views

    @property
    def epsilon(self) -> float:
        return self.inputs.ledger.spent()

    @property
    def delta(self) -> float:
        return self.inputs.ledger.delta

    @property
    def near_copy_threshold(self) -> float:
        return near_copy_threshold(self.inputs.synthetic.samples.shape[1:])

    @property
    def pixel_scale(self) -> float:
        """√(values per image): divides a Euclidean pixel distance into an RMS difference in grey levels."""
        return math.sqrt(float(np.prod(self.inputs.synthetic.samples.shape[1:])))

    def result(self, key: str, model: str) -> UtilityResult | None:
        return next((r for r in self.utility if r.key == key and r.model == model), None)

    def accuracies(self, model: str, *, exact: bool = True) -> dict[str, float]:
        """Test accuracy of every line of ``model``; with ``exact=False`` those of the lines trained on the private
        images as a shared report carries them (:func:`~pcevolve.evaluation.shipped.shared_rate`)."""
        return {r.key: _private_rate(r.key, r.metrics.accuracy, exact) for r in self.utility if r.model == model}

    def comparisons(self, model: str, *, exact: bool = True) -> dict[str, Any]:
        """:func:`~pcevolve.evaluation.utility.comparisons` of ``model``'s lines. With ``exact=False`` as a shared
        report carries them: from the rounded accuracies of the private lines (an exact difference with an exact
        accuracy of ours would give theirs back), each comparison with such a line to a tenth of a point."""
        out = comparisons(self.accuracies(model, exact=exact))
        if not exact:
            for key in PRIVATE_COMPARISONS:
                if out[key] is not None:
                    out[key] = {name: None if v is None else round(v, 1) for name, v in out[key].items()}
        return out

    def strongest_attack(self) -> tuple[str, str, MembershipAttack]:
        """(space, attack, result) of the attack with the highest overall success."""
        return max(((space, name, result) for space, by_name in self.attacks.items()
                    for name, result in by_name.items()), key=lambda item: item[2].overall.success.value)

    def exceeds_dp_bound(self) -> bool:
        return any(bool(r.overall.exceeds_dp_bound) for by_name in self.attacks.values() for r in by_name.values())

    def headline(self, *, exact: bool = False) -> dict[str, Any]:
        """Ours vs the reference lines vs the seed's figures (CNN is the primary model).

        As a shared report carries it, unless ``exact`` (for ``secure/``): the scores of the lines trained on the
        private images, the comparisons with them (:meth:`comparisons`) and the strongest attack's success rounded.
        """
        lines = {}
        for key in LINE_LABELS:
            cnn, probe = self.result(key, "cnn"), self.result(key, "probe")
            if cnn is None and probe is None:
                continue
            lines[key] = {"label": LINE_LABELS[key], "reference_only": key in PRIVATE_LINES,
                          "cnn_accuracy": None if cnn is None else _private_rate(key, cnn.metrics.accuracy, exact),
                          "cnn_macro_f1": None if cnn is None else _private_rate(key, cnn.metrics.macro_f1, exact),
                          "probe_accuracy": (None if probe is None
                                             else _private_rate(key, probe.metrics.accuracy, exact)),
                          "probe_macro_f1": (None if probe is None
                                             else _private_rate(key, probe.metrics.macro_f1, exact))}
        space, attack, strongest = self.strongest_attack()
        success = strongest.overall.success.to_json()
        return {"primary_model": "cnn", "lines": lines,
                "comparisons": {"cnn": self.comparisons("cnn", exact=exact),
                                "probe": self.comparisons("probe", exact=exact)},
                "attack_success": {"space": space, "attack": attack,
                                   **(success if exact else shared_estimate(success))},
                "epsilon": self.epsilon, "delta": self.delta, "seed": SEED_FIGURES}

    def per_class(self, *, exact: bool = False) -> list[dict[str, Any]]:
        """One row per class, worst first (lowest CNN accuracy of ours); the first row has ``worst: True``.

        As a shared report carries it, unless ``exact`` (for ``secure/``): the few-shot accuracy and the attack's
        success and AUC rounded (:func:`~pcevolve.evaluation.shipped.shared_rate`), the median distance to the
        nearest private image too (:func:`~pcevolve.evaluation.shipped.shared_distance`), and whether the class has
        a near copy (``any_near_copy``) instead of how many (``near_copies``).
        """
        names = self.inputs.class_names
        ours_cnn, fewshot_cnn = self.result("synthetic", "cnn"), self.result("fewshot", "cnn")
        ours_probe = self.result("synthetic", "probe")
        labels = self.inputs.synthetic.labels
        rate, distance = (_as_is, _as_is) if exact else (shared_rate, shared_distance)
        rows = []
        for k, name in enumerate(names):
            attacks = [(f"{space}/{attack}", result.per_class[k]) for space, by_name in self.attacks.items()
                       for attack, result in by_name.items() if result.per_class and result.per_class[k] is not None]
            best = max(attacks, key=lambda item: item[1].success.value, default=None)
            nearest = self.copies.nearest_distance[labels == k]
            near = int((nearest <= self.near_copy_threshold).sum())
            rows.append({
                "class": name, "label": k, "synthetic": int((labels == k).sum()),
                "cnn_accuracy": _value(ours_cnn.metrics.per_class_accuracy[k]) if ours_cnn else None,
                "cnn_accuracy_fewshot": (rate(_value(fewshot_cnn.metrics.per_class_accuracy[k])) if fewshot_cnn
                                         else None),
                "probe_accuracy": _value(ours_probe.metrics.per_class_accuracy[k]) if ours_probe else None,
                **{f"mmd_{space}": _value(self.distribution[space]["synthetic"]["mmd_rbf"].per_class[k])
                   for space in FEATURE_SPACES if space in self.distribution},
                "attack_success": None if best is None else rate(best[1].success.value),
                "attack_auc": None if best is None else rate(best[1].auc.value),
                "attack": None if best is None else best[0],
                "nearest_private_rms_median": (distance(float(np.median(nearest)) / self.pixel_scale) if nearest.size
                                               else None),
                **({"near_copies": near} if exact else {"any_near_copy": near > 0}),
            })
        rows.sort(key=lambda row: (math.inf if row["cnn_accuracy"] is None else row["cnn_accuracy"], row["label"]))
        for position, row in enumerate(rows):
            row["worst"] = position == 0
        return rows

    def member_estimates(self) -> list[int] | None:
        """Members per class as a shared report states them: min(DP count, test images) per class.

        The attacks use min(exact count, test images) members per class; the exact number is not DP,
        so what leaves the secure zone is this estimate from the release (post-processing).
        """
        dp = self.inputs.dp_private_counts()
        if dp is None:
            return None
        test = np.bincount(self.inputs.test.labels, minlength=self.inputs.classes)
        return [int(min(d, t)) for d, t in zip(dp, test, strict=True)]

    def to_json(self) -> dict[str, Any]:
        """Every number of the evaluation that may leave the secure zone (``report/evaluation.json``).

        Exact private counts, member counts, copy counts, the attacks' ROC curves (their steps are 1/members), the
        private-to-private distances, the few-shot lines' step counts and confusion matrices, full paths and every
        timing are left out, and every other figure computed on the private images is rounded
        (:mod:`~pcevolve.evaluation.shipped`): :meth:`to_secure_json` has them exactly.
        """
        ledger = self.inputs.ledger
        copies = {**self.copies.to_shared_json(), "near_copy_threshold": self.near_copy_threshold,
                  "near_copy_rms": NEAR_COPY_RMS,
                  "any_near_copy": bool(self.copies.near_copies(self.near_copy_threshold).size),
                  "rms_scale": self.pixel_scale, "space": "pixels"}
        estimates = self.member_estimates()
        return {
            "format": EVALUATION_FORMAT, "version": EVALUATION_VERSION,
            "run": {"folder": path_name(self.inputs.folder), "name": self.inputs.config.name,
                    "seed": self.inputs.config.seed},
            "dp": ledger.is_dp,
            "settings": {**asdict(self.settings), "independent_backbone": INDEPENDENT_BACKBONE,
                         "search_backbone": self.inputs.config.representation.backbone,
                         "classic_augmentation_flip": self.inputs.config.augment.flip},
            "data": {**self.inputs.describe(),
                     "members_per_class_dp_estimate": estimates,
                     "non_members_from": "test folder (also in the utility test set)"},
            "headline": self.headline(),
            "utility": [_shareable_utility(r) for r in self.utility],
            "distribution": {space: {which: {metric: (value.to_shared_json() if which in PRIVATE_SETS
                                                      else value.to_json()) for metric, value in metrics.items()}
                                     for which, metrics in sets.items()}
                             for space, sets in self.distribution.items()},
            "privacy": {
                "caveat": PRIVATE_FIGURES_CAVEAT,
                "epsilon": self.epsilon, "delta": self.delta,
                # The run's bound, the same for every attack (a function of ε and δ only).
                "dp_tpr_bound": {str(level): dp_tpr_bound(level, self.epsilon, self.delta) for level in FPR_LEVELS},
                "attacks": {space: {name: result.to_shared_json() for name, result in by_name.items()}
                            for space, by_name in self.attacks.items()},
                "exceeds_dp_bound": self.exceeds_dp_bound(),
                "copies": copies,
            },
            "per_class": self.per_class(),
            "ledger": ledger_json(ledger, self.inputs.folder),
            "audit": audit_json(self.inputs.folder),
            "search": {"generations": len(self.inputs.generations),
                       "best_fitness": (max(r["engine"]["best_so_far"] for r in self.inputs.generations)
                                        if self.inputs.generations else None)},
            "hints": [hint.to_json() for hint in self.hints],
        }

    def to_secure_json(self) -> dict[str, Any]:
        """The exact private-derived figures a shared report leaves out or rounds, the full paths it names by their
        last part, and the timings (``secure/evaluation.json``)."""
        return {
            "format": EVALUATION_FORMAT + ".secure", "version": EVALUATION_VERSION,
            "paths": self.inputs.paths(),
            "private_per_class": self.inputs.exact_private_counts(),
            "members": self.member_count, "non_members": self.member_count,
            "headline": self.headline(exact=True),
            "utility": [r.to_json() for r in self.utility],
            "distribution": {space: {which: {metric: value.to_json() for metric, value in sets[which].items()}
                                     for which in PRIVATE_SETS if which in sets}
                             for space, sets in self.distribution.items()},
            "attacks": {space: {name: result.to_json(curve=True) for name, result in by_name.items()}
                        for space, by_name in self.attacks.items()},
            "copies": {**self.copies.to_json(),
                       "near_copies": int(self.copies.near_copies(self.near_copy_threshold).size)},
            "per_class": self.per_class(exact=True),
            "seconds": self.seconds,
        }


#: What a shared report must say about the figures in it that come from the private data.
PRIVATE_FIGURES_CAVEAT = (
    "Not covered by the DP guarantee: these figures are computed on the private images themselves, inside the "
    "secure zone — the few-shot real reference lines (models trained on the private images) and their "
    "per-class accuracies and distribution distances; every membership-attack result (success, AUC, TPR, per "
    "class); every copy-check figure (synthetic → nearest private distances, whether there are copies, the share "
    "closer than private images are to each other); and which synthetic images the sample grid leaves out as near "
    "copies. Read them as an audit of this run, not as released statistics. They are rounded (rates, AUCs and "
    "accuracies to two decimals, distances to three significant figures and at most three decimals), so that none "
    "gives a private count back. The private set's size is given by the run's noisy (DP) counts; the exact "
    "figures, exact counts, member and copy counts, the private images' distances to each other, the full data "
    "paths and the timings stay in the run's secure/evaluation.json."
)


def _shareable_utility(result: UtilityResult) -> dict[str, Any]:
    """A utility line without its timing. For a line trained on the private images also without its size and step
    count (they count the private images exactly) and its confusion matrix (its exact counts give the exact
    accuracy back), with its scores rounded by :func:`~pcevolve.evaluation.shipped.shared_rate`."""
    out = {k: v for k, v in result.to_json().items() if k != "seconds"}
    if result.key in PRIVATE_LINES:
        out.update({"steps": None, "train_size": None, "confusion": None,
                    **{key: shared_rate(out[key]) for key in ("accuracy", "top1_error", "macro_f1")},
                    "per_class_accuracy": {name: shared_rate(v) for name, v in out["per_class_accuracy"].items()}})
    return out


def _private_rate(line: str, value: float, exact: bool) -> float | None:
    """A score of ``line``: as it is, or, for a line trained on the private images unless ``exact``, rounded."""
    return value if exact or line not in PRIVATE_LINES else shared_rate(value)


def _as_is(value: float | None) -> float | None:
    return value


def _value(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def membership_split(private_labels: np.ndarray, test_labels: np.ndarray, *, classes: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Members (rows of the private set) and as many non-members (rows of the test set), class by class.

    Per class k, n_k = min(private of k, test of k) of each, chosen by ``rng`` and kept in their order.
    """
    members, non_members = [], []
    for k in range(classes):
        private_rows, test_rows = np.flatnonzero(private_labels == k), np.flatnonzero(test_labels == k)
        n = min(len(private_rows), len(test_rows))
        members.append(np.sort(rng.permutation(private_rows)[:n]))
        non_members.append(np.sort(rng.permutation(test_rows)[:n]))
    return np.concatenate(members).astype(np.int64), np.concatenate(non_members).astype(np.int64)


class _Steps:
    """One progress bar over the named steps, and the time of each."""

    def __init__(self, total: int, progress: bool) -> None:
        # No time-left estimate: the steps range from seconds to minutes, so one extrapolated from them misleads.
        self.bar = progress_bar(total, "evaluate", "step", enabled=progress, estimate=False)
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        self.bar.set_postfix_str(name)
        started = time.perf_counter()
        yield
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def evaluate_run(run_dir: str | os.PathLike[str], test_dir: str | os.PathLike[str],
                 full_dir: str | os.PathLike[str] | None = None, *,
                 settings: EvaluationSettings = EvaluationSettings(), progress: bool = False) -> RunEvaluation:
    """Judge a finished run on utility, distribution and privacy (see the module docstring).

    Args:
        run_dir: The run folder.
        test_dir: Real held-out images, one folder per class (the judge).
        full_dir: Optional full real training set for the upper reference line.
        settings: Sizes and recipes.
        progress: Show a progress bar over the steps (and the encoders' bars).

    Raises:
        EvaluationError: The run or a data folder is missing or unreadable (one line naming the path).
    """
    started = time.perf_counter()
    s = settings
    steps = _Steps(total=9, progress=progress)
    with thread_limit(s.threads):
        try:
            with steps.step("read data"):
                inputs = load_run_inputs(run_dir, test_dir, full_dir, full_max=s.full_max,
                                         public_max=s.public_max, seed=s.seed)
                if inputs.public is None:
                    raise EvaluationError(f"run {inputs.folder} has no public pool (data.public); the density "
                                          "attack needs one as its reference")
            evaluation = _evaluate(inputs, s, steps, progress)
        finally:
            steps.close()
    evaluation.seconds = {**steps.seconds, "total": time.perf_counter() - started}
    return evaluation


def _projected_together(encoder: ImageEncoder, parts: dict[str, np.ndarray], options: dict[str, Any]
                        ) -> dict[str, np.ndarray]:
    """:func:`projected_features` of each part, computed as one job and split back: small sets encoded together
    are large enough for the encoder's bulk path (:mod:`pcevolve.encoders.bulk`); at the demo's 128 px that halved
    the step (109 s → 57 s). The independent encoder's sets gained nothing measurable that way (57 → 58 s)."""
    joined = projected_features(encoder, np.concatenate(list(parts.values())), **options)
    ends = np.cumsum([len(images) for images in parts.values()])[:-1]
    return dict(zip(parts, np.split(joined, ends), strict=True))


def _evaluate(inputs: RunInputs, s: EvaluationSettings, steps: _Steps, progress: bool) -> RunEvaluation:
    classes, names = inputs.classes, inputs.class_names
    synthetic, private, test, full = inputs.synthetic, inputs.private, inputs.test, inputs.full
    assert inputs.public is not None
    encode = {"batch_size": s.batch_size, "progress": progress}
    rng = np.random.default_rng([s.seed, 11])
    dist_rows = _seeded_rows(rng, len(synthetic.labels), s.distribution_max)
    # The distances need no more test images than synthetic ones; the CNNs, probes and attacks take them all.
    test_rows = _seeded_rows(rng, len(test.labels), s.distribution_max)

    encode_threads = s.encode_threads or _usable_cores()
    with steps.step("independent features"), thread_limit(encode_threads):
        independent = independent_encoder(input_size=s.independent_input_size)
        ind = {"synthetic": pooled_features(independent, synthetic.samples, **encode),
               "private": pooled_features(independent, private.samples, **encode),
               "test": pooled_features(independent, test.samples, **encode),
               "public": pooled_features(independent, inputs.public[_spread(len(inputs.public), s.public_features)],
                                         **encode)}
        if full is not None:
            ind["full"] = pooled_features(independent, full.samples, **encode)
        del independent
    with steps.step("search-encoder features"), thread_limit(encode_threads):
        searched = search_encoder(inputs.folder)
        own = _projected_together(searched, {"synthetic": synthetic.samples[dist_rows], "private": private.samples,
                                             "test": test.samples[test_rows]}, encode)
        del searched

    flip = inputs.config.augment.flip
    lines = [TrainingSet("synthetic", synthetic.samples, synthetic.labels, ind["synthetic"]),
             TrainingSet("synthetic_aug", synthetic.samples, synthetic.labels, None, augment=True),
             TrainingSet("fewshot", private.samples, private.labels, ind["private"]),
             TrainingSet("fewshot_aug", private.samples, private.labels, None, augment=True)]
    if full is not None:
        lines.append(TrainingSet("full", full.samples, full.labels, ind["full"]))
    recipe = LineRecipe(test.samples, test.labels, ind["test"], class_names=names, epochs=s.cnn_epochs,
                        seed=s.seed, flip=flip, folds=s.probe_folds)
    with steps.step("CNNs and linear probes"):
        utility = evaluate_lines(lines, recipe, workers=s.workers, threads=s.threads)

    with steps.step("distribution"):
        distribution = {}
        for space, features in (("search", own), ("independent", {**ind, "synthetic": ind["synthetic"][dist_rows],
                                                                   "test": ind["test"][test_rows]})):
            distribution[space] = _distances(features, synthetic.labels[dist_rows], private.labels,
                                             test.labels[test_rows],
                                             classes=classes, seed=s.seed, projections=s.projections)

    members, non_members = membership_split(private.labels, test.labels, classes=classes,
                                            rng=np.random.default_rng([s.seed, 13]))
    ledger = inputs.ledger
    attack_rng = np.random.default_rng([s.seed, 17])
    options = {"member_labels": private.labels[members], "non_member_labels": test.labels[non_members],
               "classes": classes, "dims": s.domias_dims, "resamples": s.resamples, "epsilon": ledger.spent(),
               "delta": ledger.delta, "rng": attack_rng}
    with steps.step("attacks (pixels)"):
        attacks = {"pixel": membership_attacks(private.samples[members], test.samples[non_members], synthetic.samples,
                                               reference=inputs.public, **options)}
    with steps.step("attacks (independent)"):
        attacks["independent"] = membership_attacks(ind["private"][members], ind["test"][non_members],
                                                    ind["synthetic"], reference=ind["public"], **options)
    with steps.step("copy check"):
        copies = copy_check(synthetic.samples, private.samples)

    evaluation = RunEvaluation(inputs=inputs, settings=s, utility=utility, distribution=distribution,
                               attacks=attacks, copies=copies, member_count=int(len(members)))
    with steps.step("hints"):
        evaluation.hints = _hints(evaluation)
    return evaluation


def _usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform tells it)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _seeded_rows(rng: np.random.Generator, count: int, most: int) -> np.ndarray:
    """At most ``most`` of ``count`` row indices, drawn without replacement, in order."""
    return np.sort(rng.choice(count, min(most, count), replace=False))


def _spread(count: int, most: int) -> np.ndarray:
    """At most ``most`` evenly spaced row indices out of ``count`` (the rows are already a seeded random subset)."""
    return np.unique(np.linspace(0, count - 1, min(count, most)).round().astype(np.int64))


def _distances(features: dict[str, np.ndarray], synthetic_labels: np.ndarray, private_labels: np.ndarray,
               test_labels: np.ndarray, *, classes: int, seed: int,
               projections: int) -> dict[str, dict[str, PerClassValue]]:
    """Ours and the few-shot real images against the test set, on one MMD bandwidth and one set of directions."""
    bandwidth = median_bandwidth(features["synthetic"], features["test"])
    out = {}
    for which, labels in (("synthetic", synthetic_labels), ("fewshot", private_labels)):
        source = features["synthetic" if which == "synthetic" else "private"]
        out[which] = distribution_metrics(source, labels, features["test"], test_labels, classes=classes,
                                          rng=np.random.default_rng([seed, 19]), projections=projections,
                                          bandwidth=bandwidth)
    return out


def _hints(evaluation: RunEvaluation) -> list[Hint]:
    _, _, strongest = evaluation.strongest_attack()
    # The accuracy rule reads the comparison as the report shows it, so that what it says agrees with the report;
    # the privacy rules read the exact figures (:func:`troubleshooting_hints` rounds what it shows of them).
    accuracy = evaluation.accuracies("cnn", exact=False)
    comparison = evaluation.comparisons("cnn", exact=False)["delta_over_fewshot"]
    mmd = evaluation.distribution.get("independent", {})
    return troubleshooting_hints(
        attack_success=strongest.overall.success.value, exceeds_dp_bound=evaluation.exceeds_dp_bound(),
        near_copies=int(evaluation.copies.near_copies(evaluation.near_copy_threshold).size),
        close_share=evaluation.copies.closer_than_private_fraction(),
        delta_points=None if comparison is None else comparison["points"],
        mmd_ours=mmd["synthetic"]["mmd_rbf"].overall if mmd else None,
        mmd_fewshot=mmd["fewshot"]["mmd_rbf"].overall if mmd else None, fewshot_accuracy=accuracy.get("fewshot"),
        choices=run_choices(evaluation.inputs.config, evaluation.inputs.dp_counts))


def run_choices(config: RunConfig, dp_counts: np.ndarray | None) -> RunChoices:
    """What the accuracy advice looks at: the settings and the released (noisy) class sizes."""
    return RunChoices(decoder=config.decoder.name, class_means=config.search.class_means,
                      release_share=config.privacy.split["release"],
                      typical_count=None if dp_counts is None else float(np.median(dp_counts)))
