"""Cutting class territories (:class:`~pcevolve.decoders.territories.ClassTerritories`): the part of a retrieval
decoder's pool each class may draw from.

A retrieval decoder returns the public image nearest to a requested feature, whatever that image
shows. Left free, a synthetic "coat" lands on the nearest shirt as often as on a coat, and the
delivered label is wrong (docs/search.md §4 measures how often). A territory gives
each class k the pool images the run's pool labels (:mod:`pcevolve.search.pool_labels`: the DP class
model, or the class model co-trained with a pixel CNN) assign to k with the highest confidence —
``size_k`` of them — and the decoder retrieves class-k samples only there. The search still decides
*which* territory images are delivered (those nearest to its evolved Gaussians); the territory decides
which images can carry label k at all.

Territories are disjoint (a pool image is assigned to one class; only a class the model assigns no
pool image at all borrows its single most likely one), and a function of the DP release
and public data only: post-processing, free.

A territory also says how a class spreads: the covariance of its members' coordinates
(``spreads``). Where the release carries no class covariances (small classes: only the sums are
worth their noise), this is what the search's class Gaussians take — the whole public pool's
covariance, which includes the spread *between* classes, made the search sample far from each
class and deliver the territory's least confident images, whose labels are the least often right
(docs/search.md §4).
"""

from __future__ import annotations

import numpy as np

from pcevolve.decoders.territories import ClassTerritories
from pcevolve.search.pool_labels import PoolLabels


def member_spread(coordinates: np.ndarray) -> np.ndarray:
    """Covariance (P, P) of a territory's coordinates; a territory of one point spreads by nothing (zeros)."""
    z = np.asarray(coordinates, dtype=np.float64)
    if len(z) < 2:
        return np.zeros((z.shape[1], z.shape[1]))
    return np.atleast_2d(np.cov(z, rowvar=False))


def cut_territories(pool_coordinates: np.ndarray, labels: PoolLabels, sizes: np.ndarray,
                    eligible: np.ndarray | None = None) -> ClassTerritories:
    """The ``sizes[k]`` pool points the labels assign to class k with the highest confidence, among the
    ``eligible`` ones (a boolean mask: the pool points that look like the task at all; all if None) — fewer if
    they assign fewer; at least one per class: the eligible pool point most likely of class k, if none is
    assigned."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if sizes.shape != (labels.num_classes,) or np.any(sizes < 1):
        raise ValueError(f"sizes must be {labels.num_classes} positive counts, got {sizes}")
    if len(pool_coordinates) != len(labels.confidence):
        raise ValueError(f"{len(pool_coordinates)} pool points but {len(labels.confidence)} labels")
    if eligible is not None and not np.any(eligible):
        eligible = None  # nothing looks like the task: every pool point stays a candidate
    likelihood = labels.posterior if eligible is None else np.where(np.asarray(eligible)[:, None],
                                                                     labels.posterior, -1.0)
    members = []
    for k, size in enumerate(sizes):
        rows = labels.surest(k, size, eligible)
        if len(rows) == 0:  # no pool point is assigned to k: its single most likely point stands in
            rows = np.array([int(np.argmax(likelihood[:, k]))])
        members.append(np.sort(rows))
    return ClassTerritories(members=tuple(members),
                            spreads=np.stack([member_spread(pool_coordinates[m]) for m in members]))
