"""`evaluate_run` + `write_report` end to end on a tiny fake run folder, and the leaky set that must be flagged."""

import dataclasses
import json
import math
import re

import numpy as np
import pytest
import torch

import pcevolve.evaluation.evaluate as evaluate_module
from pcevolve.evaluation import evaluate_run
from pcevolve.report import PrivateSampleInReport, write_report

SECTIONS = ("Headline", "Per class (worst first)", "Troubleshooting", "Utility details", "Distribution",
            "Membership inference", "Copy check", "Privacy ledger", "Search: fitness curves", "Synthetic samples",
            "Settings and data")


def _evaluate(run, settings):
    data = run.parent / "data"
    return evaluate_run(run, data / "test", data / "full", settings=settings)


def test_report_folder_holds_every_file_and_section(clean):
    _, folder = clean
    html, markdown = (folder / "report.html").read_text(), (folder / "report.md").read_text()
    for title in SECTIONS:
        assert f"<h2>{title}</h2>" in html and f"## {title}" in markdown, title
    for name in ("samples", "roc_curves", "ledger", "fitness_curve", "per_class_accuracy", "copy_distances"):
        assert (folder / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert f"]({name}.png)" in markdown
    # Self-contained: every image inline, nothing fetched from anywhere.
    sources = re.findall(r'src="([^"]*)"', html)
    assert len(sources) == 6 and all(s.startswith("data:image/png;base64,") for s in sources)
    assert not re.search(r"https?://|<script|<link|@import", html)
    assert "Not covered by the DP guarantee" in html  # the caveat naming every private-derived figure
    assert "SPEC" not in html and "SPEC" not in markdown
    assert not list(folder.parent.glob(".report.*"))  # no staging folder left behind
    evaluation, _ = clean
    # The original method's figures (5 classes, ε = 8) stand beside a run of that setting only.
    from pcevolve.report.build import ORIGINAL_CLASSES, ORIGINAL_EPSILON

    same = abs(evaluation.epsilon - ORIGINAL_EPSILON) < 0.05 and evaluation.inputs.classes == ORIGINAL_CLASSES
    assert ("figures the original method reports" in markdown) == same


def test_evaluation_json_holds_every_number(clean, tiny_settings):
    evaluation, folder = clean
    data = json.loads((folder / "evaluation.json").read_text())
    assert set(data) == {"format", "version", "run", "dp", "settings", "data", "headline", "utility", "distribution",
                         "privacy", "per_class", "ledger", "audit", "search", "hints", "pool"}
    assert data["audit"] is None  # not audited (pcevolve audit): the report says how to
    assert data["format"] == "pcevolve.evaluation" and data["version"] == 3 and data["dp"] is True
    lines = data["headline"]["lines"]
    assert set(lines) == {"synthetic", "synthetic_aug", "fewshot", "fewshot_aug", "full"}
    assert lines["fewshot"]["reference_only"] and not lines["synthetic"]["reference_only"]
    assert lines["synthetic_aug"]["probe_accuracy"] is None  # augmentation lines are CNN-only
    cnn = {u["line"]: u["accuracy"] for u in data["utility"] if u["model"] == "cnn"}
    delta = data["headline"]["comparisons"]["cnn"]["delta_over_fewshot"]
    assert delta["points"] == pytest.approx(100 * (cnn["synthetic"] - cnn["fewshot"]))
    assert data["headline"]["comparisons"]["cnn"]["gap_to_full"]["points"] == pytest.approx(
        100 * (cnn["full"] - cnn["synthetic"]))
    assert all(u["epochs"] == tiny_settings.cnn_epochs for u in data["utility"] if u["model"] == "cnn")
    # Worst class first, flagged; accuracies ascending.
    rows = data["per_class"]
    assert [r["worst"] for r in rows] == [True, False, False]
    accuracies = [r["cnn_accuracy"] for r in rows]
    assert accuracies == sorted(accuracies)
    # Attacks: as many members and non-members per class as the test set holds (public), the members drawn from the
    # 10 private images of each class with replacement; the exact figures are in secure/. ε from the ledger.
    test_counts = np.bincount(evaluation.inputs.test.labels, minlength=3).tolist()
    assert data["data"]["members_per_class"] == test_counts
    # The private folder by its name only (its full path stays in secure/: it can say more than meant).
    assert data["data"]["private"] == {"path": "private", "per_class_dp_estimate": [10, 10, 11]}
    assert data["privacy"]["epsilon"] == pytest.approx(evaluation.inputs.ledger.spent())
    secure = json.loads((folder.parent / "secure" / "evaluation.json").read_text())
    assert secure["private_per_class"] == [10, 10, 10]
    assert secure["members"] == secure["non_members"] == sum(test_counts)
    assert secure["paths"]["private"] == evaluation.inputs.config.data.private
    assert set(secure["seconds"]) >= {"total"}
    for space in ("pixel", "independent"):
        for attack in ("dcr", "domias"):
            result = data["privacy"]["attacks"][space][attack]["overall"]
            assert not {"members", "non_members", "min_resolvable_fpr", "roc"} & set(result)
            exact = secure["attacks"][space][attack]["overall"]
            assert exact["members"] == sum(test_counts) and len(exact["roc"]["fpr"]) == len(exact["roc"]["tpr"])
    private_lines = [u for u in data["utility"] if u["reference_only"]]
    assert private_lines and all(u["train_size"] is None and u["steps"] is None for u in private_lines)
    assert all("seconds" not in u for u in data["utility"])
    assert set(data["distribution"]) == {"search", "independent"}
    assert set(data["distribution"]["independent"]) == {"synthetic", "fewshot"}
    assert set(data["privacy"]["dp_tpr_bound"]) == {"0.01", "0.001"}  # the run's bound, once for every attack
    assert len(data["ledger"]["events"]) == 2
    assert data["search"]["generations"] == 4  # the repeated last generation counted once
    assert [h["rule"] for h in data["hints"]] == ["attack", "copies", "accuracy", "distance_attack"]
    # Whether there are copies ships, not how many (the counts are in secure/).
    assert data["privacy"]["copies"]["any_near_copy"] is False and data["privacy"]["copies"]["any_exact_copy"] is False
    assert secure["copies"]["near_copies"] == 0 and secure["copies"]["exact_copies"] == 0


def test_no_membership_signal_gives_chance_level_attacks(clean, leaky):
    evaluation, _ = clean
    for space, by_name in evaluation.attacks.items():
        for name, result in by_name.items():
            # 30 vs 30: the null AUC has sd ≈ 0.075; 0.25 is over 3 sd.
            assert abs(result.overall.auc.value - 0.5) < 0.25, (space, name)
    assert evaluation.attacks["pixel"]["dcr"].overall.auc.value < leaky.attacks["pixel"]["dcr"].overall.auc.value


def test_leaky_synthetic_set_is_flagged_and_its_report_refused(leaky, leaky_run):
    # Every private image planted into the synthetic set: DCR finds them all, the copy check counts them.
    assert leaky.attacks["pixel"]["dcr"].overall.auc.value > 0.95
    assert leaky.attacks["independent"]["dcr"].overall.auc.value > 0.9
    assert leaky.attacks["pixel"]["dcr"].overall.success.value > 0.9
    copies = leaky.to_json()["privacy"]["copies"]
    assert copies["any_exact_copy"] is True and copies["any_near_copy"] is True
    exact = leaky.to_secure_json()["copies"]  # the counts stay in secure/: here they are the private set's size
    assert exact["exact_copies"] == 30 and exact["near_copies"] == 30
    fired = {h.rule for h in leaky.hints if h.fired}
    assert {"attack", "copies"} <= fired
    assert all(math.isfinite(r["nearest_private_rms_median"]) for r in leaky.per_class())
    # The report still gets written, the flag raised, and the planted private images kept out of its grid.
    from pcevolve.report import build_document

    grid = build_document(leaky).grids()[0]
    private = leaky.inputs.private.samples
    flat = {image.tobytes() for image in private}
    assert not any(np.asarray(image).tobytes() in flat for image in grid.images)
    write_report(leaky)
    assert (leaky_run / "report" / "report.html").exists()


def test_a_grid_holding_a_private_image_is_refused_and_nothing_written(leaky, leaky_run, monkeypatch):
    # Blind the grid's own filter (a copy check that finds nothing): the write-time safety check is the last gate
    # and must still refuse.
    blind = dataclasses.replace(leaky.copies, nearest_distance=np.full_like(leaky.copies.nearest_distance, 1e6))
    monkeypatch.setattr(leaky, "copies", blind)
    target = leaky_run / "report"
    if target.exists():
        import shutil

        shutil.rmtree(target)
    with pytest.raises(PrivateSampleInReport, match="private samples or near copies"):
        write_report(leaky)
    assert not (leaky_run / "report").exists()
    assert not list(leaky_run.glob(".report.*"))


def test_sample_grid_shows_synthetic_images_of_every_class(clean):
    evaluation, _ = clean
    from pcevolve.report import build_document

    grids = build_document(evaluation, grid_per_class=5).grids()
    assert len(grids) == 1
    rows = np.asarray(grids[0].rows)
    assert np.bincount(rows, minlength=3).tolist() == [5, 5, 5]
    assert all("/synthetic/" in source for source in grids[0].sources)


def test_a_reproducible_noise_run_is_reported_as_not_dp(fake_run, tmp_path, tiny_settings):
    run = fake_run(tmp_path, reproducible=True)
    evaluation = _evaluate(run, tiny_settings)
    folder = write_report(evaluation)
    assert json.loads((folder / "evaluation.json").read_text())["dp"] is False
    assert "NOT differentially private" in (folder / "report.html").read_text()


def test_the_encoders_run_on_every_core_and_the_rest_on_the_set_threads(fake_run, tmp_path, tiny_settings,
                                                                         monkeypatch):
    seen: dict[str, list[int]] = {"pooled": [], "projected": [], "lines": []}
    pooled, projected, lines = (evaluate_module.pooled_features, evaluate_module.projected_features,
                                evaluate_module.evaluate_lines)

    def spy(key, function):
        def wrapped(*args, **kwargs):
            seen[key].append(torch.get_num_threads())
            return function(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(evaluate_module, "pooled_features", spy("pooled", pooled))
    monkeypatch.setattr(evaluate_module, "projected_features", spy("projected", projected))
    monkeypatch.setattr(evaluate_module, "evaluate_lines", spy("lines", lines))
    run = fake_run(tmp_path)
    _evaluate(run, dataclasses.replace(tiny_settings, threads=1, encode_threads=3))
    assert set(seen["pooled"]) == {3} and set(seen["projected"]) == {3}
    assert seen["lines"] == [1]
    for values in seen.values():
        values.clear()
    _evaluate(run, dataclasses.replace(tiny_settings, threads=1, encode_threads=0))
    assert set(seen["pooled"]) == {evaluate_module._usable_cores()} == set(seen["projected"])
