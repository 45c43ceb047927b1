"""Images: class folders in, a pretrained backbone fine-tuned contrastively, class folders of PNGs out.

This module is the modality's spec, plain data read without importing its parts (:mod:`pcevolve.catalog.modalities`);
the parts are in :mod:`.parts`.
"""

from pcevolve.catalog.modalities import CONTRASTIVE_SETTINGS, ModalityFiles, ModalitySpec, ModalityTraits

SPEC = ModalitySpec(
    name="image",
    traits=ModalityTraits("image", encoder_trains_under_dp=True, sample_form="images", classes_from_folders=True,
                          pixels=True, full_real_reference=True),
    files=ModalityFiles(
        accepts=("images",), run="an image run", default_for="images",
        fixes={"public": "give a flat folder of unlabelled images (no class subfolders)",
               "test": "give a folder with one folder of images per class",
               "full": "give a folder with one folder of images per class",
               "any": "give an image folder (a flat folder for a public pool, one folder per class for labelled "
                      "data)"}),
    parts="pcevolve.modalities.image.parts:IMAGE",
    judge="pcevolve.report.judges:judge_image_run",
    headline="pcevolve.report.headlines:print_image_headline",
    curve_point="pcevolve.sweep.curve:image_point",
    settings=("data.image_size", "data.image_mode", "augment.crop", "augment.flip", "augment.color_jitter",
              "augment.blur", "representation.backbone", "representation.input_size", "representation.freeze_fraction",
              "representation.trainable_blocks", "representation.pixel_view", "search.pixel_frequencies",
              *CONTRASTIVE_SETTINGS),
)
