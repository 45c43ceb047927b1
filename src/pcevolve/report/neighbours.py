"""Synthetic samples beside their nearest public samples: :func:`row_pairs` for tables, :func:`text_pairs` for texts,
:func:`pairs_section` around either; and :func:`spread`, the even choice of samples per class every preview makes.

The public pool is public: showing it costs no privacy, and with a retrieval decoder it is where every synthetic
sample comes from. But a public pool can hold a private sample or a near duplicate of one. The report's safety
checks refuse any such row or text (both previews of a pair go through them:
:meth:`~pcevolve.report.document.Document.previews`), so a pair whose public neighbour is one is left out here,
with the same tests, as synthetic samples that are one are left out of the previews. Nothing here reads private
data beyond that check.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pcevolve.data import LabeledDataset
from pcevolve.data.table_schema import TableSchema
from pcevolve.evaluation.copies import nearest_neighbours
from pcevolve.evaluation.table_encoding import attack_space
from pcevolve.evaluation.table_privacy import exact_copies
from pcevolve.evaluation.text_duplicates import shared_runs, text_copies
from pcevolve.evaluation.text_spaces import normalise
from pcevolve.report.document import Paragraph, RowPairs, RowPreview, Section, TextPairs, TextPreview

#: Row pairs shown at most (spread over the classes): a pair takes two columns of the page, and a table's values
#: stay whole in up to four.
ROW_PAIRS = 4
#: Text pairs shown per class.
TEXT_PAIRS_PER_CLASS = 3
_DASH = "—"


def spread(labels: np.ndarray, classes: int, allowed: np.ndarray, per_class: int) -> np.ndarray:
    """Up to ``per_class`` indices of each class among the ``allowed`` ones, evenly spaced through the class (class
    order, then file order)."""
    chosen = []
    for k in range(classes):
        rows = np.flatnonzero((np.asarray(labels) == k) & allowed)
        if rows.size:
            chosen.append(rows[np.unique(np.linspace(0, rows.size - 1, min(per_class, rows.size)).round().astype(int))])
    return np.concatenate(chosen) if chosen else np.zeros(0, np.int64)


def _pair_count(classes: int, most: int) -> int:
    return max(1, most // max(classes, 1))


def row_pairs(schema: TableSchema, synthetic: LabeledDataset, allowed: np.ndarray, public: np.ndarray,
              private: np.ndarray, *, most: int = ROW_PAIRS) -> tuple[RowPairs | None, bool]:
    """Up to ``most`` synthetic rows (among the ``allowed`` ones, spread over the classes), each beside its nearest
    public row in the membership attack's space (:func:`~pcevolve.evaluation.table_encoding.attack_space`, scaled by the
    public rows): numeric columns in standard deviations, a changed category counting as one.

    Returns:
        The pairs (None when no pair is left) and whether a pair was left out because its public row equals a
        private row.
    """
    chosen = spread(synthetic.labels, len(synthetic.class_names), allowed, _pair_count(len(synthetic.class_names),
                                                                                     most))[:most]
    public = np.asarray(public, np.float64)
    if not chosen.size or not len(public):
        return None, False
    rows = synthetic.samples[chosen]
    nearest, distance = nearest_neighbours(attack_space(rows, schema, public), attack_space(public, schema, public))
    neighbours = public[nearest]
    private_hit = np.zeros(len(chosen), dtype=bool)
    private_hit[exact_copies(neighbours, private)] = True
    keep = ~private_hit
    if not keep.any():
        return None, bool(private_hit.any())
    rows, neighbours, distance, chosen = rows[keep], neighbours[keep], distance[keep], chosen[keep]
    columns = (*schema.names, schema.label_column)

    def cells(values: np.ndarray) -> tuple[str, ...]:
        return tuple(column.format(v) for column, v in zip(schema.columns, values, strict=True))

    synthetic_preview = RowPreview("pairs_synthetic", columns=columns, label_column=schema.label_column,
                                   cells=tuple(cells(r) + (synthetic.class_names[synthetic.labels[i]],)
                                               for r, i in zip(rows, chosen)),
                                   values=rows, sources=tuple(synthetic.sources[i] for i in chosen))
    public_preview = RowPreview("pairs_public", columns=columns, label_column=schema.label_column,
                                cells=tuple(cells(r) + (_DASH,) for r in neighbours), values=neighbours,
                                sources=tuple(f"public row {i + 1}" for i in nearest[keep]))
    notes = tuple("0 (the same row)" if np.array_equal(a, b) else f"{d:.2f}"
                  for a, b, d in zip(rows, neighbours, distance))
    pairs = RowPairs("nearest_public_rows", synthetic_preview, public_preview, notes,
                     caption="Each synthetic row (left of a pair) beside the public row nearest to it (right); a "
                             "public value that differs is marked. Distance: Euclidean, numeric columns in standard "
                             "deviations of the public table, a different category counting as one.")
    return pairs, bool(private_hit.any())


def text_pairs(synthetic: LabeledDataset, allowed: np.ndarray, public: np.ndarray, private: np.ndarray, *,
               show: Callable[[str], str], per_class: int = TEXT_PAIRS_PER_CLASS) -> tuple[TextPairs | None, bool]:
    """Up to ``per_class`` synthetic texts per class (among the ``allowed`` ones), each beside the public text most
    similar to it (TF-IDF cosine similarity, weights from the public texts:
    :func:`~pcevolve.evaluation.text_duplicates.text_copies`); ``show`` gives a text's displayed form.

    Returns:
        The pairs (None when no pair is left) and whether a pair was left out because its public text is, holds
        or nearly equals a private text.
    """
    texts = np.asarray(synthetic.samples, dtype=str)
    public = np.asarray(public, dtype=str)
    chosen = spread(synthetic.labels, len(synthetic.class_names), allowed, per_class)
    if not chosen.size or not len(public):
        return None, False
    found = text_copies(texts[chosen], public)
    neighbours = public[found.nearest]
    shown = np.array([show(t) for t in neighbours], dtype=str)
    both = np.concatenate([neighbours, shown])
    refused = text_copies(both, private).near | shared_runs(both, private)
    keep = ~(refused[: len(chosen)] | refused[len(chosen):])
    if not keep.any():
        return None, bool((~keep).any())
    chosen, neighbours, shown, cosine = chosen[keep], neighbours[keep], shown[keep], found.cosine[keep]
    same = np.array([normalise(a) == normalise(b) for a, b in zip(texts[chosen], neighbours)], dtype=bool)
    labels = tuple(str(synthetic.class_names[synthetic.labels[i]]) for i in chosen)
    synthetic_preview = TextPreview("pairs_synthetic", texts=tuple(texts[chosen].tolist()),
                                    shown=tuple(show(t) for t in texts[chosen]), labels=labels,
                                    sources=tuple(synthetic.sources[i] for i in chosen))
    public_preview = TextPreview("pairs_public", texts=tuple(neighbours.tolist()),
                                 shown=tuple("= the same text: it is in the public pool" if s else text
                                             for s, text in zip(same, shown)),
                                 labels=("public",) * len(chosen),
                                 sources=tuple(f"public text {i + 1}" for i in found.nearest[keep]))
    notes = tuple(f"{c:.2f}" + (" (same text)" if s else "") for c, s in zip(cosine, same))
    pairs = TextPairs("nearest_public_texts", synthetic_preview, public_preview, notes,
                      caption="Each synthetic text beside the public text most similar to it. Similarity: cosine of "
                              "the two texts' word and word-pair weights (TF-IDF, weights from the public texts); 1 "
                              "means the same words in the same proportions.")
    return pairs, bool((~keep).any())


def pairs_section(pairs: RowPairs | TextPairs | None, skipped: bool, *, noun: str, decoder: str, same: str,
                  matches: str, has_public: bool) -> Section:
    """The report section of a table's or texts' pairs (:func:`row_pairs`, :func:`text_pairs`).

    Args:
        pairs: The pairs to show, or None (none left).
        skipped: Whether pairs were left out because their public neighbour is a private sample.
        noun: What one sample is called ("row", "text").
        decoder: The run's ``decoder.name``.
        same: How a pair of equal samples reads ("distance 0", "similarity 1").
        matches: How a public sample that is a private one is said ("equals", "is or holds").
        has_public: Whether the run has a public pool at all.
    """
    title, anchor = f"Synthetic {noun}s beside their nearest public {noun}s", "nearest-public"
    if not has_public:
        return Section(title, (Paragraph(f"The run has no public {noun}s to compare the synthetic {noun}s with."),),
                       anchor=anchor)
    blocks: list[RowPairs | TextPairs | Paragraph] = [] if pairs is None else [pairs]
    blocks.append(Paragraph(
        f"How new are the synthetic {noun}s? The run's decoder is {decoder!r}"
        + (f": it delivers public {noun}s, chosen and labelled by the search, so each synthetic {noun} is expected "
           f"to be a public {noun} itself ({same})." if decoder == "nearest-public" else ".")
        + f" The public {noun}s shown were checked against every private {noun} too"
        + (f"; pairs whose public {noun} {matches} a private {noun} were left out." if skipped else "."),
        tone="note"))
    return Section(title, tuple(blocks), anchor=anchor)
