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

import re
import textwrap
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from pcevolve.config.loader import parse_config, with_dotted
from pcevolve.config.schema import RunConfig, class_names_from
from pcevolve.data import (
    DataError,
    DataProblem,
    LabeledDataset,
    describe_images,
    find_duplicates,
    pool_overlap,
    pool_overlap_warning,
    read_image_folder,
    read_unlabeled_images,
    small_classes_note,
)
from pcevolve.data.image_files import list_folder
from pcevolve.data.kinds import check_run_kinds
from pcevolve.io import read_json

# Images are held in memory at this size; the encoder sees ENCODER_INPUT_SIZE a side whatever the input, so larger only
# costs memory (20,000 RGB images at 128 x 128 are 1 GB) and, with retrieval, gives sharper delivered images.
MAX_IMAGE_SIZE = 128
# The backbone sees every image at this size (smaller ones upsampled), as the demo does: on 28-pixel Fashion-MNIST
# its features separate the classes better at 128 than at 64 (the delivered labels 2-5 points more often right on
# paired runs), for about three times the encoding time (docs/search.md section 5).
ENCODER_INPUT_SIZE = 128
# Retrieval delivers a distinct public image per synthetic sample while the pool lasts. Part of a pool is of
# other classes (the demo's pool: half), so asking each class for more than pool / (2 K) ran out of right-class
# images (docs/search.md §4).
MAX_PER_CLASS = 1000
MIN_PER_CLASS = 10
# Images deliver up to the pool's share of each class, pool / (2 K), as the demo does (2,000 per class from its
# 20,000-image pool): more images trained the downstream CNN about a point better at epsilon 8 than 1,000 per class,
# though fewer of their labels are right (docs/search.md section 4). Each class then retrieves among its surest
# TERRITORY_SHARE x pool / K images (territory 1.5 on the demo), never more than twice its delivered size.
MAX_IMAGES_PER_CLASS = 2000
TERRITORY_SHARE = 0.75
DEFAULT_DELTA = 1e-5
_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_GENERIC_FOLDERS = {"private", "train", "training", "data", "images", "labelled", "labeled"}


class StarterError(ValueError):
    """The input cannot be turned into a run configuration; the message says which path and why."""


@dataclass(frozen=True)
class Choice:
    """One setting chosen from the data: its dotted key, value and the reason, in words."""

    key: str
    value: Any
    why: str


@dataclass(frozen=True)
class DataPaths:
    """The folders a run reads. A prepared root (``pcevolve data prepare``) stands for its split folders."""

    private: Path
    public: Path | None = None
    test: Path | None = None
    full: Path | None = None
    label_column: str | None = None  # a prepared table's label column
    schema: Path | None = None  # a prepared table's schema file (drafted from its public table)

    @classmethod
    def resolve(cls, private: str | Path, *, public: str | Path | None = None, test: str | Path | None = None,
                full: str | Path | None = None) -> DataPaths:
        root = Path(private)
        manifest = root / "dataset.json"
        if root.is_dir() and manifest.is_file() and read_json(manifest).get("format") == "pcevolve.text-demo":
            return cls(root / "private.jsonl", Path(public) if public else root / "public.jsonl",
                       Path(test) if test else root / "test.jsonl", None if full is None else Path(full),
                       label_column=str(read_json(manifest).get("label_column", "label")))
        if root.is_dir() and manifest.is_file() and read_json(manifest).get("format") == "pcevolve.table-demo":
            table = read_json(manifest)
            return cls(root / "private.csv", Path(public) if public else root / "public.csv",
                       Path(test) if test else root / "test.csv", None if full is None else Path(full),
                       label_column=str(table.get("label_column", "label")),
                       schema=root / "schema.yaml" if (root / "schema.yaml").is_file() else None)
        if root.is_dir() and manifest.is_file():
            splits = read_json(manifest).get("splits", {})

            def split(name: str, given: str | Path | None) -> Path | None:
                if given is not None:
                    return Path(given)
                return root / str(splits[name].get("path", name)) if name in splits else None

            private_split = split("private", None)
            if private_split is None:
                raise StarterError(f"{manifest}: a prepared dataset without a private split")
            return cls(private_split, split("public", public), split("test", test), split("full", full))
        return cls(root, *(None if p is None else Path(p) for p in (public, test, full)))


