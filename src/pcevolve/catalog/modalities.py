"""The modalities by ``data.modality``, as plain data: read by the config's checks without importing a modality's
readers, encoders or torch. :data:`pcevolve.modalities.registry.MODALITIES` holds the parts themselves;
``tests/test_part_catalogs.py`` holds the two equal."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModalityTraits:
    """What the config's checks need of a modality: what one sample is called, and whether its encoder can be
    fine-tuned on the private samples under DP-SGD (else the representation stage takes no share of ε)."""

    noun: str
    encoder_trains_under_dp: bool


MODALITY_TRAITS: dict[str, ModalityTraits] = {
    "image": ModalityTraits("image", encoder_trains_under_dp=True),
    "tabular": ModalityTraits("row", encoder_trains_under_dp=False),
    "text": ModalityTraits("text", encoder_trains_under_dp=True),
}
