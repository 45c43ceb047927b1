"""Plain-words sentences the reports share (what an attack result means for the reader, what the pool held)."""

from __future__ import annotations

from typing import Any

#: The attack's lower confidence bound on AUC above which a report warns.
ATTACK_AUC_WARNING = 0.6


def attack_warning(privacy: dict[str, Any], noun: str) -> str:
    """The headline's sentence about the membership attack: which of its two alarms fired ("" for none).

    ``noun``: what one sample is called ("row", "text").
    """
    clear, beyond = privacy["auc_interval"][0] > ATTACK_AUC_WARNING, bool(privacy["exceeds_dp_bound"])
    if not (clear or beyond):
        return ""
    found = []
    if clear:
        found.append(f"tells private {noun}s from unseen real {noun}s clearly better than chance")
    if beyond:
        found.append(f"picks out some private {noun}s with more confidence than the privacy guarantee allows (many "
                     "right at almost no wrong guess)")
    return (f"The membership attack {', and '.join(found)}: the synthetic {noun}s follow the private {noun}s too "
            "closely (see Privacy).")


def pool_sentence(data: dict[str, Any]) -> str | None:
    """The run's own line on how much of its public pool looked like the task (``data["pool"]``, the delivery stage's
    words), as a report sentence; None for a run that retrieved nothing or predates the line."""
    line = data.get("pool")
    return f"{line[:1].upper()}{line[1:]}." if line else None
