"""An evaluation → the report document: headline, per class, hints, utility, distribution,
privacy attacks, copy check, ledger, fitness curves, samples, settings.

Every figure computed on the private images comes from
:meth:`~pcevolve.evaluation.run_evaluation.RunEvaluation.to_json`, already rounded (:mod:`pcevolve.evaluation.shipped`),
and is shown no finer than it ships: rates as whole percents (:func:`shared_pct`), AUCs with two decimals; the run and
its data folders by their names only.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.evaluation.attacks import FPR_LEVELS
from pcevolve.evaluation.copies import NEAR_COPY_RMS
from pcevolve.evaluation.members import MAX_MEMBERS_PER_CLASS
from pcevolve.evaluation.run_evaluation import RunEvaluation
from pcevolve.evaluation.shipped import path_name, shown_distance
from pcevolve.io import read_json
from pcevolve.plots import fitness_curve
from pcevolve.report import figures
from pcevolve.report.audit import audit_section
from pcevolve.report.document import (
    Document,
    Paragraph,
    Plot,
    SampleGrid,
    Section,
    Table,
)
from pcevolve.report.wording import pool_sentence
from pcevolve.run_folder import RunFolder
from pcevolve.search.runner import generation_records

#: Synthetic images per class in the sample grid.
GRID_PER_CLASS = 10
_DASH = "—"


def pct(value: float | None, digits: int = 1) -> str:
    """0.8391 → ``83.9%``; None/NaN → a dash."""
    return _DASH if value is None or not math.isfinite(value) else f"{100 * value:.{digits}f}%"


def shared_pct(value: float | None) -> str:
    """A rate computed on private samples, shipped with two decimals, as a whole percent: 0.53 → ``53%`` (a decimal
    more would claim a precision the figure no longer has)."""
    return pct(value, 0)


def line_pct(value: float | None, reference_only: bool) -> str:
    """A score of a training line: :func:`shared_pct` for a line trained on the private samples, else :func:`pct`."""
    return shared_pct(value) if reference_only else pct(value)


def num(value: float | None, digits: int = 4) -> str:
    return _DASH if value is None or not math.isfinite(value) else f"{value:.{digits}g}"


def interval(estimate: dict[str, float], *, percent: bool = True) -> str:
    """``52% [50, 54]`` (or ``0.52 [0.50, 0.54]``): an attack figure, shipped with two decimals, and its bootstrap
    interval."""
    if percent:
        return f"{100 * estimate['value']:.0f}% [{100 * estimate['low']:.0f}, {100 * estimate['high']:.0f}]"
    return f"{estimate['value']:.2f} [{estimate['low']:.2f}, {estimate['high']:.2f}]"


def comparison_text(value: dict[str, float] | None) -> str:
    """``+4.2 pts (+5.1% rel.)`` from a comparison of :func:`pcevolve.evaluation.utility.comparisons`."""
    if value is None:
        return _DASH
    relative = value["relative_percent"]
    return f"{value['points']:+.1f} pts" + ("" if relative is None else f" ({relative:+.1f}% rel.)")


def build_document(evaluation: RunEvaluation, *, grid_per_class: int = GRID_PER_CLASS) -> Document:
    """The report of one evaluation (no file is written here)."""
    data = evaluation.to_json()
    sections = [
        _headline(evaluation, data),
        _per_class(evaluation, data),
        _hints(data),
        _utility(evaluation, data),
        _distribution(data),
        _attacks(evaluation, data),
        _copies(evaluation, data),
        ledger_section(data),
        audit_section(data),
        fitness_section(evaluation.inputs.folder),
        _samples(evaluation, grid_per_class),
        _settings(data),
    ]
    inputs = evaluation.inputs
    return Document(title=f"pcevolve evaluation — run {inputs.config.name}", sections=tuple(sections),
                    subtitle=f"{path_name(inputs.folder)} · synthetic set judged on {len(inputs.test.labels)} real "
                             f"test images · (ε, δ) = ({evaluation.epsilon:.3f}, {evaluation.delta:g})")


#: The setting of the original method's own experiment, whose figures the report shows beside a run of it.
ORIGINAL_EPSILON, ORIGINAL_CLASSES = 8.0, 5


def _headline(evaluation: RunEvaluation, data: dict[str, Any]) -> Section:
    head = data["headline"]
    rows = []
    for key, line in head["lines"].items():
        note = ("private images: a reference the user could not publish (not DP)" if line["reference_only"]
                else "delivered synthetic set" if key.startswith("synthetic") else "real data reference")
        accuracy, private = line["cnn_accuracy"], line["reference_only"]
        rows.append((line["label"], line_pct(accuracy, private),
                     line_pct(None if accuracy is None else 1.0 - accuracy, private),
                     line_pct(line["cnn_macro_f1"], private), line_pct(line["probe_accuracy"], private),
                     line_pct(line["probe_macro_f1"], private), note))
    utility = Table(("training set", "CNN accuracy", "CNN top-1 error", "CNN macro-F1", "probe accuracy",
                     "probe macro-F1", "note"), tuple(rows), highlight=(0,) if rows else (),
                    caption="Downstream models trained on each set, tested on the real test folder. CNN: small CNN "
                            "from scratch on pixels; probe: linear probe on independent EfficientNet-Lite2 features.")
    cnn, probe = head["comparisons"]["cnn"], head["comparisons"]["probe"]
    seed = head["seed"]
    attack = head["attack_success"]
    # The original method's figures are for its own experiment (5 classes, ε = 8): beside another setting they would
    # compare unlike things, so the column is shown for that setting only (both public: the declaration and ε).
    original = abs(evaluation.epsilon - ORIGINAL_EPSILON) < 0.05 and evaluation.inputs.classes == ORIGINAL_CLASSES
    rows = (("Δ over few-shot real", comparison_text(cnn["delta_over_fewshot"]),
             comparison_text(probe["delta_over_fewshot"]), seed["delta_over_fewshot"]["text"]),
            ("gap to full real (full − ours)", comparison_text(cnn["gap_to_full"]),
             comparison_text(probe["gap_to_full"]), seed["gap_to_full"]["text"]),
            ("synthetic + augmentation over few-shot real", comparison_text(cnn["synthetic_aug_over_fewshot"]), _DASH,
             seed["synthetic_aug_over_fewshot"]["text"]),
            ("membership attack success (strongest attack)",
             f"{interval(attack)} — {attack['space']}/{attack['attack']}", _DASH, seed["attack_success"]["text"]))
    compare = (Table(("comparison", "ours (CNN)", "ours (probe)", "original method"), rows,
                     caption="Ours against the figures the original method reports for its own experiment (500 "
                             "private images, 5 classes, ε = 8). pts = percentage points.") if original else
               Table(("comparison", "ours (CNN)", "ours (probe)"), tuple(row[:3] for row in rows),
                     caption="What the synthetic set adds to the few private images, and what it lacks against the "
                             "full real set. pts = percentage points."))
    members = _members(evaluation)
    claim = (f"released under (ε, δ) = ({evaluation.epsilon:.3f}, {evaluation.delta:g}) by the run's ledger"
             if evaluation.inputs.ledger.is_dp else
             f"NOT differentially private: the run used reproducible noise (ε {evaluation.epsilon:.3f} would hold "
             "only if nobody could regenerate the noise, and anyone with the run's config can)")
    blocks = [
        Paragraph(f"Synthetic set: {len(evaluation.inputs.synthetic.labels)} images in "
                  f"{evaluation.inputs.classes} classes, {claim}.",
                  tone="text" if evaluation.inputs.ledger.is_dp else "warning"),
        utility, compare,
        Paragraph(("The original method does not say whether its percentages are percentage points or relative "
                   "gains; ours are given both ways. " if original else "")
                  + "Best-threshold attack success is optimistic: with no leak at all "
                  f"it averages about {50 + 44 / math.sqrt(max(members, 1)):.1f}% for about {members} members.",
                  tone="note"),
        Paragraph(data["privacy"]["caveat"], tone="note"),
    ]
    if (note := sweep_note(data)) is not None:
        blocks.insert(1, note)
    if (pool := pool_sentence(data)) is not None:  # how much of the pool looked like the task, how much set aside
        blocks.insert(1, Paragraph(pool, tone="note"))
    fired = [h for h in data["hints"] if h["fired"]]
    if fired:
        blocks.append(Paragraph(f"{len(fired)} troubleshooting rule(s) fired: "
                                + "; ".join(h["advice"] for h in fired), tone="warning"))
    return Section("Headline", tuple(blocks), anchor="headline")


def _per_class(evaluation: RunEvaluation, data: dict[str, Any]) -> Section:
    rows = data["per_class"]
    members = _class_members(evaluation)
    table = Table(
        ("class", "synthetic", "CNN acc. (ours)", "CNN acc. (few-shot real)", "probe acc. (ours)",
         "MMD² (search space)", "MMD² (independent)", "strongest attack success (AUC)",
         "nearest private (median RMS)", "near copies"),
        tuple((("▶ " if r["worst"] else "") + r["class"], str(r["synthetic"]), pct(r["cnn_accuracy"]),
               shared_pct(r["cnn_accuracy_fewshot"]), pct(r["probe_accuracy"]), num(r.get("mmd_search")),
               num(r.get("mmd_independent")),
               _DASH if r["attack_success"] is None else f"{shared_pct(r['attack_success'])} ({r['attack_auc']:.2f}, "
                                                         f"{r['attack']})",
               num(r["nearest_private_rms_median"], 3), "YES" if r["any_near_copy"] else "none") for r in rows),
        highlight=(0,) if rows else (),
        caption="Worst class first (lowest CNN accuracy of ours), highlighted. Attack success per class is the "
                f"best of the four attacks on that class's members alone; with about {members} members per class "
                f"chance alone gives about {50 + 44 / math.sqrt(max(members, 1)):.0f}%.")
    names = evaluation.inputs.class_names
    blocks: list[Any] = [table]
    notes = []
    for space in ("search", "independent"):
        worst = data["distribution"].get(space, {}).get("synthetic", {}).get("mmd_rbf", {}).get("worst_class")
        if worst is not None:
            notes.append(f"farthest from the real test set ({space} space MMD²): {names[worst]}")
    attacked = [r for r in rows if r["attack_success"] is not None]
    if attacked:
        most = max(attacked, key=lambda r: r["attack_success"])
        notes.append(f"most exposed to membership inference: {most['class']} ({shared_pct(most['attack_success'])})")
    if rows:
        blocks.insert(0, Paragraph(f"Worst class: {rows[0]['class']} (CNN accuracy {pct(rows[0]['cnn_accuracy'])})."
                                   + (" Also: " + "; ".join(notes) + "." if notes else "")))
    # From the shared figures: the few-shot line's per-class accuracies are drawn as rounded as they ship.
    lines = {entry["label"]: [entry["per_class_accuracy"][name] for name in names] for entry in data["utility"]
             if entry["model"] == "cnn" and entry["line"] in ("synthetic", "fewshot", "full")}
    worst = names.index(rows[0]["class"]) if rows else None
    blocks.append(Plot("per_class_accuracy", figures.per_class_accuracy(names, lines, worst=worst),
                       "Per-class CNN test accuracy; the worst class of ours in red."))
    return Section("Per class (worst first)", tuple(blocks), anchor="per-class")


def _class_members(evaluation: RunEvaluation) -> int:
    """Fewest members of a class in the attacks (public: the test set's class sizes), for the chance level."""
    counts = evaluation.members_per_class()
    return min(counts) if counts else 0


def _members(evaluation: RunEvaluation) -> int:
    """Members in the attacks (public: the test set's class sizes, capped)."""
    return sum(evaluation.members_per_class())


def _hints(data: dict[str, Any]) -> Section:
    hints = data["hints"]
    table = Table(("rule", "fired", "observed", "threshold", "what to do"),
                  tuple((h["rule"], "YES" if h["fired"] else "no", h["observed"], h["threshold"], h["advice"])
                        for h in hints),
                  highlight=tuple(i for i, h in enumerate(hints) if h["fired"]),
                  caption="The built-in troubleshooting rules applied to this evaluation; fired rules are highlighted.")
    fired = [h for h in hints if h["fired"]]
    lead = (Paragraph(f"{len(fired)} rule(s) fired.", tone="warning") if fired
            else Paragraph("No rule fired."))
    return Section("Troubleshooting", (lead, table), anchor="troubleshooting")


def _utility(evaluation: RunEvaluation, data: dict[str, Any]) -> Section:
    results = data["utility"]
    private_size = sum(data["data"]["private"]["per_class_dp_estimate"] or [])
    table = Table(("training set", "model", "train size", "epochs", "optimizer steps", "accuracy", "macro-F1"),
                  tuple((r["label"], r["model"],
                         f"≈ {private_size} (DP count)" if r["train_size"] is None else str(r["train_size"]),
                         _DASH if r["epochs"] is None else str(r["epochs"]),
                         _DASH if r["steps"] is None else str(r["steps"]), line_pct(r["accuracy"], r["reference_only"]),
                         line_pct(r["macro_f1"], r["reference_only"]))
                        for r in results),
                  caption="Every (line, model) pair. Same CNN recipe for every line: Adam 1e-3, batch 32, the same "
                          "number of epochs; the probe picks its L2 strength by cross-validation on its training set. "
                          "Lines trained on the private images show the run's noisy (DP) count instead of their exact "
                          "size and step count.")
    blocks: list[Any] = [table]
    ours = evaluation.result("synthetic", "cnn")
    if ours is not None:
        names = ours.metrics.class_names
        confusion = ours.metrics.confusion
        blocks.append(Table(("true \\ predicted", *names),
                            tuple((name, *(str(int(v)) for v in confusion[i])) for i, name in enumerate(names)),
                            caption="Confusion matrix of the CNN trained on the synthetic set (rows: true class)."))
    blocks.append(Paragraph(
        "No peeking: both recipes are fixed in advance; the test folder is only predicted, never used to choose "
        "anything. Few-shot real lines train on the private images: they show what the user could have had "
        "without publishing anything, and are not DP.", tone="note"))
    return Section("Utility details", tuple(blocks), anchor="utility")


def _distribution(data: dict[str, Any]) -> Section:
    names = data["data"]["class_names"]
    labels = {"mmd_rbf": "MMD² (RBF, median bandwidth)", "sliced_wasserstein": "sliced Wasserstein-2",
              "frechet": "Fréchet distance"}
    spaces = {"search": "search encoder (run's Lite0, projected)", "independent": "independent (Lite2, pooled)"}
    rows = []
    for space, sets in data["distribution"].items():
        for metric, ours in sets["synthetic"].items():
            fewshot = sets["fewshot"][metric]
            worst = ours["worst_class"]
            per_class = ", ".join(f"{name} {num(v, 3)}" for name, v in zip(names, ours["per_class"]))
            rows.append((spaces.get(space, space), labels.get(metric, metric), num(ours["overall"]),
                         shown_distance(fewshot["overall"]), _DASH if worst is None else names[worst], per_class))
    table = Table(("feature space", "metric", "ours → test", "few-shot real → test", "worst class (ours)",
                   "per class (ours)"), tuple(rows),
                  caption="Lower is closer. Ours and the private images are compared with the real test set on one "
                          "scale (same MMD bandwidth, same projections): the few-shot column is how close real data "
                          "gets.")
    return Section("Distribution", (table, Paragraph(
        "Two spaces: the one the search optimised (the run's own encoder) and an independent one the "
        "search never saw (ImageNet EfficientNet-Lite2, untrained here). A set tuned to its own encoder looks "
        "better in the first than in the second.", tone="note")), anchor="distribution")


def _attacks(evaluation: RunEvaluation, data: dict[str, Any]) -> Section:
    privacy = data["privacy"]
    rows = []
    bound = privacy["dp_tpr_bound"]
    for space, by_name in privacy["attacks"].items():
        for name, result in by_name.items():
            result = result["overall"]
            tpr = result["tpr_at_fpr"]
            cells = [space, name, interval(result["auc"], percent=False), interval(result["success"])]
            for level in FPR_LEVELS:
                cells += [interval(tpr[str(level)]), pct(bound.get(str(level)), 2)]
            cells.append("YES" if result["exceeds_dp_bound"] else "no")
            rows.append(tuple(cells))
    columns = ["space", "attack", "AUC [95% CI]", "success [95% CI]"]
    for level in FPR_LEVELS:
        columns += [f"TPR @ FPR {level:g}", f"ε-DP bound @ {level:g}"]
    columns.append("beats bound?")
    table = Table(tuple(columns), tuple(rows), highlight=tuple(i for i, r in enumerate(rows) if r[-1] == "YES"),
                  caption="Members: private images, drawn with replacement, as many per class as the test set holds "
                          "(a count that says nothing of the private set's size); non-members: as many real test "
                          "images of the same classes. "
                          "DCR = distance to the closest synthetic record; DOMIAS = synthetic vs public density "
                          "ratio. Bound: TPR ≤ e^ε·FPR + δ for any (ε, δ)-DP release.")
    m = _members(evaluation)
    return Section("Membership inference", (
        Paragraph(privacy["caveat"], tone="note"),
        table,
        Plot("roc_curves", figures.roc_curves(evaluation.attacks, epsilon=evaluation.epsilon, delta=evaluation.delta),
             "ROC curves of the attacks, at fixed false-positive rates (their own steps would show the member "
             "count); dashed: the ε-DP bound; dotted: chance."),
        Paragraph(f"About {m} members (by the run's DP counts) and as many non-members (non-members are also in the "
                  "utility test set; the attacks score them against the synthetic set only). A TPR at an FPR below "
                  f"about 1/{m} is the TPR at FPR 0. Target for a private set: AUC and success ≈ 50% (the original "
                  "method reports 51.2%).", tone="note"),
    ), anchor="attacks")


def _copies(evaluation: RunEvaluation, data: dict[str, Any]) -> Section:
    copies = data["privacy"]["copies"]
    scale = copies["rms_scale"]
    syn = copies["candidate_to_private"]
    rows = tuple((key, num(syn[key] / scale, 3)) for key in ("min", "p1", "p5", "median", "mean", "max"))
    table = Table(("statistic (RMS grey levels)", "synthetic → nearest private"), rows,
                  caption="Nearest private image of every synthetic image, in pixels, to three significant figures. "
                          "The private images' distances to each other (the scale the 1st-percentile share above is "
                          "read against) stay in the run's secure/evaluation.json: they are a statistic of the "
                          "private images alone.")
    blocks: list[Any] = [
        # Whether there are copies, not how many: when every private image was copied, that count is their number.
        Paragraph(f"{copies['candidates']} synthetic images; exact copies of a private image: "
                  f"{'YES' if copies['any_exact_copy'] else 'none'}; near copies (RMS difference ≤ "
                  f"{copies['near_copy_rms']:g}): {'YES' if copies['any_near_copy'] else 'none'}; closer to the "
                  "private set than its own 1st-percentile neighbour distance: "
                  f"{shared_pct(copies['closer_than_private_p1'])} (about 1% for fresh real data).",
                  tone="warning" if copies["any_near_copy"] else "text"),
        table,
        Plot("copy_distances",
             figures.distance_histogram(evaluation.copies.nearest_distance / scale, threshold=copies["near_copy_rms"]),
             "Distance of every synthetic image to the nearest private image."),
    ]
    return Section("Copy check", tuple(blocks), anchor="copies")


def attack_roc_plot(name: str, attack: Any, *, epsilon: float, delta: float) -> Plot:
    """A table's or texts' one membership attack (its :class:`~pcevolve.evaluation.attacks.AttackResult`, shown as
    ``name``) as a ROC plot, at fixed false-positive rates with rounded rates, beside the run's DP bound."""
    return Plot("roc_curve", figures.attack_roc({name: attack}, epsilon=epsilon, delta=delta,
                                                title="membership attack"),
                "ROC curve of the membership attack, at fixed false-positive rates with rates rounded to two decimals "
                "(its own steps would show the member count); dashed: the most any attack can reach under the run's "
                "(ε, δ); dotted: chance.")


def sweep_note(data: dict[str, Any]) -> Paragraph | None:
    """For a run a sweep made: the ε a set chosen among the sweep's runs carries (``data["ledger"]["sweep"]``)."""
    sweep = data["ledger"].get("sweep")
    if sweep is None:
        return None
    carried = ("recorded in the sweep's ledger beside this run" if sweep["epsilon"] is None
               else f"ε = {sweep['epsilon']:.3f}" + ("" if sweep["finished"] else ", its cap while runs are left"))
    return Paragraph(f"This run is one of the sweep {sweep['name']}: several runs on the same private data, which "
                     f"spend together. A set chosen after comparing their test scores carries the sweep's total "
                     f"({carried}), not this run's own ε; a choice steered by the membership-attack figures, which are "
                     "computed on the private data without noise, is covered by no ε.", tone="warning")


def ledger_section(data: dict[str, Any]) -> Section:
    """The privacy ledger: ε per stage and every release paid for (``data["ledger"]`` as the evaluation JSON has it)."""
    ledger = data["ledger"]
    events = ledger["events"]
    rows = tuple((str(e["index"]), e["stage"], e["mechanism"],
                  ", ".join(f"{k}={num(v) if isinstance(v, float) else v}" for k, v in e["event"].items()
                            if k != "kind"),
                  e["description"], num(e["stage_epsilon"]), num(e["total_epsilon"])) for e in events)
    stages = Table(("stage", "cap", "ε spent"),
                   tuple((name, num(s["cap"]), num(s["epsilon"])) for name, s in ledger["stages"].items()))
    note = sweep_note(data)
    return Section("Privacy ledger", (
        Paragraph(f"Total ε = {ledger['total_epsilon']:.4f} of {ledger['cap']:g} at δ = {ledger['delta']:g} "
                  "(the accountant's composition of every event, not a sum)."),
        *(() if note is None else (note,)),
        stages,
        Plot("ledger", figures.ledger_bars(ledger["stages"], events, total_cap=ledger["cap"]),
             "ε per stage and the running total."),
        Table(("#", "stage", "mechanism", "parameters", "description", "stage ε after", "total ε after"), rows,
              caption="Every release the run paid for."),
    ), anchor="ledger")


def fitness_section(folder: Path) -> Section:
    """What the run's search did: the DP fitness per generation when it evolved (its generation records, computed on
    DP releases only) against its one-shot start, or that it delivered that start (``search.evolve`` off)."""
    records = generation_records(RunFolder(folder).records("generation"))
    marker = Path(folder) / "stages" / "search.json"
    search = read_json(marker) if marker.is_file() else {}
    start = search.get("baseline_fitness")
    if not records:
        if search.get("evolved", True):
            return Section("Search: fitness curves", (Paragraph("The run recorded no generation."),), anchor="fitness")
        shown = "" if start is None else f" (DP fitness {start:.4f})"
        return Section("Search: the one-shot start", (Paragraph(
            f"The search did not evolve (search.evolve: false): the run delivered its one-shot start{shown}, the "
            "released class Gaussians sampled and decoded. In our measurements the evolution never beat that start "
            "downstream; search.evolve: true runs it.", tone="note"),), anchor="fitness")
    against = "" if start is None else f" (its one-shot start {start:.4f})"
    return Section("Search: fitness curves", (
        Plot("fitness_curve", fitness_curve(records), "DP fitness per generation and the best individual's terms."),
        Paragraph(f"{len(records)} generations; best DP fitness "
                  f"{max(r['engine']['best_so_far'] for r in records):.4f}{against}. "
                  "The fitness is computed against DP releases only; the downstream numbers above are the honest "
                  "judge.", tone="note"),
    ), anchor="fitness")


def _samples(evaluation: RunEvaluation, per_class: int) -> Section:
    synthetic = evaluation.inputs.synthetic
    # Near copies of private images (the evaluation's copy check) are left out of the grid: the safety check would
    # refuse the whole report, and a set drawn from a public pool can hold a few look-alikes of private images.
    near = np.zeros(len(synthetic.labels), dtype=bool)
    near[evaluation.copies.near_copies(evaluation.near_copy_threshold)] = True
    chosen = []
    for k in range(evaluation.inputs.classes):
        rows = np.flatnonzero((synthetic.labels == k) & ~near)
        if rows.size:
            chosen.append(rows[np.unique(np.linspace(0, rows.size - 1, min(per_class, rows.size)).round().astype(int))])
    index = np.concatenate(chosen) if chosen else np.zeros(0, np.int64)
    grid = SampleGrid("samples", images=synthetic.samples[index], rows=synthetic.labels[index],
                      row_names=evaluation.inputs.class_names, sources=tuple(synthetic.sources[i] for i in index),
                      caption=f"Synthetic images, up to {per_class} per class, evenly spaced through each class "
                              "folder.")
    # Not how many: a count of near copies can be the number of private images.
    skipped = (" Synthetic images within that distance of a private image were left out of the grid (see the copy "
               "check)." if near.any() else "")
    return Section("Synthetic samples", (grid, Paragraph(
        "Before the report was written every image above was compared with every private image and would have "
        f"been refused had it been one, or within an RMS difference of {NEAR_COPY_RMS:g} grey levels of one. "
        f"The report holds no private sample.{skipped}", tone="note")), anchor="samples")


def _settings(data: dict[str, Any]) -> Section:
    settings = data["settings"]
    described = data["data"]
    rows = [(key, str(value)) for key, value in settings.items()]
    sets = []
    for name in ("synthetic", "private", "test", "full", "public"):
        entry = described.get(name)
        if entry is None:
            continue
        if name == "private":
            estimate = entry["per_class_dp_estimate"]
            size = _DASH if estimate is None else f"≈ {sum(estimate)} (noisy DP count)"
        else:
            size = str(sum(entry["per_class"]) if "per_class" in entry else entry.get("used"))
        extra = f" of {entry['available']}" if "available" in entry else ""
        sets.append((name, entry["path"], f"{size}{extra}"))
    counts = described["members_per_class"]
    return Section("Settings and data", (
        Table(("setting", "value"), tuple(rows)),
        Table(("set", "path", "images used"), tuple(sets),
              caption="The full set and the public pool are thinned by a seeded choice. Members and non-members for "
                      f"the attacks: {sum(counts)} each, as many per class as the test set holds (at most "
                      f"{MAX_MEMBERS_PER_CLASS:,}), the members drawn from the private images with replacement "
                      f"({described['non_members_from']} for the non-members): counts that say nothing of the private "
                      "set's size, which stays, with the evaluation's timings, in the run's secure/evaluation.json."),
    ), anchor="settings")
