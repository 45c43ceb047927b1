"""The report's charts, drawn from numbers with matplotlib's object API (no pyplot, no global state).

Every function returns PNG bytes for a :class:`~pcevolve.report.document.Plot`, except
:func:`sample_grid_png`, which draws a :class:`~pcevolve.report.document.SampleGrid` and is
called by the writer only after the grid passed the no-private-sample check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pcevolve.evaluation.attacks import FPR_LEVELS, MembershipAttack
from pcevolve.evaluation.shipped import shared_rate
from pcevolve.pipeline.plots import figure_png, new_figure
from pcevolve.report.document import SampleGrid

_WORST = "#d62728"
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")


#: False-positive rates at which the report draws an attack's ROC curve: every 5% on the linear axis, and 1-2-5 steps
#: on the log axis. A coarse, fixed grid: the curve's own steps are 1/non-members wide (= 1/members), so drawn
#: step by step the figure would show the member count the shared files leave out.
ROC_GRID = np.unique(np.r_[np.linspace(0.0, 1.0, 21), [0.001, 0.002, 0.005, 0.01, 0.02]])


def shared_roc(fpr: np.ndarray, tpr: np.ndarray, grid: np.ndarray = ROC_GRID) -> np.ndarray:
    """An ROC curve as the report draws it: at each false-positive rate of ``grid``, the best TPR at that rate or
    below, rounded like every shared rate (:func:`~pcevolve.evaluation.shipped.shared_rate`)."""
    fpr, tpr = np.asarray(fpr, dtype=np.float64), np.asarray(tpr, dtype=np.float64)
    return np.array([shared_rate(float(tpr[fpr <= level].max(initial=0.0))) for level in grid])


def roc_curves(attacks: Mapping[str, Mapping[str, MembershipAttack]], *, epsilon: float, delta: float) -> bytes:
    """ROC of every attack per space (linear axes on top, log FPR below) with the ε-DP bound and chance; each curve
    drawn at :data:`ROC_GRID` only (:func:`shared_roc`)."""
    spaces = list(attacks)
    figure = new_figure(figsize=(5.2 * len(spaces), 8.4))
    figure.set_layout_engine("constrained")
    axes = figure.subplots(2, len(spaces), squeeze=False)
    grid = np.logspace(-3.5, 0, 200)
    bound = np.minimum(1.0, math.exp(epsilon) * grid + delta)
    for column, space in enumerate(spaces):
        for row, log in enumerate((False, True)):
            ax = axes[row][column]
            for colour, (name, result) in zip(_COLOURS, attacks[space].items()):
                overall = result.overall
                shown = ROC_GRID > 0 if log else ROC_GRID >= 0
                ax.plot(ROC_GRID[shown], shared_roc(overall.fpr, overall.tpr)[shown], marker=".", color=colour,
                        label=f"{name} (AUC {shared_rate(overall.auc.value):.2f})")
            ax.plot(grid, grid, ":", color="grey", label="chance")
            ax.plot(grid, bound, "--", color="black", lw=0.8, label=f"ε-DP bound (ε={epsilon:.2f})")
            if log:
                ax.set_xscale("log")
                ax.set_xlim(1e-3, 1)
                for level in FPR_LEVELS:
                    ax.axvline(level, color="grey", lw=0.5, alpha=0.5)
            else:
                ax.set_xlim(0, 1)
            ax.set_ylim(0, 1.01)
            ax.set_xlabel("false positive rate" + (" (log)" if log else ""))
            ax.set_ylabel("true positive rate")
            ax.set_title(f"{space} space" + (" — low FPR" if log else ""), fontsize=10)
            ax.grid(alpha=0.3)
            ax.legend(loc="lower right", fontsize=7)
    return figure_png(figure)


def ledger_bars(stages: Mapping[str, Mapping[str, float]], events: Sequence[Mapping[str, Any]], *,
                total_cap: float) -> bytes:
    """ε spent vs cap per stage (left) and the accountant's running total over the events (right)."""
    figure = new_figure(figsize=(10, 3.6))
    left, right = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.3]})
    names = list(stages)
    y = np.arange(len(names))
    left.barh(y, [stages[n]["cap"] for n in names], color="#dddddd", label="cap")
    left.barh(y, [stages[n]["epsilon"] for n in names], height=0.5, color=_COLOURS[0], label="spent")
    for i, name in enumerate(names):
        left.text(stages[name]["epsilon"], i, f" {stages[name]['epsilon']:.3g}", va="center", fontsize=8)
    left.set_yticks(y, names)
    left.invert_yaxis()
    left.set_xlabel("ε")
    left.set_title("ε per stage (accountant)", fontsize=10)
    left.legend(fontsize=8, loc="lower right")
    if events:
        right.step(range(1, len(events) + 1), [e["total_epsilon"] for e in events], where="post", color=_COLOURS[0])
        right.axhline(total_cap, color="black", ls="--", lw=0.8, label=f"total cap {total_cap:g}")
        right.legend(fontsize=8)
    right.set_xlabel("ledger event")
    right.set_ylabel("total ε after the event")
    right.set_title("running total (composed, not summed)", fontsize=10)
    right.grid(alpha=0.3)
    return figure_png(figure)


