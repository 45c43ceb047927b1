"""A starter configuration chosen from the user's data (``pcevolve init``, one-line ``pcevolve run``).

The user names their folders; :func:`choose_config` reads them through the same readers and checks as
``pcevolve data check`` (so a bad file is named before anything else happens), picks the settings that
depend on the data, and says why for each. Everything else keeps pcevolve's defaults.

What the choices may depend on: the *public* pool (its size, image size and mode), the class names (they
are the delivered set's folder names anyway) and the user's own flags. Never the private images' content
or counts: the config is copied into the run folder, which leaves the secure zone, so it must not carry a
private number. The private set is read only to check it; what that finds (counts per class) is shown on
the console, not written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.data import (
    DataError,
    DataProblem,
    describe_images,
    read_image_folder,
    read_unlabeled_images,
)
from pcevolve.data.image_files import list_folder
from pcevolve.data.kinds import check_run_kinds
from pcevolve.starters.common import (
    DEFAULT_DELTA,
    ENCODER_INPUT_SIZE,
    MAX_IMAGE_SIZE,
    MAX_IMAGES_PER_CLASS,
    MIN_PER_CLASS,
    TERRITORY_SHARE,
    Choice,
    DataPaths,
    Starter,
    StarterError,
    StarterUsageError,
    check_splits,
    classes_choice,
    declared_classes,
    finish_starter,
    run_name,
    screen_findings,
    split_choices,
)

__all__ = ["choose_config"]


def _public_images(public: Path) -> tuple[int, int, str]:
    """Count, most common longer side and majority mode of the pool's images (headers only)."""
    images, folders, _ = list_folder(public)
    infos = describe_images(images)
    if not infos and folders:
        raise DataError([DataProblem(str(public), "the public pool holds folders, not images: it must be one flat "
                                                  "folder of unlabelled images (no class subfolders)")])
    if not infos:
        raise DataError([DataProblem(str(public), "no readable images found in the public pool")])
    side = Counter(max(info.width, info.height) for info in infos).most_common(1)[0][0]
    grey = sum(info.mode in {"1", "L", "LA", "I", "I;16", "F"} for info in infos)
    return len(infos), side, ("L" if grey > len(infos) - grey else "RGB")


