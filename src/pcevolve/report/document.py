"""The report as data: sections of paragraphs, tables, plots, sample grids, row and text previews, rendered twice
(HTML, Markdown).

Two kinds of image may enter a report, and they are kept apart on purpose:

* :class:`Plot` — a chart drawn from numbers (curves, bars, histograms). It holds PNG bytes.
* :class:`SampleGrid` — data samples shown as pictures. It holds the raw uint8 samples, not
  a PNG, so that :func:`pcevolve.report.safety.check_no_private_samples` can compare every one
  of them with the private images before anything is written; it is drawn only after that.

A plot must never be made from samples; a sample enters a report only through a grid. Likewise a table row
(tabular data) enters only through a :class:`RowPreview`, which keeps the raw row for the same check, and a text
only through a :class:`TextPreview`, which keeps the full text next to what is shown of it. :class:`RowPairs` and
:class:`TextPairs` (a synthetic sample beside its nearest public one) hold two such previews, and
:meth:`Document.previews` and :meth:`Document.text_previews` hand out both, so the checks see every row and text
either shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np


@dataclass(frozen=True)
class Paragraph:
    """Plain text. ``tone`` ``"note"`` is a caveat, ``"warning"`` something the user must act on."""

    text: str
    tone: Literal["text", "note", "warning"] = "text"


@dataclass(frozen=True)
class Table:
    """Cells as text. ``highlight``: row indices to mark (the worst class, a fired hint)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    highlight: tuple[int, ...] = ()
    caption: str = ""

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"a row has {len(row)} cells for {len(self.columns)} columns: {row}")


@dataclass(frozen=True)
class Plot:
    """A chart drawn from numbers only, as PNG bytes; ``name`` is its file stem."""

    name: str
    png: bytes = field(repr=False)
    caption: str = ""


@dataclass(frozen=True)
class SampleGrid:
    """Samples shown as pictures: ``images[i]`` (uint8) in the row of ``row_names[rows[i]]``; ``name`` is the file stem.

    ``sources[i]`` says where image i came from (a file path), for error messages.
    """

    name: str
    images: np.ndarray = field(repr=False)
    rows: np.ndarray = field(repr=False)
    row_names: tuple[str, ...]
    sources: tuple[str, ...] = ()
    caption: str = ""

    def __post_init__(self) -> None:
        if np.asarray(self.images).dtype != np.uint8 or len(self.images) != len(self.rows):
            raise ValueError("a sample grid holds uint8 images, one row index per image")


@dataclass(frozen=True)
class RowPreview:
    """Table rows shown as a table: ``cells[i]`` (text, one per column) is the rendering of ``values[i]``.

    Like a :class:`SampleGrid` it keeps the raw rows (float64 (N, F), schema order), so that
    :func:`pcevolve.report.safety.check_no_private_rows` can compare every one of them with every private row
    before anything is written. ``sources[i]`` says where row i came from, for error messages.
    """

    name: str
    columns: tuple[str, ...]
    cells: tuple[tuple[str, ...], ...]
    values: np.ndarray = field(repr=False)
    sources: tuple[str, ...] = ()
    caption: str = ""
    #: The column holding each row's class, if any: a preview too wide for the page is shown turned (one column
    #: per row), headed by it.
    label_column: str | None = None

    def __post_init__(self) -> None:
        if self.label_column is not None and self.label_column not in self.columns:
            raise ValueError(f"label column {self.label_column!r} is not one of the columns {self.columns}")
        values = np.asarray(self.values)
        if values.ndim != 2 or len(values) != len(self.cells):
            raise ValueError("a row preview holds (N, F) values, one row of cells per row of values")
        for row in self.cells:
            if len(row) != len(self.columns):
                raise ValueError(f"a previewed row has {len(row)} cells for {len(self.columns)} columns: {row}")