@dataclass(frozen=True)
class Starter:
    """The chosen settings, what was checked, and the config they make."""

    paths: DataPaths
    choices: tuple[Choice, ...]
    findings: tuple[str, ...] = field(default=())
    config: RunConfig = field(default_factory=RunConfig)

    def mapping(self) -> dict[str, Any]:
        """The chosen settings as the nested mapping a YAML file holds."""
        return _nest(self.choices)

    def yaml_text(self, *, source: str = "pcevolve init") -> str:
        """A commented YAML config: each chosen setting with the reason it was chosen."""
        lines = [
            f"# pcevolve run configuration, written by `{source}` on {date.today().isoformat()}.",
            "# Each setting below was chosen from your data, with the reason beside it; every setting not named",
            "# keeps pcevolve's default. They depend on the public data, the class names and your flags only —",
            "# never on the private samples' content or counts — so this file can be shared.",
            "# See how the privacy budget would be spent, before anything is spent:  pcevolve budget plan --config FILE",
            "# Run it:  pcevolve run FILE",
        ]
        _emit(self.mapping(), {c.key: c.why for c in self.choices}, lines, prefix="", indent=0)
        return "\n".join(lines) + "\n"


def _nest(choices: tuple[Choice, ...]) -> dict[str, Any]:
    return with_dotted({}, {choice.key: choice.value for choice in choices})


