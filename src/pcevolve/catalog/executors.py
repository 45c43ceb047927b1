"""Where a run's bulk work can run, as plain data: the ``executor.name`` values and how to install Ray. Read by the
config's checks without importing an executor (:data:`pcevolve.executors.EXECUTORS` holds them under the same
names; ``tests/test_part_catalogs.py`` holds the two equal)."""

from __future__ import annotations

#: ``executor.name`` values.
EXECUTOR_NAMES: tuple[str, ...] = ("local", "ray")
#: What ``executor.name: ray`` needs installed.
RAY_INSTALL_HINT = "pip install 'pcevolve[ray]'"