@dataclass(frozen=True)
class TextPreview:
    """Texts shown as a table of (class, text): row i shows ``labels[i]`` and ``shown[i]``, the displayed form of
    ``texts[i]`` (the whole text, or its shortened start).

    Like a :class:`RowPreview` it keeps the full texts, so that :func:`pcevolve.report.safety.check_no_private_texts`
    can compare both what is shown and the whole text with every private text before anything is written.
    ``sources[i]`` says where text i came from (``file:line N``), for error messages.
    """

    name: str
    texts: tuple[str, ...]
    shown: tuple[str, ...]
    labels: tuple[str, ...]
    sources: tuple[str, ...] = ()
    columns: tuple[str, str] = ("class", "text")
    caption: str = ""

    def __post_init__(self) -> None:
        if not len(self.texts) == len(self.shown) == len(self.labels):
            raise ValueError(f"a text preview needs one shown form and one label per text, got {len(self.texts)} "
                             f"texts, {len(self.shown)} shown, {len(self.labels)} labels")


@dataclass(frozen=True)
class RowPairs:
    """Synthetic rows, each beside its nearest public row: pair i is ``synthetic.cells[i]`` and
    ``neighbours.cells[i]`` (same columns; a neighbour has no label, so its label cell is a dash), and ``notes[i]``
    says how close the two are. Both previews keep their raw rows for the no-private-row check."""

    name: str
    synthetic: RowPreview
    neighbours: RowPreview
    notes: tuple[str, ...]
    caption: str = ""

    def __post_init__(self) -> None:
        if not len(self.synthetic.cells) == len(self.neighbours.cells) == len(self.notes):
            raise ValueError("row pairs need one neighbour and one note per synthetic row")
        if self.synthetic.columns != self.neighbours.columns:
            raise ValueError("a row and its neighbour are shown in the same columns")


@dataclass(frozen=True)
class TextPairs:
    """Synthetic texts, each beside its nearest public text: pair i is ``synthetic.shown[i]`` (class
    ``synthetic.labels[i]``) and ``neighbours.shown[i]``; ``notes[i]`` says how close the two are. Both previews keep
    their whole texts for the no-private-text check."""

    name: str
    synthetic: TextPreview
    neighbours: TextPreview
    notes: tuple[str, ...]
    columns: tuple[str, str, str, str] = ("class", "synthetic text", "nearest public text", "similarity")
    caption: str = ""

    def __post_init__(self) -> None:
        if not len(self.synthetic.texts) == len(self.neighbours.texts) == len(self.notes):
            raise ValueError("text pairs need one neighbour and one note per synthetic text")


Block = Paragraph | Table | Plot | SampleGrid | RowPreview | TextPreview | RowPairs | TextPairs


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Block, ...]
    anchor: str = ""


@dataclass(frozen=True)
class Document:
    title: str
    sections: tuple[Section, ...]
    subtitle: str = ""

    def blocks(self) -> list[Block]:
        return [block for section in self.sections for block in section.blocks]

    def grids(self) -> list[SampleGrid]:
        return [block for block in self.blocks() if isinstance(block, SampleGrid)]

    def plots(self) -> list[Plot]:
        return [block for block in self.blocks() if isinstance(block, Plot)]

    def previews(self) -> list[RowPreview]:
        """Every row preview, those inside :class:`RowPairs` included (each row the report shows is in one)."""
        found: list[RowPreview] = []
        for block in self.blocks():
            if isinstance(block, RowPreview):
                found.append(block)
            elif isinstance(block, RowPairs):
                found += [block.synthetic, block.neighbours]
        return found

    def text_previews(self) -> list[TextPreview]:
        """Every text preview, those inside :class:`TextPairs` included (each text the report shows is in one)."""
        found: list[TextPreview] = []
        for block in self.blocks():
            if isinstance(block, TextPreview):
                found.append(block)
            elif isinstance(block, TextPairs):
                found += [block.synthetic, block.neighbours]
        return found