def _scalar(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("\n...").strip()


def _emit(node: Mapping[str, Any], why: dict[str, str], lines: list[str], *, prefix: str, indent: int) -> None:
    pad = "  " * indent
    for key, value in node.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            lines.append(f"{pad}{key}:")
            _emit(value, why, lines, prefix=f"{dotted}.", indent=indent + 1)
            continue
        reason = why.get(dotted)
        if reason:
            lines.extend(f"{pad}# {line}" for line in textwrap.wrap(reason, 116 - len(pad), break_long_words=False,
                                                                   break_on_hyphens=False))
        lines.append(f"{pad}{key}: {_scalar(value)}")


def run_name(private: Path) -> str:
    """A run name from the data's folders: ``clinic/data/private`` → ``clinic``."""
    folder = private.resolve()
    while folder.name.lower() in _GENERIC_FOLDERS and folder.parent != folder:
        folder = folder.parent
    return _NAME.sub("-", folder.name).strip("-._") or "run"


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


def declared_classes(overrides: Mapping[str, Any] | None) -> tuple[str, ...] | None:
    """The classes the user declared (``--set data.classes=[...]``), to read the private data against; ``None``
    when they are to be proposed from the data."""
    value = (overrides or {}).get("data.classes")
    if value is None:
        return None
    try:
        return class_names_from(value)
    except ValueError as error:
        raise StarterError(f"data.classes: {error}") from None


def classes_choice(names: tuple[str, ...], found_in: str, noun: str, outside: str) -> Choice:
    """``data.classes`` as ``init`` writes it: the proposal (``found_in`` says from what), for the user to confirm
    as their declaration of the task's classes; ``outside`` says what happens to data outside it."""
    return Choice("data.classes", list(names),
                  f"the task's classes, in label order, proposed from {found_in}. This list is your declaration of "
                  "what the task's classes are, not something the run learns from the data: confirm or edit it. A "
                  f"class with no private {noun}s is allowed (its part of the set is then mostly noise); {outside}")


def check_splits(private: LabeledDataset, public: Any, extras: Mapping[str, Any], paths: DataPaths) -> None:
    """Refuse a sample shared between the evaluation sets (``extras``: test, full) and the private set or the pool,
    which would make the evaluation read its own training data. Between the private set and the pool a shared sample
    is no error: :func:`data_notes` warns about it."""
    overlap = find_duplicates({str(paths.private): private, str(paths.public): public, **extras},
                              may_share=[(str(paths.private), str(paths.public))])
    if overlap:
        raise DataError(overlap)


def data_notes(private: LabeledDataset, public: Any, noun: str) -> tuple[str, ...]:
    """What the private data shows about the assumptions (pool overlap, small classes), for the screen only."""
    overlap, small = pool_overlap_warning(pool_overlap(private, public), noun), small_classes_note(private, noun)
    return (f"warning: {overlap}" if overlap else f"no {noun} is shared between the private set and the public pool",
            *((f"note: {small}",) if small else ()))


def file_run_choices(paths: DataPaths, name: str | None, modality: str, what: str) -> list[Choice]:
    """The first choices of a run read from files (tables, texts): its name, seed and modality."""
    private = paths.private
    default = run_name(private.parent if private.stem in ("private", "train") else private.with_suffix(""))
    return [Choice("name", name or default, "the run folder is runs/<name>"),
            Choice("seed", 0, "drives the public choices only, never the privacy noise (from the operating system)"),
            Choice("data.modality", modality, f"the samples are {what}")]


def retrieval_choices(noun: str, *, pool: int, classes: int, basis: int, epsilon: float,
                      encoder_why: str) -> list[Choice]:
    """Delivery by retrieval from a public pool of ``pool`` samples, and the whole budget on the release: the
    choices shared by tables and texts, whose encoders train on nothing private (``encoder_why`` says why)."""
    per_class = int(min(MAX_PER_CLASS, max(MIN_PER_CLASS, pool // (2 * classes))))
    return [
        Choice("decoder.name", "nearest-public", f"each synthetic {noun} is a public {noun} chosen for its class"),
        Choice("decoder.public_images", pool, f"public {noun}s indexed for retrieval (at most 20,000)"),
        Choice("search.basis_dim", basis, "principal directions of the public features the search works in"),
        Choice("search.synthetic_per_class", per_class,
               f"delivered {noun}s per class on average; about public {noun}s / (2 x {classes} classes) fit (at most "
               "1,000)"),
        Choice("search.delivery_oversample", 1.0, "with retrieval, draw exactly the delivered size"),
        Choice("search.release_min_snr", 2.0, "release the class covariances and random features only where they "
                                              "would rise above their noise; else their budget goes to the means"),
        Choice("privacy.epsilon", float(epsilon), "the total privacy budget of the whole run"),
        Choice("privacy.delta", DEFAULT_DELTA, "the probability that the ε guarantee fails; keep it well below one "
                                               f"over the number of private {noun}s"),
        Choice("privacy.split", {"representation": 0.0, "release": 1.0},
               f"{encoder_why}, so the whole budget goes to the release"),
    ]


def finish_starter(paths: DataPaths, choices: list[Choice], overrides: Mapping[str, Any] | None,
                   findings: tuple[str, ...], private_count: int) -> Starter:
    """The starter from the chosen settings, with the user's ``overrides`` set last and validated."""
    if overrides:
        known = {c.key for c in choices}
        choices = [Choice(c.key, overrides[c.key], "set by you") if c.key in overrides else c for c in choices]
        choices += [Choice(key, value, "set by you") for key, value in overrides.items() if key not in known]
    from pcevolve.privacy.calibration import delta_advice  # loads the accountant: only once a starter is made

    config = parse_config(_nest(tuple(choices)), source="the chosen settings")
    advice = delta_advice(config.privacy.delta, private_count)  # the δ chosen or set, as the run warns
    if advice:
        findings += (f"warning: {advice}",)
    return Starter(paths=paths, choices=tuple(choices), findings=findings, config=config)


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
        from pcevolve.config.starter_table import (
            choose_table_config,  # uses this module
        )

        return choose_table_config(paths, epsilon=epsilon, name=name, overrides=overrides)
    if kind == "jsonl":
        from pcevolve.config.starter_text import choose_text_config  # uses this module

        return choose_text_config(paths, epsilon=epsilon, name=name, overrides=overrides)
    if paths.public is None:
        raise StarterError("no public pool given: pcevolve needs a folder of unlabelled images like yours that "
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
                       "a class folder not in the list is an error"),
        Choice("data.public", str(paths.public.resolve()), f"{pool_size} unlabelled public images"),
        Choice("data.test", None if paths.test is None else str(paths.test.resolve()),
               "real held-out images for `pcevolve evaluate` (never used by the run)"),
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
               f"{MAX_IMAGES_PER_CLASS:,}): more images train a downstream model better than fewer surer ones"),
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
    counts = ", ".join(f"{cls} {n}" for cls, n in private_set.class_counts().items())
    findings = ((f"private: {len(private_set)} images in {k} classes ({counts}) — checked (these counts stay on "
                 "this screen; the config does not record them)"),
                f"public: {pool_size} images, read at {size} x {size} {mode}",
                *(f"{label}: {len(extras[str(p)])} images, same classes — checked"
                  for label, p in (("test", paths.test), ("full", paths.full)) if p is not None),
                *data_notes(private_set, public_set, "image"))
    return finish_starter(paths, choices, overrides, findings, len(private_set))
