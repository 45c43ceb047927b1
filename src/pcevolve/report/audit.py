"""The report's audit section: ``pcevolve audit``'s lower bounds beside the claimed ε (``data["audit"]``)."""

from __future__ import annotations

import math
from typing import Any

from pcevolve.privacy.audit import GDP_BOUND_NOTE
from pcevolve.report.document import Paragraph, Section, Table

#: The one sentence every audit table carries.
MEANING = ("Each bound is the ε (or μ) the attack proves the code gives away at least, with 95% confidence: a bound "
           "above the claim means the code releases more than its proof allows, a bound below it only means this "
           "attack did not refute the claim — an audit never certifies it.")


def end_to_end_verdict(end_to_end: dict[str, Any]) -> str:
    """"FAIL" when the bound passed the claim; "inconclusive" when no result of this audit could have passed it (the
    claim above the most its canaries can show: it cannot fail); else "pass"."""
    if not end_to_end.get("passed"):
        return "FAIL"
    reach, claimed = end_to_end.get("highest_ceiling"), end_to_end.get("claimed_epsilon")
    if isinstance(reach, (int, float)) and isinstance(claimed, (int, float)) and reach <= claimed:
        return "inconclusive"
    return "pass"


def audit_section(data: dict[str, Any]) -> Section:
    """The section, from the evaluation JSON's ``audit`` entry (``None``: the run was not audited)."""
    audit = data.get("audit") or {}
    blocks: list[Paragraph | Table] = []
    mechanisms = audit.get("mechanisms")
    if mechanisms:
        rows = tuple((r["mechanism"], r["setting"], _num(r["claimed_epsilon"]), _num(r["epsilon_lower_bound"]),
                      _num(r.get("claimed_mu")), _num(r.get("mu_lower_bound")), f"{r['trials']:,} × 2",
                      "pass" if r["passed"] else "FAIL") for r in mechanisms["results"])
        failed = tuple(i for i, r in enumerate(mechanisms["results"]) if not r["passed"])
        blocks.append(Table(("mechanism", "setting", "claimed ε", "bound ε", "claimed μ", "bound μ", "runs",
                             "verdict"), rows, highlight=failed,
                            caption="Every DP mechanism, played through the deployed code with secure noise on two "
                                    "neighbouring inputs that differ in one worst-case record. " + GDP_BOUND_NOTE))
    end_to_end = audit.get("end_to_end")
    if end_to_end:
        blocks.append(Table(("canaries", "guesses", "right", "claimed ε", "bound ε", "most this many guesses can show",
                             "verdict"),
                            ((str(end_to_end.get("canaries")), str(end_to_end.get("guesses")),
                              str(end_to_end.get("correct")), _num(end_to_end.get("claimed_epsilon")),
                              _num(end_to_end.get("epsilon_lower_bound")), _num(end_to_end.get("ceiling")),
                              end_to_end_verdict(end_to_end)),),
                            highlight=() if end_to_end.get("passed") else (0,),
                            caption="End to end: the pipeline run again on this run's config and data with canary "
                                    "records, each inserted with probability 1/2, and a membership game on "
                                    "everything that run ships (one run, Steinke, Nasr & Jagielski 2023)."))
        reach, claimed = end_to_end.get("highest_ceiling"), end_to_end.get("claimed_epsilon")
        if end_to_end_verdict(end_to_end) == "inconclusive":
            blocks.append(Paragraph(f"With {end_to_end.get('canaries')} canaries no end-to-end result could exceed "
                                    f"{_num(reach)}, so this audit could not have refuted ε = {_num(claimed)} however "
                                    "the run leaked: it refutes smaller claims, or needs more canaries.", tone="note"))
        audits, together = end_to_end.get("audits_epsilon"), end_to_end.get("with_run_epsilon")
        cost = (f"The audits of this run have spent ε = {_num(audits)} on its private data (audit-ledger.json); "
                f"shown beside the synthetic set, the run and its audits cost ε = {_num(together)} together."
                if isinstance(audits, (int, float)) and isinstance(together, (int, float)) else
                "Shown beside the synthetic set, its result costs up to that run's ε as well.")
        blocks.append(Paragraph(f"The end-to-end audit used the private data a second time. {cost}", tone="note"))
    if not blocks:
        return Section("Privacy audit", (Paragraph("Not audited. `pcevolve audit --mechanisms RUN` checks every "
                                                   "mechanism at this run's parameters; `pcevolve audit RUN` audits "
                                                   "the run end to end with canaries."),), anchor="audit")
    return Section("Privacy audit", (Paragraph(MEANING), *blocks), anchor="audit")


def _num(value: float | None) -> str:
    if value is None:
        return "—"
    if not math.isfinite(value):
        return "∞"
    return f"{value:.2f}"
