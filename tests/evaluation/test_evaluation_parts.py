"""The evaluation's orchestration parts: member/non-member split, comparisons with the seed, R8.7 rules, thinning."""

from pathlib import Path

import numpy as np
import pytest

from pcevolve.data import LabeledDataset
from pcevolve.evaluation import membership_split, troubleshooting_hints
from pcevolve.evaluation.inputs import thin
from pcevolve.evaluation.utility import comparisons


def test_membership_split_counts_are_the_test_sets_and_members_are_drawn_from_their_class():
    private = np.array([0] * 5 + [1] * 3 + [2] * 0 + [1] * 2)
    test = np.array([0] * 2 + [1] * 6 + [2] * 4 + [0] * 2)
    split = membership_split(private, test, classes=3, rng=np.random.default_rng(0))
    # Per class the test set's count (4, 6, 4) of each, whatever the private set holds: public counts.
    assert np.bincount(split.classes, minlength=3).tolist() == [4, 6, 4]
    assert np.bincount(test[split.non_members], minlength=3).tolist() == [4, 6, 4]
    assert len(set(split.non_members.tolist())) == len(split.non_members)
    # Members of a class are its private rows, drawn with replacement (class 1 has 5 for 6 draws); an empty class
    # (2) draws from every private row, so that no count says it is empty.
    assert all(private[m] == k for m, k in zip(split.members, split.classes) if k != 2)
    assert (split.classes == 2).sum() == 4
    again = membership_split(private, test, classes=3, rng=np.random.default_rng(0))
    assert all(np.array_equal(a, b) for a, b in zip((split.members, split.non_members), (again.members,
                                                                                       again.non_members)))
    fewer = membership_split(private[1:], test, classes=3, rng=np.random.default_rng(0))
    assert np.array_equal(np.bincount(fewer.classes, minlength=3), np.bincount(split.classes, minlength=3))


def test_comparisons_by_hand():
    result = comparisons({"synthetic": 0.8, "fewshot": 0.6, "full": 0.9, "synthetic_aug": 0.75})
    assert result["delta_over_fewshot"]["points"] == pytest.approx(20.0)
    assert result["delta_over_fewshot"]["relative_percent"] == pytest.approx(100 * (0.8 / 0.6 - 1))
    assert result["gap_to_full"]["points"] == pytest.approx(10.0)
    assert result["gap_to_full"]["relative_percent"] == pytest.approx(12.5)
    assert result["synthetic_aug_over_fewshot"]["points"] == pytest.approx(15.0)
    assert comparisons({"synthetic": 0.8, "fewshot": 0.6})["gap_to_full"] is None


def _hints(**overrides):
    values = {"attack_success": 0.52, "exceeds_dp_bound": False, "near_copies": 0, "close_share": 0.01,
              "delta_points": 5.0, "mmd_ours": 0.02, "mmd_fewshot": 0.01}
    values.update(overrides)
    return {h.rule: h.fired for h in troubleshooting_hints(**values)}


def test_no_rule_fires_on_a_healthy_set():
    assert _hints() == {"attack": False, "copies": False, "accuracy": False, "distance_attack": False}


@pytest.mark.parametrize("overrides, rule", [
    ({"attack_success": 0.61}, "attack"),
    ({"near_copies": 1}, "copies"),
    ({"close_share": 0.06}, "copies"),
    ({"delta_points": 0.0}, "accuracy"),
    ({"delta_points": -3.0}, "accuracy"),
    ({"mmd_ours": 0.005, "attack_success": 0.56}, "distance_attack"),
    ({"exceeds_dp_bound": True}, "distance_attack"),
])
def test_each_rule_fires_past_its_threshold(overrides, rule):
    fired = _hints(**overrides)
    assert fired[rule]
    assert [name for name, on in fired.items() if on] == [rule]


def test_thresholds_are_strict_where_documented():
    assert not _hints(attack_success=0.60)["attack"]
    assert not _hints(close_share=0.05)["copies"]
    assert not _hints(mmd_ours=0.005, attack_success=0.55)["distance_attack"]
    assert not _hints(delta_points=None)["accuracy"]
    # Nothing can beat a reference that is already (almost) perfect: no advice to change anything.
    assert not _hints(delta_points=0.0, fewshot_accuracy=1.0)["accuracy"]
    assert not _hints(delta_points=-0.5, fewshot_accuracy=0.99)["accuracy"]
    assert _hints(delta_points=-0.5, fewshot_accuracy=0.985)["accuracy"]