def per_class_accuracy(class_names: Sequence[str], lines: Mapping[str, Sequence[float]], *, worst: int | None) -> bytes:
    """Grouped bars: each line's per-class CNN accuracy; the worst class's label in red."""
    figure = new_figure(figsize=(max(6.0, 1.3 * len(class_names) + 2), 3.6))
    ax = figure.subplots()
    x = np.arange(len(class_names))
    width = 0.8 / max(len(lines), 1)
    for i, (colour, (label, values)) in enumerate(zip(_COLOURS, lines.items())):
        ax.bar(x + (i - (len(lines) - 1) / 2) * width, [v if v is not None else np.nan for v in values], width,
               label=label, color=colour)
    ax.set_xticks(x, class_names, rotation=20, ha="right", fontsize=8)
    if worst is not None:
        ax.get_xticklabels()[worst].set_color(_WORST)
        ax.get_xticklabels()[worst].set_fontweight("bold")
    ax.set_ylim(0, 1)
    ax.set_ylabel("test accuracy (CNN)")
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    ax.grid(axis="y", alpha=0.3)
    return figure_png(figure)


def distance_histogram(synthetic_to_private: np.ndarray, *, threshold: float) -> bytes:
    """Nearest-private distance of every synthetic image (RMS grey levels) and the near-copy threshold.

    The private images' distances to each other are not drawn: a histogram of them is a statistic of the private
    images alone (its bars are multiples of 1/their number), and the report leaves the copy check's scale in
    ``secure/``.
    """
    figure = new_figure(figsize=(7, 3.4))
    ax = figure.subplots()
    high = float(max(np.max(synthetic_to_private), threshold)) * 1.05
    bins = np.linspace(0, high, 50)
    ax.hist(synthetic_to_private, bins=bins, density=True, alpha=0.6, color=_COLOURS[0],
            label="synthetic → nearest private")
    ax.axvline(threshold, color=_WORST, ls="--", label=f"near-copy threshold ({threshold:g})")
    ax.set_xlabel("pixel distance (RMS difference, grey levels)")
    ax.set_ylabel("density")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return figure_png(figure)


def sample_grid_png(grid: SampleGrid) -> bytes:
    """Draw a sample grid: one row per row name, its images left to right. Call only after the safety check."""
    rows = np.asarray(grid.rows)
    columns = max([int((rows == r).sum()) for r in range(len(grid.row_names))] + [1])
    figure = new_figure(figsize=(1.0 * columns + 1.8, 1.0 * len(grid.row_names) + 0.2))
    axes = figure.subplots(len(grid.row_names), columns, squeeze=False)
    for r, name in enumerate(grid.row_names):
        images = grid.images[rows == r]
        for c in range(columns):
            ax = axes[r][c]
            ax.set_xticks([])
            ax.set_yticks([])
            for spine in ax.spines.values():
                spine.set_visible(False)
            if c < len(images):
                image = images[c]
                if image.ndim == 2:
                    ax.imshow(image, cmap="gray", vmin=0, vmax=255, interpolation="nearest")
                else:
                    ax.imshow(image, interpolation="nearest")
        axes[r][0].set_ylabel(name, rotation=0, ha="right", va="center", fontsize=9)
    figure.subplots_adjust(wspace=0.05, hspace=0.05)
    return figure_png(figure)


def tvd_bars(columns: Sequence[str], tvd: Sequence[float], reference: Sequence[float | None] | None = None) -> bytes:
    """Horizontal bars: each column's total-variation distance to the test marginal; ``reference`` (the private rows'
    own distance, how close real data gets) as a black tick on each bar."""
    figure = new_figure(figsize=(7.0, 0.32 * len(columns) + 1.2))
    ax = figure.subplots()
    y = np.arange(len(columns))
    ax.barh(y, tvd, color=_COLOURS[0], label="synthetic → test")
    if reference is not None and any(v is not None for v in reference):
        ax.scatter([np.nan if v is None else v for v in reference], y, marker="|", s=160, color="black",
                   label="private rows → test (reference)")
    ax.set_yticks(y, columns, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(1e-3, float(np.nanmax([*tvd, *[v for v in reference or () if v is not None]])) * 1.1))
    ax.set_xlabel("total-variation distance (0 = same marginal, 1 = no overlap)")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    return figure_png(figure)
