"""Figures of a run, its report and a sweep, drawn with matplotlib's object API on an Agg canvas.

``matplotlib.figure.Figure`` is used directly (not ``pyplot``), so importing this module
changes no global backend or state and needs no display.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from pcevolve.io import atomic_write_bytes


def new_figure(*, figsize: tuple[float, float]) -> Figure:
    """A figure with its own Agg canvas (no pyplot, no global state)."""
    figure = Figure(figsize=figsize)
    FigureCanvasAgg(figure)
    return figure


def figure_png(figure: Figure) -> bytes:
    """A figure as PNG bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return buffer.getvalue()


def fitness_curve(records: Sequence[dict[str, Any]]) -> bytes:
    """Best and mean fitness per generation (top) and the best individual's terms (bottom)."""
    generations = [r["generation"] for r in records]
    figure = new_figure(figsize=(7, 6))
    top, bottom = figure.subplots(2, 1, sharex=True)
    top.plot(generations, [r["best"] for r in records], label="best of generation")
    top.plot(generations, [r["mean"] for r in records], label="population mean", alpha=0.7)
    top.plot(generations, [r["engine"]["best_so_far"] for r in records], "--", label="best so far")
    top.set_ylabel("DP fitness F")
    top.legend(loc="lower right", fontsize=8)
    top.grid(alpha=0.3)
    for name in records[0]["terms"] if records else ():
        bottom.plot(generations, [r["terms"][name] for r in records], label=name)
    bottom.set_xlabel("generation")
    bottom.set_ylabel("term (best individual)")
    bottom.legend(loc="best", fontsize=7, ncol=3)
    bottom.grid(alpha=0.3)
    return figure_png(figure)


def write_fitness_curve(path: str | os.PathLike[str], records: Sequence[dict[str, Any]]) -> Path:
    return atomic_write_bytes(path, fitness_curve(records))