def test_thin_keeps_order_and_is_seeded():
    data = LabeledDataset(samples=np.arange(20, dtype=np.uint8).reshape(20, 1, 1).repeat(2, 1).repeat(2, 2),
                          labels=np.arange(20) % 2, class_names=("a", "b"), modality="image",
                          sources=tuple(f"f{i}" for i in range(20)))
    a, b = thin(data, 7, np.random.default_rng(1)), thin(data, 7, np.random.default_rng(1))
    assert len(a.labels) == 7 and list(a.sources) == list(b.sources)
    assert list(a.sources) == sorted(a.sources, key=lambda s: int(s[1:]))
    assert thin(data, 50, np.random.default_rng(1)) is data


def test_models_trained_in_worker_processes_equal_those_trained_here():
    from pcevolve.evaluation.utility import LineRecipe, TrainingSet, evaluate_lines

    rng = np.random.default_rng(4)

    def line(key, n, features=True, augment=False):
        labels = np.arange(n) % 3
        images = (rng.random((n, 12, 12)) * 60 + labels[:, None, None] * 60).astype(np.uint8)
        feats = images.reshape(n, -1)[:, ::8].astype(np.float32) if features else None
        return TrainingSet(key, images, labels, feats, augment=augment)

    lines = [line("synthetic", 60), line("synthetic_aug", 60, features=False, augment=True), line("fewshot", 30)]
    test = line("fewshot", 45)
    recipe = LineRecipe(test.images, test.labels, test.features, class_names=("a", "b", "c"), epochs=2, seed=0,
                        flip=False, folds=2)
    here = evaluate_lines(lines, recipe, workers=1)
    there = evaluate_lines(lines, recipe, workers=2)
    assert [(r.key, r.model) for r in here] == [("synthetic", "cnn"), ("synthetic_aug", "cnn"), ("fewshot", "cnn"),
                                                ("synthetic", "probe"), ("fewshot", "probe")]
    assert [(r.key, r.model) for r in there] == [(r.key, r.model) for r in here]
    for a, b in zip(here, there):
        assert a.metrics.to_json() == b.metrics.to_json()


def test_the_accuracy_advice_suggests_only_changes_the_run_has_not_made():
    from pcevolve.evaluation.hints import RunChoices, accuracy_advice

    everything = accuracy_advice()
    assert "nearest-public" in everything and "class_means: votes" in everything and "release: 1.0" in everything
    demo_like = RunChoices(decoder="nearest-public", class_means="sums", release_share=1.0, typical_count=98.4)
    advice = accuracy_advice(demo_like)
    assert "nearest-public" not in advice and "class_means" not in advice and "privacy.split" not in advice
    assert "already has the settings" in advice
    few = accuracy_advice(RunChoices(decoder="conv", class_means="sums", release_share=0.625, typical_count=11.0))
    assert "nearest-public" in few and "class_means: votes" in few and "release: 1.0" in few
    many_votes = accuracy_advice(RunChoices(decoder="nearest-public", class_means="votes", release_share=1.0,
                                            typical_count=240.0))
    assert "class_means: sums" in many_votes and "about 240 samples" in many_votes
    unknown_size = accuracy_advice(RunChoices(decoder="nearest-public", class_means="votes", release_share=1.0))
    assert "class_means" not in unknown_size


def test_the_copy_rule_advises_only_the_runs_decoder():
    from pcevolve.evaluation.hints import RunChoices

    def advice(decoder):
        choices = None if decoder is None else RunChoices(decoder=decoder, class_means="sums", release_share=1.0)
        hints = troubleshooting_hints(attack_success=0.52, exceeds_dp_bound=False, near_copies=1, close_share=0.01,
                                      delta_points=5.0, mmd_ours=0.02, mmd_fewshot=0.01, choices=choices)
        copies = next(h for h in hints if h.rule == "copies")
        assert copies.fired
        return copies.advice

    retrieval = advice("nearest-public")
    assert "public pool" in retrieval and "basis_dim" not in retrieval and "pixel_frequencies" not in retrieval
    generator = advice("conv")
    assert "decoder.feature_noise" in generator and "public pool" not in generator
    assert all(remedy in advice(None) for remedy in ("feature_noise", "pixel_frequencies", "pool from another source"))
    assert "take it out of the pool" not in retrieval  # a pool edited by looking at the private set depends on it


def test_the_accuracy_rule_carries_the_runs_advice():
    from pcevolve.config import load_config
    from pcevolve.evaluation.evaluate import run_choices

    config = load_config(Path(__file__).parents[2] / "configs" / "demo.yaml")
    choices = run_choices(config, np.array([97.0, 101.0, 99.0]))
    assert (choices.decoder, choices.class_means, choices.release_share, choices.typical_count) == (
        "nearest-public", "sums", 1.0, 99.0)
    hints = troubleshooting_hints(attack_success=0.52, exceeds_dp_bound=False, near_copies=0, close_share=0.01,
                                  delta_points=-1.0, mmd_ours=0.02, mmd_fewshot=0.01, choices=choices)
    accuracy = next(h for h in hints if h.rule == "accuracy")
    assert accuracy.fired and "already has the settings" in accuracy.advice
