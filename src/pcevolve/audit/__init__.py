"""Empirical privacy audits: does the code release what its proof allows?

* :mod:`pcevolve.audit.games` — a distinguishing game per DP mechanism, played through the deployed code.
* :mod:`pcevolve.audit.mechanisms` — every mechanism at a config's parameters (``pcevolve audit --mechanisms``).
* :mod:`pcevolve.audit.end_to_end` — one run with canaries, a membership game on what it ships
  (``pcevolve audit RUN``); its canaries and their private set in :mod:`pcevolve.audit.canaries`, the scores in
  :mod:`pcevolve.audit.canary_scores`, the guesses and the bound in :mod:`pcevolve.audit.canary_guesses`, the
  result in :mod:`pcevolve.audit.end_to_end_result`.

The statistics (confidence bounds, μ and ε from error rates, the one-run bound) are in
:mod:`pcevolve.privacy.audit`.
"""
