"""Starter configurations chosen from the user's data (``pcevolve init``, a one-line ``pcevolve run``).

:func:`choose_config` reads the folders or files the user names through the data checks, picks the settings that
depend on public data and the declared classes, and says why for each (:mod:`pcevolve.starters.choose`); tables
(:mod:`~pcevolve.starters.table`) and texts (:mod:`~pcevolve.starters.text`) add their own choices on the common
ground of :mod:`~pcevolve.starters.common`.
"""

from pcevolve.starters.choose import choose_config
from pcevolve.starters.common import Starter, StarterError, StarterUsageError, run_name

__all__ = ["Starter", "StarterError", "StarterUsageError", "choose_config", "run_name"]
