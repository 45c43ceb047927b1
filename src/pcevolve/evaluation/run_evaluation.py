"""``RunEvaluation``: every result of an image run's evaluation, and what of it may leave the secure zone.

:func:`~pcevolve.evaluation.evaluate.evaluate_run` fills it; its views (the headline, the per-class table, the
comparisons) and its two JSON forms are what the report draws from. The attack and copy statistics read private
data directly: they are evaluation inside the secure zone, not DP releases, and the report says so. What the shared
report carries of them (:meth:`RunEvaluation.to_json`), and of the few-shot lines trained on the private images, is
rounded (:mod:`~pcevolve.evaluation.shipped`: rates, AUCs and accuracies to 2 decimals, distances to 3 significant
figures and at most 3 decimals), with no private-to-private distance, no member or copy count and every folder by its
name only; :meth:`RunEvaluation.to_secure_json` holds them exactly.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from pcevolve.evaluation.attacks import FPR_LEVELS, MembershipAttack, dp_tpr_bound
from pcevolve.evaluation.copies import NEAR_COPY_RMS, CopyCheck, near_copy_threshold
from pcevolve.evaluation.distribution import PerClassValue
from pcevolve.evaluation.features import INDEPENDENT_BACKBONE
from pcevolve.evaluation.hints import Hint
from pcevolve.evaluation.inputs import RunInputs, audit_json, delivery_note, ledger_json
from pcevolve.evaluation.members import public_member_counts
from pcevolve.evaluation.settings import EvaluationSettings
from pcevolve.evaluation.shipped import path_name, shared_distance, shared_estimate, shared_rate
from pcevolve.evaluation.utility import (
    LINE_LABELS,
    PRIVATE_LINES,
    UtilityResult,
    comparisons,
)

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
FEATURE_SPACES = ("search", "independent")
#: Sets of :attr:`RunEvaluation.distribution` that are the private images (their distances are rounded to ship).
PRIVATE_SETS = frozenset({"fewshot"})
#: Comparisons of :func:`~pcevolve.evaluation.utility.comparisons` with a line trained on the private images.
PRIVATE_COMPARISONS = ("delta_over_fewshot", "synthetic_aug_over_fewshot")


@dataclass
class RunEvaluation:
    """Every result of :func:`~pcevolve.evaluation.evaluate.evaluate_run`, with the arrays the report draws from.

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

    def members_per_class(self) -> list[int]:
        """Members (and non-members) per class in the attacks: public, a function of the test set alone
        (:func:`~pcevolve.evaluation.members.public_member_counts`), so a shared report states them exactly."""
        return [int(m) for m in public_member_counts(self.inputs.test.labels, self.inputs.classes)]

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
        return {
            "format": EVALUATION_FORMAT, "version": EVALUATION_VERSION,
            "run": {"folder": path_name(self.inputs.folder), "name": self.inputs.config.name,
                    "seed": self.inputs.config.seed},
            "dp": ledger.is_dp,
            "settings": {**asdict(self.settings), "independent_backbone": INDEPENDENT_BACKBONE,
                         "search_backbone": self.inputs.config.representation.backbone,
                         "classic_augmentation_flip": self.inputs.config.augment.flip},
            "data": {**self.inputs.describe(),
                     "members_per_class": self.members_per_class(),
                     "non_members_from": "test folder (also in the utility test set)"},
            # How much of the public pool looked like the task (the delivery stage's own words), or None.
            "pool": delivery_note(self.inputs.folder, "pool"),
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
    "accuracies to two decimals, distances to three significant figures and at most three decimals), and the "
    "attacks play with public counts (as many members per class as the test set holds, drawn from the private "
    "images with replacement), so that none gives a private count back. The private set's size is given by the "
    "run's noisy (DP) counts; the exact figures, exact counts, copy counts, the private images' distances to each "
    "other, the full data paths and the timings stay in the run's secure/evaluation.json."
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
