"""The end-to-end audit's result (:func:`pcevolve.audit.end_to_end.audit_run`) and where it is written.

:class:`EndToEndAudit` holds canary-derived numbers only, never a private sample, count or path: its
``to_json`` is the ``end_to_end`` part (:data:`AUDIT_PART`) of ``RUN/audit.json`` (:mod:`pcevolve.audit.results`),
its ``summary`` the paragraph a person reads. Everything else the audit makes stays in its secure folder,
``RUN/secure/audit`` (:data:`AUDIT_FOLDER`) or a later ``audit-2``, ``audit-3`` ….
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pcevolve.audit.canary_guesses import GuessBound

#: The part of ``RUN/audit.json`` (:mod:`pcevolve.audit.results`) this audit writes.
AUDIT_PART = "end_to_end"
#: The secure folder of the first audit; later ones are ``audit-2``, ``audit-3`` …
AUDIT_FOLDER = "audit"


@dataclass(frozen=True)
class EndToEndAudit:
    """The result of :func:`~pcevolve.audit.end_to_end.audit_run`: canary-derived numbers only (no private sample,
    count or path).

    Attributes:
        run: The audited run folder's name (its last path part).
        canaries: m, the trials.
        k / guesses / correct: The k of the grid that gave the largest bound, its r = 2k and its v.
        epsilon_lower_bound: The largest ε any k of the grid refutes (0: none).
        ceiling: The bound r guesses would give if every one were right.
        alpha: 1 − confidence, split evenly over ``grid`` (Bonferroni).
        delta: The run's δ, at which the bound holds.
        claimed_epsilon: The audited run's ε (its ledger's total).
        audit_run_epsilon: The ε the audit run's own ledger spent (the same claim, on the private set + canaries).
        audits_epsilon: What every end-to-end audit of the run spent on its private data so far, this one included
            (``RUN/audit-ledger.json``, the accountant's composition of all their reruns).
        with_run_epsilon: The run's events and every audit rerun's, composed: what ``audit.json`` costs beside the
            run's outputs.
        dp: Whether the audit run drew secure noise (False: reproducible noise, not DP by its own label).
        copied: Canaries found in the audit run's delivered set (each was in: only private data leads there).
        scored_by: The released statistics the scores read, and ``"copies"``.
        scoring: How the release scored the canaries: ``"difference"`` (less the audited run's own release),
            ``"centred"`` or ``"none"`` (:func:`~pcevolve.audit.canary_scores.release_scores`).
        highest_ceiling: The ceiling of the largest k of the grid: the most this audit could ever show.
        grid: Every k's guesses and bound.
        folder: The audit's secure folder, relative to the run folder (``secure/audit``).
    """

    run: str
    canaries: int
    k: int
    guesses: int
    correct: int
    epsilon_lower_bound: float
    ceiling: float
    alpha: float
    delta: float
    claimed_epsilon: float
    audit_run_epsilon: float
    audits_epsilon: float
    with_run_epsilon: float
    dp: bool
    copied: int
    scored_by: tuple[str, ...]
    scoring: str
    highest_ceiling: float
    grid: tuple[GuessBound, ...] = field(default_factory=tuple)
    folder: str = f"secure/{AUDIT_FOLDER}"

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    @property
    def passed(self) -> bool:
        """The bound stays at or below the claim; False proves a leak at :attr:`confidence`."""
        return self.epsilon_lower_bound <= self.claimed_epsilon

    def to_json(self) -> dict[str, Any]:
        """Plain, finite numbers: the ``end_to_end`` part of ``audit.json``."""
        return {"run": self.run, "canaries": self.canaries, "m": self.canaries,
                "k": self.k, "r": self.guesses, "v": self.correct, "guesses": self.guesses, "correct": self.correct,
                "epsilon_lower_bound": self.epsilon_lower_bound, "ceiling": self.ceiling,
                "confidence": self.confidence, "alpha": self.alpha,
                "delta": self.delta, "claimed_epsilon": self.claimed_epsilon,
                "audit_run_epsilon": self.audit_run_epsilon, "audits_epsilon": self.audits_epsilon,
                "with_run_epsilon": self.with_run_epsilon, "dp": self.dp, "passed": self.passed,
                "copied": self.copied, "scored_by": list(self.scored_by), "scoring": self.scoring,
                "highest_ceiling": self.highest_ceiling,
                "grid": [bound.to_json() for bound in self.grid], "folder": self.folder}

    def summary(self) -> str:
        """One paragraph for a person: what was run, what was found, what it means."""
        verdict = ("inconclusive: no result of this audit could have passed the claimed ε = "
                   f"{self.claimed_epsilon:.3g}" if self.passed and self.highest_ceiling <= self.claimed_epsilon else
                   f"at or below the claimed ε = {self.claimed_epsilon:.3g}: the claim was not refuted (an audit can "
                   "only refute, never prove, a claim)" if self.passed else
                   f"ABOVE the claimed ε = {self.claimed_epsilon:.3g}: with {self.confidence:.0%} confidence the run "
                   "leaks more than its ledger says")
        reach = ("" if self.highest_ceiling > self.claimed_epsilon else
                 f" With {self.canaries} canaries no result could exceed {self.highest_ceiling:.2f}, so this audit "
                 "could not have refuted the claim, however the run leaked: that needs more canaries or a smaller ε.")
        copies = f" {self.copied} canaries were found copied in the delivered set." if self.copied else ""
        cost = (f" The audit's rerun used the private data again: the audits of this run have spent ε = "
                f"{self.audits_epsilon:.3g} (audit-ledger.json), and audit.json shared beside the run's outputs costs "
                f"ε = {self.with_run_epsilon:.3g} in all.")
        return (f"End-to-end audit of run {self.run}: {self.canaries} canary images, each put into a second run's "
                f"private set by a fair coin, and guessed from what that run ships ({', '.join(self.scored_by)}). "
                f"The best of the guess sizes, {self.guesses} guesses with {self.correct} right, gives a lower bound "
                f"of ε ≥ {self.epsilon_lower_bound:.3g} at δ = {self.delta:g} ({self.confidence:.0%} confidence, "
                f"ceiling {self.ceiling:.3g}), {verdict}.{copies}{reach}{cost}")
