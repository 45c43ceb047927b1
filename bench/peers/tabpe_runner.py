"""Run one Tab-PE synthesis (tabular Private Evolution, microsoft/DPSDA); executed in Tab-PE's venv.

    bench/.venv-tabpe/bin/python bench/peers/tabpe_runner.py OPTIONS.json

``OPTIONS.json`` (written by ``bench/peers/tabpe.py``)::

    {"epsilon": 8.0, "delta": 1e-5, "seed": 0,
     "pe_path": "bench/.cache/tabpe-COMMIT",       # the folder holding DPSDA's pe/ package
     "private_csv": "private.csv",                  # the schema's columns and the label, schema formatting
     "metadata_json": "metadata.json",              # what TabularCSV reads: cat/int/float/label columns
     "columns": [{"name": "term", "type": "cat", "categories": ["36 months", "60 months"]},
                 {"name": "funded_amnt", "type": "int", "min": 1000.0, "max": 40000.0}, ...],
     "label_column": "Class", "classes": ["bad", "good"],
     "settings": {...},                             # tabpe.EXAMPLE plus num_samples, rows
     "output": "synthetic-raw.csv",                 # written: the columns in "columns" order, then the label
     "info": "peer.json"}                           # written: what was spent, timings

Tab-PE's ``info`` (column types, bounds, categories) is built from ``columns`` — the declared schema — instead of
``TabularCSV.get_tab_info()``, which reads them off the private rows. The private rows are read by Tab-PE's own
``TabularCSV``; their categorical cells are made text (pandas reads a category such as ``0`` as a number) and checked
against the declared categories, and their labels are renumbered in the declared class order. Class fractions are
uniform (``fraction_per_label_id = [1] * K``), never the private proportions.

``pe/`` imports image and LLM packages at module level even for tabular use. Those that are not installed
(:data:`STAND_INS`: torchvision, clean-fid, fld, CLIP, …) are replaced by empty stand-in modules before ``pe`` is
imported: any attribute is a placeholder that module-level code may call, decorate or subclass with, and a function
it decorated raises ``ImportError`` when run; the tabular path never runs one.
This file imports nothing from pcevolve.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import json
import random
import sys
import time
import types
from pathlib import Path

#: Top-level packages pe/ imports at module level for images and texts only; stood in for when not installed.
STAND_INS = ("torchvision", "cleanfid", "fld", "clip", "wilds", "improved_diffusion", "diffusers", "transformers",
             "blobfile", "python_avatars", "cairosvg", "gdown", "openai", "tenacity", "tiktoken", "dotenv",
             "sentence_transformers", "fastchat", "accelerate", "azure", "tabicl", "tabpfn", "xgboost")


class _Placeholder:
    """A name of a stood-in package. Module-level code may call it (``retry(...)``), decorate with it or subclass
    it; anything that would run the package's code (calling a function it decorated, or a call's result) raises."""

    def __init__(self, qualified: str) -> None:
        self._qualified = qualified

    def __getattr__(self, name: str) -> _Placeholder:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Placeholder(f"{self._qualified}.{name}")

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], _Placeholder):
            return _refusing(self._qualified)  # used as a decorator: the decorated function refuses to run
        return _Placeholder(f"{self._qualified}(…)")

    def __mro_entries__(self, bases):
        return (object,)

    def refuse(self):
        raise ImportError(f"{self._qualified} belongs to a package Tab-PE's tabular path does not need; this venv "
                          "stands in an empty module for it")


def _refusing(qualified: str):
    def refuse(*_args, **_kwargs):
        _Placeholder(qualified).refuse()

    return refuse


class _StandIn(types.ModuleType):
    """A module that is not there: its submodules import, its attributes are :class:`_Placeholder` objects."""

    def __getattr__(self, name: str) -> _Placeholder:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Placeholder(f"{self.__name__}.{name}")


class _StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds :data:`STAND_INS` (and their submodules) that are not installed, as :class:`_StandIn` modules."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] not in self.names:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _StandIn(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module) -> None:
        parent, _, child = module.__name__.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)


def stand_in_missing() -> list[str]:
    """Put the finder first on ``sys.meta_path`` for every name of :data:`STAND_INS` not installed; those names."""
    missing = sorted(name for name in STAND_INS if importlib.util.find_spec(name) is None)
    sys.meta_path.insert(0, _StandInFinder(set(missing)))
    return missing


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    options = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    stood_in = stand_in_missing()
    sys.path.insert(0, options["pe_path"])

    import numpy as np
    import pandas as pd
    import torch
    from pe.api import TabularAPI
    from pe.constant.data import LABEL_ID_COLUMN_NAME, TABULAR_DATA_COLUMN_NAME, VARIATION_API_FOLD_ID_COLUMN_NAME
    from pe.data import Data, TabularColumnType, TabularCSV
    from pe.embedding import TabularEmbedding
    from pe.histogram import NearestNeighbors
    from pe.logging import setup_logging
    from pe.population import CompositePopulation, PEPopulation
    from pe.runner import PE

    pd.options.mode.copy_on_write = True  # as Tab-PE's examples set it
    setup_logging(log_file=None)
    seed = int(options["seed"])
    np.random.seed(seed)
    random.seed(seed)
    torch.manual_seed(seed)
    settings = options["settings"]
    classes = [str(c) for c in options["classes"]]
    label = options["label_column"]

    # Tab-PE's own reader, then the declared schema's view of it.
    priv = TabularCSV(csv_path=options["private_csv"], metadata_path=options["metadata_json"])
    kinds = {"cat": TabularColumnType.CATEGORICAL, "int": TabularColumnType.INTEGER, "float": TabularColumnType.FLOAT}
    declared = {c["name"]: c for c in options["columns"]}
    features = list(priv.metadata["feature_columns"])  # TabularCSV's order: categorical, integer, float
    info = {}
    for name in features:
        column = declared[name]
        if column["type"] == "cat":
            info[name] = {"categories": list(column["categories"]), "type": kinds["cat"]}
        else:
            info[name] = {"min": column["min"], "max": column["max"], "type": kinds[column["type"]]}
    cat_at = [i for i, name in enumerate(features) if declared[name]["type"] == "cat"]
    rows = []
    for values in priv.data_frame[TABULAR_DATA_COLUMN_NAME]:
        values = list(values)
        for i in cat_at:
            text = values[i] if isinstance(values[i], str) else format(values[i], "g")
            if text not in declared[features[i]]["categories"]:
                raise SystemExit(f"private category {text!r} of {features[i]!r} is not in the declared schema")
            values[i] = text
        rows.append(values)
    names = [str(li["column_values"][label]) for li in priv.metadata["label_info"]]
    ids = np.array([classes.index(names[i]) for i in priv.data_frame[LABEL_ID_COLUMN_NAME]])
    metadata = {key: priv.metadata[key] for key in ("label_columns", "cat_columns", "int_columns", "float_columns",
                                                    "feature_columns")}
    metadata["label_info"] = [{"name": f"{label}: {c}", "column_values": {label: c}} for c in classes]
    priv = Data(data_frame=pd.DataFrame({TABULAR_DATA_COLUMN_NAME: rows, LABEL_ID_COLUMN_NAME: ids}),
                metadata=metadata)

    # Tab-PE's small-table example (example/tabular/breast_cancer.py), num_samples set by the bench.
    iterations = int(settings["num_iterations"])
    api = TabularAPI(info=info, mutation_rate_init=settings["mutation_rate_init"],
                     mutation_rate_final=settings["mutation_rate_final"], decay_type=settings["decay_type"],
                     gamma=settings["gamma"], num_iterations=iterations)
    embedding = TabularEmbedding(info=info, **settings["embedding"])
    histogram = NearestNeighbors(embedding=embedding, **settings["histogram"])
    sample, rank = dict(settings["sample_phase"]), dict(settings["rank_phase"])
    sample_iterations = sample.pop("iterations")
    population = CompositePopulation(populations=[PEPopulation(api=api, **sample)] * sample_iterations
                                     + [PEPopulation(api=api, **rank)] * (iterations - sample_iterations))
    runner = PE(priv_data=priv, population=population, histogram=histogram)
    num_samples = int(settings["num_samples"])
    start = time.perf_counter()
    final = runner.run(num_samples_schedule=[num_samples] * iterations, delta=float(options["delta"]),
                       epsilon=float(options["epsilon"]), checkpoint_path=None, save_checkpoint=False,
                       fraction_per_label_id=[1] * len(classes))
    fit_s = time.perf_counter() - start
    selected = final.filter({VARIATION_API_FOLD_ID_COLUMN_NAME: -1})
    topped_up = 0
    if len(selected.data_frame) < int(settings["rows"]):  # post-processing: variations of the selected rows
        parts = []
        wanted = runner._get_num_samples_per_label_id(int(settings["rows"]), [1] * len(classes))
        for label_id, want in enumerate(wanted):
            mine = selected.filter_label_id(label_id)
            extra = int(want) - len(mine.data_frame)
            parts.append(mine)
            if extra > 0 and len(mine.data_frame):
                parents = Data(data_frame=mine.data_frame.iloc[np.random.randint(0, len(mine.data_frame), extra)],
                               metadata=mine.metadata)
                parts.append(api.variation_api(syn_data=parents))
                topped_up += extra
        selected = Data.concat(parts, metadata=selected.metadata)
    frame = pd.DataFrame(selected.data_frame[TABULAR_DATA_COLUMN_NAME].tolist(), columns=features)
    frame[label] = [classes[int(i)] for i in selected.data_frame[LABEL_ID_COLUMN_NAME]]
    frame = frame[[c["name"] for c in options["columns"]] + [label]]
    frame.to_csv(options["output"], index=False)
    dp = runner._dp
    info_out = {"system": "tabpe", "epsilon": float(options["epsilon"]), "delta": float(options["delta"]),
                "accounted_epsilon": float(dp._epsilon), "noise_multiplier": float(dp._noise_multiplier),
                "private_iterations": iterations - 1, "num_samples": num_samples, "rows_out": len(frame),
                "rows_topped_up": topped_up, "rows_in": len(priv.data_frame), "fit_seconds": fit_s,
                "class_fractions": "uniform", "stood_in": stood_in,
                "synthetic_classes": {c: int((frame[label] == c).sum()) for c in classes}}
    Path(options["info"]).write_text(json.dumps(info_out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
