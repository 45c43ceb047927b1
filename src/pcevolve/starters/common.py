"""What every starter shares (images, tables, texts): the choices and why each was made, the data's paths, the
declared classes, the checks of the splits and what they found, and turning the choices into a commented, validated
config (:func:`finish_starter`).

:mod:`pcevolve.starters.choose` chooses for images and hands tables and texts to
:mod:`pcevolve.starters.table` and :mod:`pcevolve.starters.text`; all three build on this module.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from pcevolve.config.loader import parse_config, with_dotted
from pcevolve.config.schema import ClassLabel, RunConfig, class_names_from
from pcevolve.data import (
    DataError,
    LabeledDataset,
    delta_note,
    find_duplicates,
    pool_overlap,
    pool_overlap_warning,
    small_classes_note,
)
from pcevolve.io import read_json
from pcevolve.progress import ConsoleLine

# Images are held in memory at this size; the encoder sees ENCODER_INPUT_SIZE a side whatever the input, so larger only
# costs memory (20,000 RGB images at 128 x 128 are 1 GB) and, with retrieval, gives sharper delivered images.
MAX_IMAGE_SIZE = 128
# The backbone sees every image at this size (smaller ones upsampled), as the demo does: on small Fashion-MNIST
# images its features separate the classes better at 128 than at 64, so more delivered labels are right, for a
# longer encoding (measured in docs/search.md §5).
ENCODER_INPUT_SIZE = 128
# Retrieval delivers a distinct public image per synthetic sample while the pool lasts. Part of a pool is of
# other classes (the demo's pool: half), so asking each class for more than pool / (2 K) ran out of right-class
# images (docs/search.md §4).
MAX_PER_CLASS = 1000
MIN_PER_CLASS = 10
# Images deliver up to the pool's share of each class, pool / (2 K), as the demo does (2,000 per class from its
# 20,000-image pool): more images trained the downstream CNN better at epsilon 8 than 1,000 per class, though fewer
# of their labels are right (measured in docs/search.md §4, "The delivered set's size"). Each class then retrieves
# among its surest TERRITORY_SHARE x pool / K images (territory 1.5 on the demo), never more than twice its delivered
# size.
MAX_IMAGES_PER_CLASS = 2000
TERRITORY_SHARE = 0.75
DEFAULT_DELTA = 1e-5
_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_GENERIC_FOLDERS = {"private", "train", "training", "data", "images", "labelled", "labeled"}


class StarterError(ValueError):
    """The input cannot be turned into a run configuration; the message says which path and why."""


class StarterUsageError(StarterError):
    """What is missing or wrong is an argument of the command (a pool not given or of the wrong kind, a class list
    not declared), not a file: the command line exits 2 on it."""


@dataclass(frozen=True)
class Choice:
    """One setting chosen from the data: its dotted key, value and the reason, in words.

    ``proposed``: the value was read off the private data (the label values of a table or texts), so it is only a
    proposal for the user to confirm in the file ``init`` writes; a run never starts on it (:meth:`Starter.confirmed`).
    """

    key: str
    value: Any
    why: str
    proposed: bool = False


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
        prepared = read_json(manifest) if root.is_dir() and manifest.is_file() else None
        if prepared is not None and prepared.get("format") == "pcevolve.text-demo":
            return cls(root / "private.jsonl", Path(public) if public else root / "public.jsonl",
                       Path(test) if test else root / "test.jsonl", None if full is None else Path(full),
                       label_column=str(prepared.get("label_column", "label")))
        if prepared is not None and prepared.get("format") == "pcevolve.table-demo":
            return cls(root / "private.csv", Path(public) if public else root / "public.csv",
                       Path(test) if test else root / "test.csv", None if full is None else Path(full),
                       label_column=str(prepared.get("label_column", "label")),
                       schema=root / "schema.yaml" if (root / "schema.yaml").is_file() else None)
        if prepared is not None:
            splits = prepared.get("splits", {})

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
    #: Drafts ``init`` writes beside the config for the user to check, by the choice that names their file (a table's
    #: schema drafted from the private table when no public one was given).
    drafts: dict[str, Any] = field(default_factory=dict)

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
            "# See how the privacy budget would be spent, before anything is spent:  "
            "pcevolve budget plan --config FILE",
            "# Run it:  pcevolve run FILE",
        ]
        _emit(self.mapping(), {c.key: c.why for c in self.choices}, lines, prefix="", indent=0)
        return "\n".join(lines) + "\n"

    @property
    def proposals(self) -> tuple[Choice, ...]:
        """The choices read off the private data, which only the user can confirm (none once they set them)."""
        return tuple(choice for choice in self.choices if choice.proposed)

    def confirmed(self, declare: Callable[[Choice], str]) -> RunConfig:
        """The config, if nothing in it is a proposal read off the private data; else :class:`StarterError`.

        A run on a proposal would let the private data decide what it makes (one more record labelled ``c`` would
        add a class ``c`` to the delivered set), so the one-line run, the config-less API and a sweep refuse it and
        say how to declare it instead: ``declare(choice)`` words that for the entry point (a flag, a setting).
        """
        if not self.proposals:
            return self.config
        raise StarterUsageError("; ".join(f"{choice.key} must be declared by you, not read off the private data (one "
                                     f"record more or less would change it): {declare(choice)}"
                                     for choice in self.proposals))

    def placing(self, key: str, value: Any) -> Starter:
        """The starter with the choice ``key`` set to ``value`` (where ``init`` wrote a draft), validated again."""
        choices = tuple(replace(choice, value=value) if choice.key == key else choice for choice in self.choices)
        return replace(self, choices=choices, config=parse_config(_nest(choices), source="the chosen settings"))


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


def declared_classes(overrides: Mapping[str, Any] | None, *, typed: bool = False) -> tuple[ClassLabel, ...] | None:
    """The classes the user declared (``--set data.classes=[...]``), to read the private data against — with their
    JSON types when ``typed``, as a text run reads them (:func:`~pcevolve.config.schema.class_names_from`); ``None``
    when they are to be proposed from the data."""
    value = (overrides or {}).get("data.classes")
    if value is None:
        return None
    try:
        return class_names_from(value, typed=typed)
    except ValueError as error:
        raise StarterError(f"data.classes: {error}") from None


def classes_choice(names: tuple[ClassLabel, ...], found_in: str, noun: str, outside: str, *,
                   proposed: bool) -> Choice:
    """``data.classes`` as ``init`` writes it: the proposal (``found_in`` says from what), for the user to confirm
    as their declaration of the task's classes; ``outside`` says what happens to data outside it. ``proposed``: the
    names were read off the private labels (not the class folders, which are the user's own layout), so a run
    refuses them until the user declares them (:meth:`Starter.confirmed`)."""
    return Choice("data.classes", list(names),
                  f"the task's classes, in label order, proposed from {found_in}. This list is your declaration of "
                  "what the task's classes are, not something the run learns from the data: confirm or edit it. A "
                  f"class with no private {noun}s is allowed (its part of the set is then mostly noise); {outside}",
                  proposed=proposed)


def classes_argument(names: Any) -> str:
    """A class list as ``--classes`` takes it (comma-separated YAML scalars, quoted for the shell where needed):
    ``bad,good``; ``'"0","1"'`` for the texts "0" and "1" (``0,1`` declares the numbers)."""
    import shlex

    def one(name: Any) -> str:
        plain = _scalar(name)
        return f'"{name}"' if isinstance(name, str) and (plain != name or "," in name) else plain

    return shlex.quote(",".join(one(name) for name in names))


def check_splits(private: LabeledDataset, public: Any, extras: Mapping[str, Any], paths: DataPaths) -> None:
    """Refuse a sample shared between the evaluation sets (``extras``: test, full) and the private set or the pool
    (None: no pool), which would make the evaluation read its own training data. Between the private set and the
    pool a shared sample is no error: :func:`screen_findings` warns about it."""
    pool = {} if public is None else {str(paths.public): public}
    overlap = find_duplicates({str(paths.private): private, **pool, **extras},
                              may_share=[(str(paths.private), str(paths.public))])
    if overlap:
        raise DataError(overlap)


def screen_findings(private: LabeledDataset, public: Any, noun: str, *checked: str) -> tuple[str, ...]:
    """What the checks found, for the screen only: the private set's counts (the config never records them), what
    was ``checked`` of the other splits, and what the private data shows about the assumptions (pool overlap, small
    classes)."""
    counts = ", ".join(f"{cls} {n}" for cls, n in private.class_counts().items())
    overlap = None if public is None else pool_overlap_warning(pool_overlap(private, public), noun)
    small = small_classes_note(private, noun)
    shared = (overlap.prefixed("warning: ") if overlap else
              f"no public pool: the {noun}s are made from a release of the private ones" if public is None else
              f"no {noun} is shared between the private set and the public pool")
    return (ConsoleLine(f"private: {len(private)} {noun}s in {len(private.class_names)} classes ({counts}) — checked "
                        "(these counts stay on this screen; the config does not record them)",
                        f"private: {len(private.class_names)} classes — checked (`pcevolve data check` counts them)"),
            *checked, shared, *((small.prefixed("note: "),) if small else ()))


def split_choices(paths: DataPaths, pool: int, noun: str) -> list[Choice]:
    """``data.public`` (the pool, of ``pool`` ``noun``s) and ``data.test`` (held out for ``pcevolve evaluate``)."""
    public, test = paths.public, paths.test
    assert public is not None  # no starter goes on without a pool
    return [Choice("data.public", str(public.resolve()), f"{pool} unlabelled public {noun}s"),
            Choice("data.test", None if test is None else str(test.resolve()),
                   f"real held-out {noun}s for `pcevolve evaluate` (never used by the run)")]


def file_run_choices(paths: DataPaths, name: str | None, modality: str, what: str) -> list[Choice]:
    """The first choices of a run read from files (tables, texts): its name, seed and modality."""
    private = paths.private
    default = run_name(private.parent if private.stem in ("private", "train") else private.with_suffix(""))
    return [Choice("name", name or default, "the run folder is runs/<name>"),
            Choice("seed", 0, "drives the public choices only, never the privacy noise (from the operating system)"),
            Choice("data.modality", modality, f"the samples are {what}")]


def retrieval_per_class(pool: int, classes: int) -> int:
    """Delivered samples per class when each is retrieved from a public pool of ``pool``: about pool / (2 × classes),
    so that a class's share of the pool is not delivered over and over (between the starters' bounds)."""
    return int(min(MAX_PER_CLASS, max(MIN_PER_CLASS, pool // (2 * classes))))


def retrieval_choices(noun: str, *, pool: int, classes: int, basis: int, epsilon: float,
                      encoder_why: str) -> list[Choice]:
    """Delivery by retrieval from a public pool of ``pool`` samples, and the whole budget on the release: the
    choices shared by tables and texts, whose encoders train on nothing private (``encoder_why`` says why)."""
    per_class = retrieval_per_class(pool, classes)
    return [
        Choice("decoder.name", "nearest-public", f"each synthetic {noun} is a public {noun} chosen for its class"),
        Choice("decoder.public_images", pool, f"public {noun}s indexed for retrieval (at most 20,000)"),
        Choice("search.basis_dim", basis, "principal directions of the public features the search works in"),
        Choice("search.synthetic_per_class", per_class,
               f"delivered {noun}s per class on average; about public {noun}s / (2 x {classes} classes) fit (at most "
               f"1,000); the run delivers fewer where less of the pool looks like a class (search.in_task)"),
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
    advice = delta_note(delta_advice(config.privacy.delta, private_count))  # the δ chosen or set, as the run warns
    if advice:
        findings += (advice.prefixed("warning: "),)
    return Starter(paths=paths, choices=tuple(choices), findings=findings, config=config)
