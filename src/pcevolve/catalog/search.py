"""The search's named parts and limits, as plain data: the evolution's operators by ``search.mutation`` /
``search.crossover``, and how many classes the private vote of class means takes. Read by the config's checks
without importing the operators (:mod:`pcevolve.evolution.registry` holds them under the same names;
``tests/test_part_catalogs.py`` holds the two equal) or the vote (:mod:`pcevolve.privacy.cluster_vote`)."""

from __future__ import annotations

#: ``search.mutation`` and ``search.periodic_mutation`` values.
MUTATION_NAMES: tuple[str, ...] = ("gaussian", "polynomial", "differential")
#: ``search.crossover`` values.
CROSSOVER_NAMES: tuple[str, ...] = ("interpolation", "uniform")
#: The most classes ``search.class_means: votes`` takes: the vote's exact sampler keeps a table of 2^K entries
#: per cluster for K classes.
MAX_VOTE_CLASSES = 16
