"""Importing pcevolve changes no global state (STYLE.md: no seeding, filters, handlers or downloads)."""

import subprocess
import sys

# Third-party libraries may change global state when first imported (scipy adds warning filters,
# rich touches the random module); that is theirs, not ours. Import them first, then snapshot,
# so the test sees exactly what importing pcevolve's own modules does.
_PROBE = r"""
import logging, random, warnings, sys
import numpy as np, scipy.special, scipy.stats, torch, rich.console, rich.table, typer, dp_accounting, PIL.Image
import yaml, pydantic
import sklearn.linear_model, sklearn.model_selection, threadpoolctl, matplotlib.figure, tqdm.auto
import matplotlib.backends.backend_agg
import matplotlib
backend = matplotlib.get_backend()
filters = list(warnings.filters)
handlers = list(logging.getLogger().handlers)
py_state = random.getstate()
np_state = np.random.get_state()[1].copy()
import pcevolve, pcevolve.io, pcevolve.config, pcevolve.run_folder, pcevolve.data, pcevolve.privacy, pcevolve.augment
import pcevolve.encoders, pcevolve.cli.main
import pcevolve.decoders, pcevolve.evolution, pcevolve.fitness, pcevolve.evaluation, pcevolve.search, pcevolve.pipeline
for package in (pcevolve.privacy, pcevolve.evaluation, pcevolve.pipeline):  # their names import on first use
    [getattr(package, name) for name in package.__all__]
assert matplotlib.get_backend() == backend, "matplotlib backend changed"
assert list(warnings.filters) == filters, "warning filters changed"
assert list(logging.getLogger().handlers) == handlers, "log handlers added"
assert random.getstate() == py_state, "python RNG touched"
assert (np.random.get_state()[1] == np_state).all(), "numpy global RNG touched"
print("clean")
"""


def test_import_has_no_side_effects():
    result = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "clean"


# What the command line may not load before a command needs it: `pcevolve data check` and `pcevolve --help` took
# about 7 s when every command's module was imported up front.
_LIGHT_PROBE = r"""
import sys
import pcevolve.cli.main
heavy = sorted({"torch", "sklearn", "dp_accounting", "matplotlib", "scipy"} & set(sys.modules))
print("light" if not heavy else "loaded " + " ".join(heavy))
"""


def test_the_command_line_starts_without_loading_the_models_or_the_accountant():
    result = subprocess.run([sys.executable, "-c", _LIGHT_PROBE], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "light"
