"""The report's charts, drawn from numbers with matplotlib's object API (no pyplot, no global state).

Every function returns PNG bytes for a :class:`~pcevolve.report.document.Plot`, except
:func:`sample_grid_png`, which draws a :class:`~pcevolve.report.document.SampleGrid` and is
called by the writer only after the grid passed the no-private-sample check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.ticker import MaxNLocator

from pcevolve.evaluation.attacks import FPR_LEVELS, AttackResult, MembershipAttack
from pcevolve.evaluation.shipped import shared_rate
from pcevolve.plots import figure_png, new_figure
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
    for column, space in enumerate(spaces):
        results = {name: attack.overall for name, attack in attacks[space].items()}
        for row, log in enumerate((False, True)):
            _roc_axes(axes[row][column], results, log=log, epsilon=epsilon, delta=delta,
                      title=f"{space} space" + (" — low FPR" if log else ""))
    return figure_png(figure)


def attack_roc(results: Mapping[str, AttackResult], *, epsilon: float, delta: float, title: str = "") -> bytes:
    """The ROC of one attack space as :func:`roc_curves` draws it, linear and log FPR side by side (for a report
    with a single attack space: tables, texts)."""
    figure = new_figure(figsize=(10.4, 4.2))
    figure.set_layout_engine("constrained")
    left, right = figure.subplots(1, 2)
    _roc_axes(left, results, log=False, epsilon=epsilon, delta=delta, title=title)
    _roc_axes(right, results, log=True, epsilon=epsilon, delta=delta,
              title=(title + " — " if title else "") + "low FPR")
    return figure_png(figure)


def _roc_axes(ax: Any, results: Mapping[str, AttackResult], *, log: bool, epsilon: float, delta: float,
              title: str) -> None:
    """One ROC panel: each result at :data:`ROC_GRID` (:func:`shared_roc`), the ε-DP bound, chance."""
    grid = np.logspace(-3.5, 0, 200)
    bound = np.minimum(1.0, math.exp(epsilon) * grid + delta)
    for colour, (name, result) in zip(_COLOURS, results.items()):
        shown = ROC_GRID > 0 if log else ROC_GRID >= 0
        ax.plot(ROC_GRID[shown], shared_roc(result.fpr, result.tpr)[shown], marker=".", color=colour,
                label=f"{name} (AUC {shared_rate(result.auc.value):.2f})")
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
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=7)


def ledger_bars(stages: Mapping[str, Mapping[str, float]], events: Sequence[Mapping[str, Any]], *,
                total_cap: float) -> bytes:
    """ε spent vs cap per stage (left) and the accountant's running total over the events (right), as PNG."""
    return figure_png(ledger_figure(stages, events, total_cap=total_cap))


def ledger_figure(stages: Mapping[str, Mapping[str, float]], events: Sequence[Mapping[str, Any]], *,
                  total_cap: float) -> Any:
    """The figure :func:`ledger_bars` draws."""
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
    right.xaxis.set_major_locator(MaxNLocator(integer=True))  # events are counted: no event 1.5
    right.set_xlabel("ledger event")
    right.set_ylabel("total ε after the event")
    right.set_title("running total (composed, not summed)", fontsize=10)
    right.grid(alpha=0.3)
    return figure


def per_class_accuracy(class_names: Sequence[str], lines: Mapping[str, Sequence[float | None]], *, worst: int | None,
                       ylabel: str = "test accuracy (CNN)") -> bytes:
    """Grouped bars: each line's per-class score (CNN accuracy unless ``ylabel`` says otherwise; None: no bar); the
    worst class's label in red."""
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
    ax.set_ylabel(ylabel)
    if len(lines) > 3:  # long labels: under the plot, where they hide no bar
        ax.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    else:
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


@dataclass(frozen=True)
class Marginal:
    """One variable's distribution in the real test set and in the synthetic set, for :func:`marginals`.

    ``test`` and ``synthetic`` are the shares of each set in each cell (each sums to 1). With ``edges`` (one more
    than the cells) the cells are intervals of a number, drawn as histograms; without, they are the values named by
    ``cells``, drawn as bars side by side.
    """

    title: str
    cells: tuple[str, ...]
    test: np.ndarray
    synthetic: np.ndarray
    edges: np.ndarray | None = None
    xlabel: str = ""


def marginals(panels: Sequence[Marginal], *, columns: int = 3) -> bytes:
    """Small multiples: each panel the test set's distribution (grey) against the synthetic set's (blue)."""
    rows = max(1, math.ceil(len(panels) / columns))
    figure = new_figure(figsize=(3.8 * columns, 2.9 * rows))
    figure.set_layout_engine("constrained")
    axes = figure.subplots(rows, columns, squeeze=False)
    for i, ax in enumerate(axes.flat):
        if i >= len(panels):
            ax.set_axis_off()
            continue
        panel = panels[i]
        if panel.edges is not None:
            widths = np.diff(panel.edges)
            ax.bar(panel.edges[:-1], panel.test / widths, widths, align="edge", color="#bbbbbb", label="real test")
            ax.stairs(panel.synthetic / widths, panel.edges, color=_COLOURS[0], lw=1.6, label="synthetic")
            ax.set_ylabel("density", fontsize=8)
            ax.set_xlabel(panel.xlabel, fontsize=8)
        else:
            x = np.arange(len(panel.cells))
            ax.bar(x - 0.2, panel.test, 0.4, color="#bbbbbb", label="real test")
            ax.bar(x + 0.2, panel.synthetic, 0.4, color=_COLOURS[0], label="synthetic")
            ax.set_xticks(x, [_short(c) for c in panel.cells], rotation=45 if len(x) > 4 else 0,
                          ha="right" if len(x) > 4 else "center", fontsize=7)
            ax.set_ylabel("share of rows", fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.tick_params(axis="x", labelsize=7)
        ax.set_title(panel.title, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        if i == 0:
            ax.legend(fontsize=7)
    return figure_png(figure)


def _short(label: str, most: int = 12) -> str:
    return label if len(label) <= most else label[: most - 1] + "…"
