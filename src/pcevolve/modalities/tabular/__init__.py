"""Tables: CSV files in (a labelled private table, an unlabelled public table), a contrastive MLP over the encoded
columns, ``synthetic.csv`` out with exactly the schema's columns, categories and bounds, and the label column.

This module is the modality's spec, plain data read without importing its parts (:mod:`pcevolve.catalog.modalities`);
the parts are in :mod:`.parts`.
"""

from pcevolve.catalog.modalities import ModalityFiles, ModalitySpec, ModalityTraits

SPEC = ModalitySpec(
    name="tabular",
    traits=ModalityTraits("row", encoder_trains_under_dp=False, sample_form="rows", needs_schema=True),
    files=ModalityFiles(
        accepts=("csv",), run="a table run", default_for="csv",
        fixes={"public": "give a CSV table with the private table's columns and no label column",
               "test": "give a CSV table with the private table's columns and its label column",
               "any": "give a CSV table with the same columns (a public pool without the label column)"}),
    parts="pcevolve.modalities.tabular.parts:TABULAR",
    judge="pcevolve.report.judges:judge_table_run",
    headline="pcevolve.report.headlines:print_table_headline",
    curve_point="pcevolve.sweep.curve:table_point",
    settings=("data.label_column", "data.schema_file"),
)
