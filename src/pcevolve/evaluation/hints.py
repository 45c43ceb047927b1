"""The report's troubleshooting rules (what to change when a number is poor), applied to an evaluation's numbers.

Each rule has a documented trigger; the report lists every rule with its value and says which
fired. Thresholds:

=====================  ==========================================================================
rule                   fires when
=====================  ==========================================================================
``attack``             some attack's best-threshold success > :data:`ATTACK_SUCCESS_LIMIT` (60%)
``copies``             a synthetic image is a near copy of a private one (RMS difference ≤
                       ``copies.NEAR_COPY_RMS``), or more than :data:`CLOSE_SHARE_LIMIT` (5%) of
                       synthetic images sit closer to a private image than the 1st percentile of
                       private-to-private distances (fresh real data: about 1%)
``accuracy``           the CNN trained on the synthetic set is not better than the few-shot real
                       reference (Δ ≤ 0 points), unless that reference already scores at least
                       :data:`SATURATED_ACCURACY` (99%): then no training set could do better
``distance_attack``    the synthetic set is at least as close to the real test set as the private
                       images are (independent-space MMD², ours ≤ few-shot real) yet some attack's
                       success exceeds :data:`ATTACK_SUCCESS_WATCH` (55%), or an attack's TPR
                       beats the ε-DP bound
=====================  ==========================================================================

The ``accuracy`` rule's advice names only the changes that helped on our image benchmark and that the run has not
made (:func:`accuracy_changes`: its settings and its released, noisy class sizes), so a run that already has them
is not told to make them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pcevolve.evaluation.shipped import shared_distance, shared_rate, shown_distance

ATTACK_SUCCESS_LIMIT = 0.60
ATTACK_SUCCESS_WATCH = 0.55
CLOSE_SHARE_LIMIT = 0.05
#: A few-shot real accuracy from which "no better than the private images" says nothing about the synthetic set.
SATURATED_ACCURACY = 0.99

ADVICE = {
    "attack": "A membership attack tells the private images from unseen real ones more than 60% of the time (50% is "
              "chance), so the synthetic set gives away who was in the private data. Lower privacy.epsilon or run "
              "fewer search generations (search.generations), and run again. Do not delete the synthetic images "
              "that sit closest to private ones: choosing them by comparing with the private images is outside the "
              "guarantee. On a few hundred private images an attack's success also varies by chance (see its "
              "interval).",
    "copies": "Some synthetic images look identical to private ones (near copies), or too many sit unusually close "
              "to one. {remedy}",
    "accuracy": "The synthetic set trains the CNN no better than the few private images alone (which cannot be "
                "shared). What limits it is usually its labels (which class each delivered sample is given), not "
                "the noise. {changes} Check the delivered samples of the worst class in the report: if many show "
                "another class, the public pool may lack this one.",
    "distance_attack": "The synthetic set is as close to the real data as the private images themselves, yet an "
                       "attack still picks out private images (or does better than the ε-DP guarantee allows), so "
                       "the set follows the private images too closely. Use milder augmentation (lower "
                       "augment.strength) and check the privacy ledger: every release charged, the total ε as "
                       "intended.",
}


#: What to change about near copies, for each image decoder (``decoder.name``).
COPY_REMEDIES = {
    "conv": "With the generator decoder (decoder.name: conv), let the search use fewer principal directions (lower "
            "search.basis_dim) or train the decoder with more noise on its input (raise decoder.feature_noise).",
    "pixel-view": "With decoder.name: pixel-view, keep fewer of the image's spatial frequencies (lower "
                  "search.pixel_frequencies).",
    "nearest-public": "With decoder.name: nearest-public every delivered image is an image of your public pool, so "
                      "one that looks like a private image was public already, and which images were chosen is "
                      "covered by the privacy guarantee. Look at them before sharing the set: if a private image "
                      "(or a copy of it, resized or re-saved) is in the public pool, the pool's source is not "
                      "public; run again with a pool from another source (taking the image out of this pool would "
                      "make the pool depend on the private set, which the guarantee does not cover).",
}


def copies_advice(decoder: str | None = None) -> str:
    """The copy rule's advice for the run's decoder (every decoder's remedy when it is unknown)."""
    remedy = COPY_REMEDIES.get(decoder or "", " ".join(COPY_REMEDIES.values()))
    return ADVICE["copies"].format(remedy=remedy)


#: Noisy class sizes up to which class means from votes beat noisy sums on our image benchmark (votes won at 10
#: private images per class, sums at 100; measured in docs/search.md §8).
VOTES_UP_TO = 30


@dataclass(frozen=True)
class RunChoices:
    """What the accuracy advice looks at: the run's settings and its released (noisy) class sizes — nothing the
    DP release does not already publish.

    Attributes:
        decoder: ``decoder.name``.
        class_means: ``search.class_means``.
        release_share: ``privacy.split``'s share for the release.
        typical_count: The median noisy class size of the release; None if unknown.
    """

    decoder: str
    class_means: str
    release_share: float
    typical_count: float | None = None


def accuracy_changes(choices: RunChoices | None) -> list[str]:
    """The changes that helped the accuracy on our image benchmark and that the run has not made (all of them
    without ``choices``)."""
    changes = []
    if choices is None or choices.decoder != "nearest-public":
        changes.append("a public pool that holds examples of your classes (unlabelled is fine) with decoder.name: "
                       "nearest-public")
    small = choices is None or choices.typical_count is None or choices.typical_count <= VOTES_UP_TO
    if choices is None or (small and choices.class_means != "votes"):
        changes.append("with about ten private samples per class, search.class_means: votes")
    elif not small and choices.class_means == "votes":
        changes.append(f"with classes of about {choices.typical_count:.0f} samples (the released, noisy sizes), "
                       "search.class_means: sums — votes won only for classes of about ten")
    if choices is None or choices.release_share < 1.0:
        changes.append("keeping the whole budget on the release (privacy.split: {release: 1.0}) — a share for "
                       "fine-tuning the encoder on the private images cost 2-3 accuracy points there")
    return changes


def accuracy_advice(choices: RunChoices | None = None) -> str:
    """The accuracy rule's advice: :func:`accuracy_changes`, or, when the run has made them all, what is left."""
    missing = accuracy_changes(choices)
    if missing:
        changes = "What helped on our image benchmark: " + "; ".join(missing) + "."
    else:
        changes = ("This run already has the settings that helped most on our image benchmark. There the labels "
                   "that stayed wrong were of classes that look alike, and of public images of a look-alike class "
                   "your private data does not have, delivered under one of your labels.")
    return ADVICE["accuracy"].format(changes=changes)


@dataclass(frozen=True)
class Hint:
    """One troubleshooting rule with the numbers it looked at."""

    rule: str
    fired: bool
    observed: str
    threshold: str
    advice: str

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "fired": self.fired, "observed": self.observed, "threshold": self.threshold,
                "advice": self.advice}


