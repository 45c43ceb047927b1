"""Importing the report, the evaluation and the evaluate command changes no global state (STYLE.md)."""

import subprocess
import sys

_PROBE = r"""
import logging, random, sys, warnings
import numpy as np, scipy.stats, torch, matplotlib, rich.console, typer, tqdm.auto, sklearn.linear_model
filters, handlers = list(warnings.filters), list(logging.getLogger().handlers)
py_state, np_state = random.getstate(), np.random.get_state()[1].copy()
# Raw dict access: reading rcParams["backend"] (or get_backend()) would import pyplot itself.
raw_rc = lambda: {key: dict.__getitem__(matplotlib.rcParams, key) for key in matplotlib.rcParams.keys()}
threads, rc = torch.get_num_threads(), raw_rc()
deterministic = torch.are_deterministic_algorithms_enabled()
import pcevolve.evaluation, pcevolve.report, pcevolve.cli.evaluate_commands
assert list(warnings.filters) == filters, "warning filters changed"
assert list(logging.getLogger().handlers) == handlers, "log handlers added"
assert random.getstate() == py_state and (np.random.get_state()[1] == np_state).all(), "global RNG touched"
assert torch.get_num_threads() == threads, "torch thread count changed"
assert torch.are_deterministic_algorithms_enabled() == deterministic, "determinism switch changed"
assert "matplotlib.pyplot" not in sys.modules, "pyplot imported"
assert raw_rc() == rc, "matplotlib settings changed"
print("clean")
"""


def test_importing_report_and_evaluation_is_clean():
    result = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "clean"
