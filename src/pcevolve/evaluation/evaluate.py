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
   are private images and non-members test images, in counts that are public (the test set's
   class sizes, capped; :mod:`~pcevolve.evaluation.members`).
   The non-members also stay in the utility test set: the attacks score them against the
   synthetic set only and the utility models never train on them, so neither number leaks into
   the other, and the utility test set stays the whole folder, comparable with the seed's.
   DOMIAS's reference density comes from the public pool.
6. Copy check: nearest private image of every synthetic one, in pixels.
7. Per-class table and the troubleshooting hints (:mod:`~pcevolve.evaluation.hints`).

The attack and copy statistics read private data directly: they are evaluation inside the secure zone, not DP
releases; what of them a shared report may carry, and how rounded, is
:class:`~pcevolve.evaluation.run_evaluation.RunEvaluation`'s to say.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from pcevolve.config import RunConfig
from pcevolve.encoders import ImageEncoder
from pcevolve.evaluation.attacks import membership_attacks
from pcevolve.evaluation.copies import copy_check
from pcevolve.evaluation.distribution import (
    PerClassValue,
    distribution_metrics,
    median_bandwidth,
)
from pcevolve.evaluation.features import (
    independent_encoder,
    pooled_features,
    projected_features,
    search_encoder,
)
from pcevolve.evaluation.hints import Hint, RunChoices, troubleshooting_hints
from pcevolve.evaluation.inputs import (
    EvaluationError,
    RunInputs,
    load_run_inputs,
)
from pcevolve.evaluation.members import membership_split
from pcevolve.evaluation.run_evaluation import RunEvaluation
from pcevolve.evaluation.settings import EvaluationSettings
from pcevolve.evaluation.utility import (
    LineRecipe,
    TrainingSet,
    evaluate_lines,
    thread_limit,
)
from pcevolve.progress import progress_bar


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
    are large enough for the encoder's bulk path (:mod:`pcevolve.encoders.bulk`), which at the demo's 128 px makes
    the step far faster; the independent encoder's sets gain nothing measurable that way (both measured in
    docs/performance.md, "The evaluation").

    Only sets whose sizes are public may share a job: the batches' boundaries move with every set's size, and the
    floats of a batched encoder move with its batches, so a private set in the job would make the synthetic and
    test features — which ship unrounded — depend on the private set's size."""
    joined = projected_features(encoder, np.concatenate(list(parts.values())), **options)
    ends = np.cumsum([len(images) for images in parts.values()])[:-1]
    return dict(zip(parts, np.split(joined, ends), strict=True))


def search_space_features(encoder: ImageEncoder, synthetic: np.ndarray, private: np.ndarray, test: np.ndarray,
                          options: dict[str, Any]) -> dict[str, np.ndarray]:
    """The search encoder's features of the (thinned) synthetic and test images, encoded together, and of the private
    images, encoded in a job of their own (:func:`_projected_together`: never in one batch with the others)."""
    features = _projected_together(encoder, {"synthetic": synthetic, "test": test}, options)
    return {**features, "private": projected_features(encoder, private, **options)}


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
        own = search_space_features(searched, synthetic.samples[dist_rows], private.samples,
                                    test.samples[test_rows], encode)
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

    split = membership_split(private.labels, test.labels, classes=classes, rng=np.random.default_rng([s.seed, 13]))
    members, non_members = split.members, split.non_members
    ledger = inputs.ledger
    attack_rng = np.random.default_rng([s.seed, 17])
    options = {"member_labels": split.classes, "non_member_labels": split.classes, "member_groups": members,
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