def choose_config(private: str | Path, *, public: str | Path | None = None, test: str | Path | None = None,
                  full: str | Path | None = None, epsilon: float = 8.0, name: str | None = None,
                  overrides: Mapping[str, Any] | None = None) -> Starter:
    """Check the data and choose a run configuration for it.

    Args:
        private: The private labelled images, one folder per class, a CSV table or a JSONL file of texts (or a
            prepared root with ``dataset.json``); its kind decides the run's modality (:mod:`pcevolve.data.kinds`).
        public: Unlabelled public data of the same kind: a folder of images, a CSV table with the same columns and
            no label column, or texts (required by the search).
        test, full: Optional real labelled data of the same kind for ``pcevolve evaluate`` (held-out test; a
            larger real set, image runs only).
        epsilon: The total privacy budget.
        name: The run's name (default: from the private folder's name).
        overrides: Dotted keys set last, e.g. ``{"search.synthetic_per_class": 200}``.

    Raises:
        StarterError: The input is not something a run can read (with what to do instead).
        DataError: Problems in the files, each naming its path (as ``pcevolve data check``); first, before any file
            is read, a path that does not exist, a file type pcevolve does not read, or a split whose kind does not
            go with the private data's (one line naming both and what to give instead).
        ConfigError: The chosen settings with ``overrides`` do not validate.
    """
    paths = DataPaths.resolve(private, public=public, test=test, full=full)
    # Every given split's kind is checked against the private data's before any file is opened: a split of the
    # wrong kind is then one line naming both, not what a reader of the other kind makes of it.
    kind = check_run_kinds(paths.private, {"public": paths.public, "test": paths.test, "full": paths.full})
    if kind == "csv":
        from pcevolve.starters.table import choose_table_config  # reads tables: imported when one is given

        return choose_table_config(paths, epsilon=epsilon, name=name, overrides=overrides)
    if kind == "jsonl":
        from pcevolve.starters.text import choose_text_config  # reads texts: imported when one is given

        return choose_text_config(paths, epsilon=epsilon, name=name, overrides=overrides)
    if paths.public is None:
        raise StarterUsageError("no public pool given: pcevolve needs a folder of unlabelled images like yours that "
                           "may be published (e.g. an open dataset of the same kind); it learns its features and "
                           "draws the delivered images from it. Give it with --public FOLDER")

    pool_size, side, mode = _public_images(paths.public)
    size = min(max(side, 8), MAX_IMAGE_SIZE)
    public_set = read_unlabeled_images(paths.public, size=size, mode=mode)  # type: ignore[arg-type]
    # As a run reads it: against the declared classes (--set data.classes=[...], else one per class folder), a class
    # with no image accepted.
    private_set = read_image_folder(paths.private, size=size, mode=mode,  # type: ignore[arg-type]
                                    class_names=declared_classes(overrides), min_per_class=0)
    extras: dict[str, Any] = {}
    for extra in (paths.test, paths.full):
        if extra is not None:
            extras[str(extra)] = read_image_folder(extra, size=size, mode=mode,  # type: ignore[arg-type]
                                                   class_names=private_set.class_names)
    check_splits(private_set, public_set, extras, paths)

    k = len(private_set.class_names)
    if k < 2:
        raise DataError([DataProblem(str(paths.private), "one class folder only; a labelled synthetic set needs two "
                                                         "classes (declare them with --set data.classes=[a,b]; a "
                                                         "class may have no images)")])
    used = min(pool_size, 20_000)
    per_class = int(min(MAX_IMAGES_PER_CLASS, max(MIN_PER_CLASS, used // (2 * k))))
    territory = round(min(2.0, max(1.0, TERRITORY_SHARE * used / (per_class * k))), 2)
    basis = 64 if used >= 5_000 else 32
    if used <= basis:
        raise StarterError(f"{paths.public}: the public pool holds {used} images; the search needs more than "
                           f"{basis} (more than a few hundred works better)")
    native = "" if side == size else f" (they are {side} a side; larger costs memory)"
    # Imported here: the augment package loads torch, which the command line must not load to start.
    from pcevolve.augment.mirror import mirror_test

    mirror = mirror_test(public_set.samples, rng=np.random.default_rng(0))
    flip_why = (f"mirrored copies train the models too: {mirror.finding}" if mirror.symmetric else
                f"no mirrored copies: only {mirror.finding}")
    choices = [
        Choice("name", name or run_name(paths.private), "the run folder is runs/<name>"),
        Choice("seed", 0, "drives the public choices only (which public images, the search's moves), never the "
                          "privacy noise, which comes from the operating system's secure source"),
        Choice("data.private", str(paths.private.resolve()), f"{k} classes, one folder each"),
        classes_choice(private_set.class_names, "the class folders of data.private", "image",
                       "a class folder not in the list is an error", proposed=False),
        *split_choices(paths, pool_size, "image"),
        Choice("data.full", None if paths.full is None else str(paths.full.resolve()),
               "a larger real labelled set: the evaluation's upper reference line (never used by the run)"),
        Choice("data.image_size", size, f"every image is read at {size} x {size}, the public pool's most common "
                                        f"size{native}"),
        Choice("data.image_mode", mode, "grey (L) or colour (RGB), as most public images are"),
        Choice("decoder.name", "nearest-public", "each synthetic sample is delivered as the public image nearest "
                                                 "to it (sharp, real-looking); if your pool lacks your classes, "
                                                 "use pixel-view with search.pixel_frequencies: 14 "
                                                 "(configs/disjoint-demo.yaml)"),
        Choice("decoder.public_images", used, "public images indexed for retrieval (at most 20,000)"),
        Choice("representation.input_size", ENCODER_INPUT_SIZE,
               f"the pretrained backbone sees every image at {ENCODER_INPUT_SIZE} x {ENCODER_INPUT_SIZE} (smaller "
               "ones upsampled): its features separate classes better than at 64, for about 3x the encoding time "
               "(set 64 on a slow machine with a large pool)"),
        Choice("augment.flip", mirror.symmetric, flip_why),
        Choice("search.basis_dim", basis, "principal directions of the public features the search works in"),
        Choice("search.synthetic_per_class", per_class,
               f"delivered samples per class on average; retrieval gives each one its own public image, and "
               f"part of a pool is of other classes, so about pool / (2 x {k} classes) fit (at most "
               f"{MAX_IMAGES_PER_CLASS:,}): more images train a downstream model better than fewer surer ones; "
               "the run delivers fewer where less of the pool looks like a class (search.in_task)"),
        Choice("search.territory", territory,
               f"each class is delivered only from the {territory:g} x {per_class} public images the DP class model "
               "gives to it most surely (three quarters of the pool over all classes, at most twice the delivered "
               "size)"),
        Choice("search.delivery_oversample", 1.0, "with retrieval, draw exactly the delivered size"),
        Choice("privacy.epsilon", float(epsilon), "the total privacy budget of the whole run: the accountant's "
                                                  "composition of every DP step equals it"),
        Choice("privacy.delta", DEFAULT_DELTA, "the probability that the ε guarantee fails; keep it well below one "
                                               "over the number of private samples"),
    ]
    read_as = f"public: {pool_size} images, read at {size} x {size} {mode}"
    found = screen_findings(private_set, public_set, "image", read_as,
                            *(f"{label}: {len(extras[str(p)])} images, same classes — checked"
                              for label, p in (("test", paths.test), ("full", paths.full)) if p is not None))
    return finish_starter(paths, choices, overrides, found, len(private_set))
