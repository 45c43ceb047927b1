"""Samples made rather than retrieved: a run without a public pool (``data.public: null``).

With a public pool the search picks public samples; without one the candidates must be made from what the private
data releases. For tables (:mod:`~pcevolve.synthesis.release`, :mod:`~pcevolve.synthesis.marginals`): the declared
schema's columns are cut into bins (:mod:`~pcevolve.synthesis.bins`), the private rows' class sizes and per-class
column histograms are released through the ledger, and rows are drawn from them. Everything here reads private data
only through :mod:`pcevolve.privacy` mechanisms, and every setting from the config.
"""