def troubleshooting_hints(*, attack_success: float, exceeds_dp_bound: bool, near_copies: int,
                          close_share: float, delta_points: float | None, mmd_ours: float | None,
                          mmd_fewshot: float | None, fewshot_accuracy: float | None = None,
                          choices: RunChoices | None = None) -> list[Hint]:
    """Evaluate the four troubleshooting rules.

    Each rule fires on the values given. What a hint shows of a figure computed on the private images is rounded as
    a shared report carries it (:mod:`~pcevolve.evaluation.shipped`): the attack success and the close share to
    whole percents, the few-shot MMD² by :func:`~pcevolve.evaluation.shipped.shared_distance`, the near copies only
    as whether there are any (a count of copies can be the private set's size); pass ``delta_points`` and
    ``fewshot_accuracy`` as the report shows them.

    Args:
        attack_success: The highest best-threshold success over all attacks.
        exceeds_dp_bound: Some attack's TPR lower bound is above the ε-DP bound.
        near_copies: Synthetic images within the near-copy threshold of a private image.
        close_share: Share of synthetic images closer to the private set than its own 1st-percentile NN distance.
        delta_points: CNN accuracy on synthetic minus on few-shot real, in points (None: unknown).
        mmd_ours, mmd_fewshot: Independent-space MMD² to the test set of the synthetic and the private images.
        fewshot_accuracy: CNN accuracy of the few-shot real reference (None: unknown).
        choices: The run's settings, so that the accuracy advice suggests only changes it has not made (None:
            all of them).
    """
    saturated = fewshot_accuracy is not None and fewshot_accuracy >= SATURATED_ACCURACY
    hints = [
        Hint("attack", attack_success > ATTACK_SUCCESS_LIMIT, f"best attack success {_percent(attack_success)}",
             f"> {ATTACK_SUCCESS_LIMIT:.0%}", ADVICE["attack"]),
        Hint("copies", near_copies > 0 or close_share > CLOSE_SHARE_LIMIT,
             f"{'some' if near_copies > 0 else 'no'} near copies; {_percent(close_share)} nearer a private image "
             "than 99% of private images are to another",
             f"any near copy, or > {CLOSE_SHARE_LIMIT:.0%} that near (fresh real data: about 1%)",
             copies_advice(None if choices is None else choices.decoder)),
        Hint("accuracy", delta_points is not None and delta_points <= 0.0 and not saturated,
             "unknown" if delta_points is None else f"Δ over few-shot real {delta_points:+.1f} points"
             + (f" (few-shot real already at {_percent(fewshot_accuracy)})" if saturated else ""),
             f"Δ ≤ 0 points, with few-shot real below {SATURATED_ACCURACY:.0%}", accuracy_advice(choices)),
    ]
    small = mmd_ours is not None and mmd_fewshot is not None and mmd_ours <= mmd_fewshot
    observed = ("unknown" if mmd_ours is None or mmd_fewshot is None else
                f"MMD² ours {mmd_ours:.4g} vs few-shot real {shown_distance(shared_distance(mmd_fewshot))}; "
                f"best attack {_percent(attack_success)}"
                + ("; an attack beats the ε-DP bound" if exceeds_dp_bound else ""))
    hints.append(Hint("distance_attack", (small and attack_success > ATTACK_SUCCESS_WATCH) or exceeds_dp_bound,
                      observed, "as close as the private images (MMD² ours ≤ few-shot) and success > "
                      f"{ATTACK_SUCCESS_WATCH:.0%}, or an attack's TPR above the ε-DP bound",
                      ADVICE["distance_attack"]))
    return hints


def _percent(rate: float | None) -> str:
    """A rate computed on the private images as a hint shows it: rounded to 2 decimals, i.e. a whole percent."""
    rounded = shared_rate(rate)
    return "unknown" if rounded is None else f"{rounded:.0%}"
