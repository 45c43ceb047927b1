"""What the guarantee assumes of the data, and the console notes a run gives where its data meets the assumption.

The guarantee holds for a public pool chosen without looking at the private set and for classes declared by the
user (``data.classes``, or an image run's class folders). Neither may then be judged against the private data in a
way that decides anything: a pool cleaned by comparing it with the private set, a run refused because of what
that comparison finds, or a class dropped for having too few samples would each be a function of the private data
outside any mechanism. So what the private data shows about them is said on the console only (the console stays in
the secure zone: these are exact private counts) and changes nothing.
"""

from __future__ import annotations

from pcevolve.data.dataset import LabeledDataset, UnlabeledImages
from pcevolve.progress import ConsoleLine


def pool_overlap(private: LabeledDataset, pool: LabeledDataset | UnlabeledImages) -> int:
    """How many private samples have the content of a pool sample (same content hash). Shown on the console
    only: it is an exact private count."""
    in_pool = set(pool.sample_hashes())
    return sum(digest in in_pool for digest in private.sample_hashes())


def pool_overlap_warning(shared: int, noun: str = "sample") -> ConsoleLine | None:
    """What to say when ``shared`` private samples are also in the public pool (``None`` when none are).

    The advice is about the pool's source, never about editing the pool: removing the shared samples would make
    the pool depend on the private set (with retrieval a sample would then be delivered when it is not private and
    never when it is).
    """
    if shared == 0:
        return None
    advice = ("The guarantee treats everything in the pool as public: the pool must come from a source that is public "
              f"on its own, chosen without looking at the private data, and a private {noun} that is also in it "
              f"counts as public. If that is true of your pool's source (e.g. an open dataset that happens to hold "
              f"the same {noun}s), nothing needs doing. If it is not, the source is not public: choose the pool from "
              f"another source. Do not remove the shared {noun}s from this pool: a pool cleaned by comparing it with "
              "the private set depends on the private set, which the guarantee does not cover.")
    return ConsoleLine(f"{shared} private {noun}(s) are also in the public pool. {advice}",
                       f"private {noun}s are also in the public pool (`pcevolve data check` counts them). {advice}")


def small_classes_note(private: LabeledDataset, noun: str = "sample") -> ConsoleLine | None:
    """A note on the declared classes with fewer than two private samples (``None`` when there are none)."""
    small = [f"{name!r} ({count})" for name, count in private.class_counts().items() if count < 2]
    if not small:
        return None
    effect = "their released statistics are mostly noise, and so is what the run delivers for them"
    return ConsoleLine(f"class(es) {', '.join(small)} have fewer than two private {noun}s: {effect}",
                       f"some declared classes have fewer than two private {noun}s (`pcevolve data check` names "
                       f"them): {effect}")


def delta_note(advice: str | None) -> ConsoleLine | None:
    """:func:`pcevolve.privacy.calibration.delta_advice`'s warning (it names n), with a form that does not."""
    if advice is None:
        return None
    return ConsoleLine(advice, "privacy.delta is not far below one over the number of private samples: a guarantee "
                               "that may fail with that probability would allow publishing some private samples "
                               "outright; lower privacy.delta (`pcevolve run` says how far)")
