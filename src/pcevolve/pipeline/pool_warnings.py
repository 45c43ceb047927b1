"""What a retrieval run says of its public pool before it delivers: classes the pool holds too little of.

Pure wording over public facts — the territories' sizes, the delivered and configured counts (functions of the DP
release and the public pool) and the decoders that could draw new samples instead — so the lines can be shown and
logged as they are.
"""

from __future__ import annotations

from collections.abc import Sequence


def thin_class_lines(class_names: Sequence[str], *, territory_sizes: Sequence[int], delivered: Sequence[int],
                     configured: Sequence[int], mass: Sequence[float] | None, noun: str,
                     drawers: Sequence[str]) -> list[str]:
    """One warning per class the pool holds too little of: fewer territory ``noun``s than the ``delivered`` count
    (some delivered twice), or an in-task ``mass`` (how many pool samples look like the class; None: not estimated)
    below half the ``configured`` count. ``drawers``: decoders that make new samples of this modality."""
    lines = []
    other = (f"use a decoder that draws new {noun}s (decoder.name: {' or '.join(drawers)})" if drawers
             else f"give a pool with more {noun}s like it")
    masses = [None] * len(class_names) if mass is None else list(mass)
    for name, size, count, asked, held in zip(class_names, territory_sizes, delivered, configured, masses,
                                              strict=True):
        if size < count:
            head = (f"warning: only {size} public {noun}s look like class {name!r}, fewer than the {count} to deliver; "
                    "some will be delivered more than once.")
            if 2 * size >= count:  # nearly enough: the pool holds about as many of this class as were asked for
                lines.append(f"{head} To deliver each at most once, ask for fewer (search.synthetic_per_class: "
                             f"{size}).")
            else:
                fewer = "" if drawers else f", or ask for fewer (search.synthetic_per_class: {size})"
                lines.append(f"{head} The public pool may lack this class: check it, or {other}{fewer}")
        elif held is not None and 2 * held < asked:
            lines.append(f"warning: only about {held:.0f} public {noun}s look like class {name!r}, fewer than half "
                         f"the {asked} asked for; {count} delivered. The public pool may lack this class: check it, "
                         f"or {other}")
    return lines
