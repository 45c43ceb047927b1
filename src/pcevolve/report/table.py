"""A tabular run's evaluation → its report (``RUN/report/``): headline, per class, utility, fidelity (with the
distributions of the farthest columns), privacy (with the attack's ROC curve), a preview of synthetic rows, synthetic
rows beside their nearest public rows, the ledger, the audit, the search's fitness, the settings; and the writer,
:func:`write_table_report`.

Every number comes from :meth:`~pcevolve.evaluation.table_run.TableRunEvaluation.to_json` (the shareable figures),
so the report shows nothing that ``evaluation.json`` does not hold, and a figure computed on the private rows no finer
than it ships there (rates as whole percents, AUCs with two decimals); files are named by their names only. Two
figures are drawn from the evaluation's samples instead, as the image report draws its own: the column histograms
(synthetic and test rows only) and the attack's ROC curve, at fixed false-positive rates with rounded rates
(:func:`~pcevolve.report.figures.shared_roc`), so that its steps do not show the member count. The previewed rows are
synthetic and public rows, and the writer refuses the report if one of them equals a private row. The document's
frame and the sections it shares with the text report are :mod:`~pcevolve.report.file_report`'s.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.evaluation.table_fidelity import TVD_BINS
from pcevolve.evaluation.table_privacy import exact_copies
from pcevolve.evaluation.table_run import TableRunEvaluation
from pcevolve.evaluation.table_utility import LINES, MODELS
from pcevolve.report import figures, file_report
from pcevolve.report.build import num
from pcevolve.report.document import Document, Paragraph, Plot, RowPreview, Section, Table
from pcevolve.report.marginals import column_marginals, farthest_columns
from pcevolve.report.neighbours import pairs_section, row_pairs, spread
from pcevolve.report.write import write_run_report

#: Synthetic rows per class in the preview.
PREVIEW_PER_CLASS = 5
#: How the report names a tabular run's samples.
WORDS = file_report.SampleWords(sample="row", synthetic="table", private="private table", run="table")
_DASH = "—"


def build_table_document(evaluation: TableRunEvaluation, *, preview_per_class: int = PREVIEW_PER_CLASS) -> Document:
    """The report of one tabular evaluation (no file is written here)."""
    data = evaluation.to_json()
    # Rows equal to a private row are left out of every preview: the safety check would refuse the whole report.
    allowed = np.ones(len(evaluation.synthetic), dtype=bool)
    allowed[exact_copies(evaluation.synthetic.samples, evaluation.private.samples)] = False
    return file_report.file_run_document(
        evaluation, data, WORDS, MODELS, headline=_headline(evaluation, data), utility=_utility(data),
        distance=_fidelity(evaluation, data), privacy=_privacy(evaluation, data),
        preview=_preview(evaluation, allowed, preview_per_class), pairs=_pairs(evaluation, allowed),
        settings=_settings(data))


def _fixed(value: float | None) -> str:
    """Distances in [0, 1] with three decimals, so that a column of them lines up (``num`` would drop zeros)."""
    return _DASH if value is None else f"{value:.3f}"


def _auc_meaning(judgement: dict[str, Any]) -> str:
    first = next((r for r in judgement["utility"] if r.get("auc_kind")), None)
    if first is not None and first["auc_kind"] == "binary":
        return (f"ROC AUC: how well the model's score for {first['positive_class']!r} (the smallest class of the test "
                "set) ranks those rows above the others; 0.5 is guessing, 1 is perfect.")
    return ("ROC AUC: the mean over classes of how well the model's score for a class ranks that class's rows above "
            "the others (macro one-vs-rest); 0.5 is guessing, 1 is perfect.")


def _headline(evaluation: TableRunEvaluation, data: dict[str, Any]) -> Section:
    judgement = data["judgement"]
    fidelity, privacy = judgement["fidelity"], judgement["privacy"]
    real_tvd = [c["tvd_real_reference"] for c in fidelity["columns"] if c["tvd_real_reference"] is not None]
    real_corr = fidelity["correlation_real_reference"]
    distances = (
        ("mean total-variation distance per column", _fixed(fidelity["mean_tvd"]),
         _fixed(float(np.mean(real_tvd))) if real_tvd else _DASH, "lower is closer to the real test rows"),
        ("mean correlation difference", _fixed(fidelity["correlation"]["mean_abs_difference"]),
         _DASH if real_corr is None else _fixed(real_corr["mean_abs_difference"]),
         "lower is closer to the real test rows"),
    )
    copied = privacy is not None and privacy["private_rows_copied"]
    return file_report.headline_section(
        evaluation, data, WORDS, MODELS,
        scores=(("ROC AUC", ("auc",)), ("accuracy / macro-F1", ("accuracy", "macro_f1"))), distances=distances,
        copies=(("synthetic rows copied from the private table", "YES" if copied else "none"),),
        caption="Models trained on the synthetic rows, or on the private rows as a reference, and tested on the real "
                "test rows; distances to the test rows' columns. The reference shows what the private rows "
                "themselves would give — it cannot be published.",
        note=Paragraph(_auc_meaning(judgement), tone="note"),
        copied="Some synthetic rows equal a private row in every column: they disclose that person's record. Remove "
               "them before sharing the table (see Privacy)." if copied else None)


def _utility(data: dict[str, Any]) -> Section:
    return file_report.utility_section(
        data, WORDS, model="model", scores=(("ROC AUC", "auc"), ("accuracy", "accuracy"), ("macro-F1", "macro_f1")),
        caption="Every model on every training set, tested on the same real test rows. Rows trained on the synthetic "
                "set are highlighted.",
        notes=(Paragraph(_auc_meaning(data["judgement"]), tone="note"),
               Paragraph("Both models are fixed in advance and never tuned on the test rows: gradient-boosted trees "
                         "(scikit-learn's HistGradientBoostingClassifier with its default settings) and logistic "
                         "regression (L2 penalty, C = 1). Categorical columns are one-hot encoded; numeric columns are "
                         "standardised with the mean and standard deviation of each model's own training set. The real "
                         "reference is trained on the private rows: it shows what they would give, is not "
                         "differentially private, and its size is given by the run's noisy count.", tone="note")))


def _fidelity(evaluation: TableRunEvaluation, data: dict[str, Any]) -> Section:
    fidelity = data["judgement"]["fidelity"]
    columns = fidelity["columns"]
    worst = max(range(len(columns)), key=lambda i: columns[i]["tvd"]) if columns else None
    table = Table(("column", "kind", "compared on", "TVD synthetic → test", "TVD private → test (reference)"),
                  tuple((c["column"], c["kind"], f"{c['cells']} cells ({c['basis']})", _fixed(c["tvd"]),
                         _fixed(c["tvd_real_reference"])) for c in columns),
                  highlight=() if worst is None else (worst,),
                  caption="Total-variation distance (TVD) between each column's distribution in the synthetic rows "
                          "and in the real test rows: the share of rows that would have to move to another cell for "
                          "the two to agree (0 = the same, 1 = no overlap). The farthest column is highlighted. The "
                          "reference is the private rows' own distance to the test rows: sampling noise alone gives "
                          "about that much.")
    correlation, real = fidelity["correlation"], fidelity["correlation_real_reference"]
    largest = correlation["largest_pair"]
    single = correlation["mean_abs_difference"] is None
    text = ("The table has a single column: there is no pair of columns to correlate." if single else
            f"Correlation between columns: the mean absolute difference between the synthetic and the test rows' "
            f"pairwise correlations is {_fixed(correlation['mean_abs_difference'])} over {correlation['pairs']} pairs "
            + ("" if real is None or real["mean_abs_difference"] is None else
               f"(private rows vs test: {_fixed(real['mean_abs_difference'])}) ")
            + f"— the largest, {_fixed(correlation['largest_abs_difference'])}, between {largest[0]} and "
              f"{largest[1]}. Correlations are Pearson's, on the numeric values and one 0/1 column per category "
              "(pairs inside one categorical column are left out); 0 means the columns move together in the same "
              "way in both tables.")
    return Section("Fidelity", (
        table,
        Plot("column_tvd", figures.tvd_bars([c["column"] for c in columns], [c["tvd"] for c in columns],
                                            [c["tvd_real_reference"] for c in columns]),
             "Total-variation distance per column; black ticks: the private rows' own distance to the test rows."),
        _marginals(evaluation, columns),
        Paragraph(text),
        Paragraph(f"Numeric columns are cut into up to {TVD_BINS} cells at quantiles of the public table (or of the "
                  "test rows when the run has no public table); a numeric column with no more distinct values than "
                  "that is compared value by value.", tone="note"),
    ), anchor="fidelity")


def _marginals(evaluation: TableRunEvaluation, columns: list[dict[str, Any]]) -> Plot:
    """Histograms of the columns farthest from the test rows: synthetic against real test rows."""
    chosen = farthest_columns([c["tvd"] for c in columns])
    panels = column_marginals(evaluation.schema, evaluation.test.samples, evaluation.synthetic.samples, chosen,
                              titles=[f"{columns[j]['column']} (TVD {columns[j]['tvd']:.2f})" for j in chosen])
    return Plot("column_distributions", figures.marginals(panels),
                f"The {len(chosen)} columns farthest from the real test rows (largest TVD first): the share of the "
                "test rows (grey) and of the synthetic rows (blue) in each category or value range; a numeric column "
                "spans the test rows' range, the rarest 0.5% at each end counted in the end bins.")


def _privacy(evaluation: TableRunEvaluation, data: dict[str, Any]) -> Section:
    privacy = data["judgement"]["privacy"]
    if privacy is None:
        return file_report.no_attack_section(WORDS)
    copied = privacy["private_rows_copied"]
    copies = (("synthetic rows equal to a private row", "YES — at least one" if copied else "none", copied),
              ("synthetic rows equal to a test row (what chance gives)", str(privacy["test_rows_copied"]), False))
    attack = Paragraph(
        "The membership attack plays the part of someone who holds the synthetic table and wants to know whether a "
        "given person's row was in the private table. It scores each real row by how close it lies to its nearest "
        "synthetic row (closer: more likely a member), and is tried on private rows and on as many real test rows "
        "that were never used. Its AUC is the chance that it ranks a random private row above a random unused row: "
        "0.5 means it cannot tell them apart — what a private synthetic table should show — and 1.0 means it always "
        "can. Distances are measured with numeric columns standardised and a changed category counting as much as "
        "one standard deviation.")
    note = Paragraph(
        "An exact copy compares every column (not the label). Rows equal to a test row show how often equal rows "
        "occur by chance in this table: with few, coarse columns they are common and harmless. The AUC is rounded to "
        "two decimals and copies are reported only as present or not, because exact values would reveal the size of "
        "the private table; they are in the run's secure/evaluation.json.", tone="note")
    return file_report.privacy_section(evaluation, privacy, copies, attack=attack,
                                       scored_by="distance to closest record", note=note)


def _preview(evaluation: TableRunEvaluation, allowed: np.ndarray, per_class: int) -> Section:
    synthetic, schema = evaluation.synthetic, evaluation.schema
    index = spread(synthetic.labels, len(synthetic.class_names), allowed, per_class)
    cells = tuple(tuple(column.format(value) for column, value in zip(schema.columns, synthetic.samples[i],
                                                                       strict=True))
                  + (synthetic.class_names[synthetic.labels[i]],) for i in index)
    preview = RowPreview("synthetic_rows", columns=(*schema.names, schema.label_column), cells=cells,
                         values=synthetic.samples[index], sources=tuple(synthetic.sources[i] for i in index),
                         caption=f"Synthetic rows, up to {per_class} per class, evenly spaced through synthetic.csv.",
                         label_column=schema.label_column)
    note = ("Before the report was written every row above was compared with every private row, and the report "
            "would have been refused had one been equal to a private row. The report holds no private row."
            + (" Synthetic rows equal to a private row were left out of this preview." if not allowed.all() else ""))
    return Section("Synthetic rows (preview)", (preview, Paragraph(note, tone="note")), anchor="preview")


def _pairs(evaluation: TableRunEvaluation, allowed: np.ndarray) -> Section:
    pairs, skipped = (None, False) if evaluation.public is None else row_pairs(
        evaluation.schema, evaluation.synthetic, allowed, evaluation.public, evaluation.private.samples)
    return pairs_section(pairs, skipped, noun="row", decoder=evaluation.config.decoder.name, same="distance 0",
                         matches="equals", has_public=evaluation.public is not None)


def _settings(data: dict[str, Any]) -> Section:
    schema = data["data"]["schema"]
    columns = tuple((c["name"], c["kind"], (f"{len(c['categories'])} categories" if c["kind"] == "categorical" else
                                           f"{num(c['low'])} to {num(c['high'])}"
                                           + (", whole numbers" if c.get("integer") else "")))
                    for c in schema["columns"])
    return file_report.settings_section(
        data, WORDS,
        Table(("column", "kind", "values (from public data)"), columns,
              caption=f"The table's columns; the label column is {schema['label_column']!r}."),
        Table(("setting", "value"), (("seed", str(data["judgement"]["seed"])),
                                     ("models", ", ".join(MODELS.values())),
                                     ("training sets", ", ".join(LINES.values())),
                                     ("numeric cells per column", str(TVD_BINS)))))


def write_table_report(evaluation: TableRunEvaluation, *, folder: str | os.PathLike[str] | None = None,
                       preview_per_class: int = PREVIEW_PER_CLASS) -> Path:
    """Build and write the report of a tabular evaluation into ``folder`` (default ``RUN/report``), and its exact
    private figures into ``RUN/secure/evaluation.json`` (:func:`~pcevolve.report.write.write_run_report`).

    Raises:
        PrivateSampleInReport: A previewed row equals a private row; nothing was written.
    """
    document = build_table_document(evaluation, preview_per_class=preview_per_class)
    return write_run_report(evaluation, evaluation.folder, document, folder=folder,
                            private_rows=evaluation.private.samples)
