"""Texts: JSONL (or CSV) in — labelled private texts, an unlabelled public pool — the packaged sentence encoder
(used as pretrained, or with an adapter trained under DP when the representation stage has a budget),
``synthetic.jsonl`` out with the input's own field names and each label with the declared class's JSON type.

This module is the modality's spec, plain data read without importing its parts (:mod:`pcevolve.catalog.modalities`);
the parts are in :mod:`.parts`.
"""

from pcevolve.catalog.modalities import CONTRASTIVE_SETTINGS, ModalityFiles, ModalitySpec, ModalityTraits

SPEC = ModalitySpec(
    name="text",
    traits=ModalityTraits("text", encoder_trains_under_dp=True, sample_form="texts", typed_classes=True),
    files=ModalityFiles(
        accepts=("jsonl", "csv"), run="a text run", default_for="jsonl",
        fixes={"public": "give a JSONL file of unlabelled texts (or a CSV file with a text column)",
               "test": "give a JSONL file of labelled texts (or a CSV file with text and label columns)",
               "any": "give a JSONL file of texts (or a CSV file with a text column)"}),
    parts="pcevolve.modalities.text.parts:TEXT",
    judge="pcevolve.report.judges:judge_text_run",
    headline="pcevolve.report.headlines:print_text_headline",
    curve_point="pcevolve.sweep.curve:text_point",
    settings=("data.label_column", "data.text_column", "data.public_text_column", "augment.word_mask",
              "augment.word_drop", "augment.word_swap", "augment.synonym", "representation.lexical_view",
              *CONTRASTIVE_SETTINGS),
)
