"""The modalities by ``data.modality``, as plain data: read by the config's checks and by every part that treats
kinds of data differently, without importing a modality's readers, encoders or torch.
:data:`pcevolve.modalities.registry.MODALITIES` holds the parts themselves; ``tests/test_part_catalogs.py`` holds
the two equal."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModalityTraits:
    """What a modality is, as the parts that do not build it need to know.

    Attributes:
        noun: What one sample is called in messages to the user ("image", "row").
        encoder_trains_under_dp: Whether its encoder can be fine-tuned on the private samples under DP-SGD (else the
            representation stage takes no share of ε).
        classes_from_folders: Whether a class is a folder of samples (the folders of ``data.private`` may declare
            the classes, and a class name must be a folder name) rather than a label column or key, whose classes
            ``data.classes`` must list.
        pixels: Whether its samples are pixels: the pool may be labelled by a CNN on public pixels (the
            ``auto`` pool labeller), the search may add pixel frequencies, and a mirror test checks flipping.
        needs_schema: Whether a run needs column types, bounds and categories from public data (a public table or
            ``data.schema_file``).
        typed_classes: Whether each declared class keeps its YAML type (texts: JSON Lines labels are typed).
        full_real_reference: Whether the judges take a full real training set (``data.full``, ``--full``) as the
            upper reference line.
    """

    noun: str
    encoder_trains_under_dp: bool
    classes_from_folders: bool = False
    pixels: bool = False
    needs_schema: bool = False
    typed_classes: bool = False
    full_real_reference: bool = False


MODALITY_TRAITS: dict[str, ModalityTraits] = {
    "image": ModalityTraits("image", encoder_trains_under_dp=True, classes_from_folders=True, pixels=True,
                            full_real_reference=True),
    "tabular": ModalityTraits("row", encoder_trains_under_dp=False, needs_schema=True),
    "text": ModalityTraits("text", encoder_trains_under_dp=True, typed_classes=True),
}
