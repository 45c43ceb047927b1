"""Each canary's score from what the end-to-end audit's run ships (:mod:`pcevolve.audit.end_to_end`, step 4).

:func:`score_canaries` reads the audit run's encoder, public basis, ``release.npz`` and delivered set, never its
``secure/``: the release scores each canary by what it adds to its class's released statistics
(:func:`release_scores`; less the audited run's own release when both runs encode alike,
:func:`same_public_side`), and a canary found in the delivered set scores +inf (:func:`copied_canaries`).
Higher means "more likely in". Every score is a function of the canaries (all of them, in or out), the shipped
files and the reference only: no coin goes in, so the guesses made from the scores are post-processing of the
run's output.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from pcevolve.config import load_config
from pcevolve.data import read_image_folder
from pcevolve.modalities import MODALITIES
from pcevolve.privacy.clipping import clip_rows
from pcevolve.run_folder import RunFolder
from pcevolve.privacy.released_statistics import StatisticsRelease
from pcevolve.search.assembly import PUBLIC_FEATURES_FILE, load_public_features

#: A delivered image within this RMS pixel difference (0–255 scale) of a canary is a copy of it.
COPY_TOLERANCE = 2.0


def score_canaries(audit_folder: RunFolder, images: np.ndarray, classes: np.ndarray, *,
                   reference: RunFolder | None = None,
                   progress: bool = False) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], str]:
    """Each canary's score from what the audit run ships (higher: more likely in), which canaries it delivered,
    what the scores read and how (:func:`release_scores`' method).

    Reads the audit run's encoder, public basis, ``release.npz`` and delivered set only, never its ``secure/``; and
    the audited run's ``release.npz`` as the reference of :func:`release_scores` when ``reference`` is given and
    both runs encode alike (:func:`same_public_side`).
    """
    modality = MODALITIES.get_part(load_config(audit_folder.config_path).data.modality)
    encoder = modality.load_encoder(audit_folder.path / "encoder")
    _, features = encoder.encode_both(images, batch_size=256, progress=progress)
    coordinates = load_public_features(audit_folder).basis.reduce(features)
    release = StatisticsRelease.load(audit_folder.path / "release.npz")
    baseline = None
    if reference is not None and same_public_side(audit_folder, reference):
        baseline = StatisticsRelease.load(reference.path / "release.npz")
    scores, components, method = release_scores(coordinates, classes, release, reference=baseline)
    delivered = read_image_folder(audit_folder.path / modality.delivered_name, size=images.shape[1],
                                  mode="L" if images.ndim == 3 else "RGB", min_per_class=0).samples
    copied = copied_canaries(images, delivered)
    return np.where(copied, np.inf, scores), copied, (*components, "copies"), method


def same_public_side(first: RunFolder, second: RunFolder) -> bool:
    """Whether two runs encode and reduce samples identically: byte-equal encoder files and public features.

    True for a run whose encoder is trained on public data only (its training is seeded and the audit run repeats
    it); False when DP-SGD fine-tuned either encoder on its own private set.
    """
    paths = [Path(PUBLIC_FEATURES_FILE), *(p.relative_to(first.path) for p in (first.path / "encoder").iterdir())]
    return all((second.path / p).is_file() and (first.path / p).read_bytes() == (second.path / p).read_bytes()
               for p in paths)


#: How the release's scores were computed (:func:`release_scores`).
DIFFERENCE, CENTRED, NO_SIGNAL = "difference", "centred", "none"


def release_scores(coordinates: np.ndarray, classes: np.ndarray, release: StatisticsRelease, *,
                   reference: StatisticsRelease | None = None) -> tuple[np.ndarray, tuple[str, ...], str]:
    """Each canary's score in the released class statistics, the components read, and the method.

    A canary j of class k adds v_c(j) to each released component c of class k — its clipped coordinates to the
    sum, their outer product to the second moment, its random Fourier features to the RFF sum — exactly as the
    release computes them (:class:`~pcevolve.privacy.statistics.ClassStatisticsRelease`), and the release adds
    N(0, s_c²) to every coordinate. Per class, with V the canaries' contributions (one row each) and R the released
    values, R = P + Vᵀb + noise: P what the private samples put there, b the coins.

    * ``"difference"``, when ``reference`` — the audited run's own release, made on the same private samples
      without canaries — released every component in the same directions, clip radius and random features: R − R_ref
      cancels P, leaving Vᵀb + noise of variance s_c² + s_ref,c². The score is the posterior mean of b − ½ under
      independent fair coins (prior variance ¼), with the noise scale estimated from the least-squares residual
      (empirical Bayes): at the claimed noise this is about the likelihood-ratio projection of the residual onto
      each canary's contribution; with (almost) no noise, where projections would suffer from the other canaries'
      overlap, it tends to the least-squares solution, which recovers b exactly.
    * ``"centred"``, otherwise (another encoder, another choice of directions): Σ_c ⟨R_c(k) − ½ Σ_i v_c(i),
      v_c(j) − v̄_c⟩ / s_c², the likelihood-ratio projection of the release, less the canaries' expected part, on
      what canary j adds beyond its class's average canary. Centring removes what a class's canaries share, which
      the unknown P would shift by a different amount in every class; P still weighs on every score.
    * ``"none"``, after a vote (the class means are public centres): every score is 0.

    The count is left out: every canary of a class adds the same 1 to it. A function of the canaries (all of them,
    in or out), the release and the reference only, none of which the coins decide: the guesses are
    post-processing of the run's output.
    """
    scores = np.zeros(len(coordinates))
    if release.vote is not None:
        return scores, (), NO_SIGNAL
    blocks = _components(coordinates, release)
    baselines = {name: _reference_component(name, release, reference) for name in blocks}
    if reference is not None and all(baselines[name] is not None and baselines[name][0].shape == released.shape
                                     for name, (_, released, _) in blocks.items()):
        differences = {name: (mine, released - baselines[name][0], math.hypot(std, baselines[name][1]))
                       for name, (mine, released, std) in blocks.items()}
        return _posterior_scores(differences, classes), tuple(blocks), DIFFERENCE
    return _centred_scores(blocks, classes), tuple(blocks), CENTRED


def _components(coordinates: np.ndarray,
                release: StatisticsRelease) -> dict[str, tuple[np.ndarray, np.ndarray, float]]:
    """Per released component with noise (count excepted): each canary's contribution (m, D), the released values
    (K, D), in the coordinates the noise was added to, and the noise std."""
    statistics, dim = release.statistics, release.dim
    z = np.asarray(coordinates, dtype=np.float64)[:, :dim]
    clipped = clip_rows(z, release.clip_norm)
    parts = {"sum": (clipped, np.asarray(statistics.sums)[:, :dim])}
    if statistics.second_moments is not None:
        parts["second_moment"] = _second_moment_parts(clipped, np.asarray(statistics.second_moments))
    if statistics.rff_sums is not None and release.rff.dim == dim:
        parts["rff"] = (release.rff.transform(z), np.asarray(statistics.rff_sums))
    stds = {name: float(statistics.noise_stds.get(name, 0.0)) for name in parts}
    return {name: (*parts[name], stds[name]) for name in parts if stds[name] > 0}


def _posterior_scores(blocks: dict[str, tuple[np.ndarray, np.ndarray, float]], classes: np.ndarray) -> np.ndarray:
    """Per class: E[b − ½ | R − R_ref] with b_i independent of prior variance ¼ (a Gaussian stand-in for a fair
    coin) and the whitened noise's variance τ² estimated from the least-squares residual (1 when the canaries
    outnumber the released coordinates: no residual left to estimate it from)."""
    scores = np.zeros(len(classes))
    for k in np.unique(classes):
        members = np.flatnonzero(classes == k)
        # Whitened: every coordinate divided by its noise std, so the claimed noise is N(0, 1) everywhere.
        design = np.concatenate([mine[members] / std for mine, _, std in blocks.values()], axis=1)  # (n, D)
        target = np.concatenate([(released[k] - 0.5 * mine[members].sum(axis=0)) / std
                                 for mine, released, std in blocks.values()])  # (D,) = designᵀ(b − ½) + noise
        fitted, _, rank, _ = np.linalg.lstsq(design.T, target, rcond=None)
        left = design.shape[1] - rank
        tau2 = float(np.sum((target - design.T @ fitted) ** 2)) / left if left > 0 else 1.0
        gram = design @ design.T + 4.0 * max(tau2, 1e-12) * np.eye(len(members))
        scores[members] = np.linalg.solve(gram, design @ target)
    return scores


def _centred_scores(blocks: dict[str, tuple[np.ndarray, np.ndarray, float]], classes: np.ndarray) -> np.ndarray:
    """Per class: Σ_c ⟨R_c − ½ Σ_i v_c(i), v_c(j) − v̄_c⟩ / s_c² (see :func:`release_scores`)."""
    scores = np.zeros(len(classes))
    for mine_all, released, std in blocks.values():
        for k in np.unique(classes):
            members = np.flatnonzero(classes == k)
            mine = mine_all[members]
            residual = released[k] - 0.5 * mine.sum(axis=0)
            scores[members] += (mine - mine.mean(axis=0)) @ residual / std**2
    return scores


def _reference_component(name: str, release: StatisticsRelease,
                         reference: StatisticsRelease | None) -> tuple[np.ndarray, float] | None:
    """The reference's values of component ``name`` (as :func:`_components` lays them out) and their noise std,
    when it released that component in the same directions, clip radius and random features as ``release``."""
    if reference is None or reference.vote is not None:
        return None
    same = (reference.dim == release.dim and math.isclose(reference.clip_norm, release.clip_norm, rel_tol=1e-12)
            and np.shape(reference.statistics.counts) == np.shape(release.statistics.counts))
    if name == "rff":
        same = same and np.array_equal(reference.rff.frequencies, release.rff.frequencies)
    values = {"sum": reference.statistics.sums, "second_moment": reference.statistics.second_moments,
              "rff": reference.statistics.rff_sums}[name]
    std = float(reference.statistics.noise_stds.get(name, 0.0))
    if not same or values is None or not std > 0:
        return None
    values = np.asarray(values)
    if name == "sum":
        return values[:, :release.dim], std
    if name == "second_moment":
        return _second_moment_parts(np.zeros((0, release.dim)), values)[1], std
    return values, std


def _second_moment_parts(clipped: np.ndarray, released: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each canary's x xᵀ and the released Σ x xᵀ as the coordinates the noise was added to: the upper triangle
    of a full matrix (its lower half is a copy, not fresh noise), or the diagonal form as it is."""
    if released.ndim == 2:
        return clipped * clipped, released
    rows, cols = np.triu_indices(clipped.shape[1])
    return clipped[:, rows] * clipped[:, cols], released[:, rows, cols]


def copied_canaries(canaries: np.ndarray, delivered: np.ndarray, *, tolerance: float = COPY_TOLERANCE) -> np.ndarray:
    """(m,) bool: whether some delivered image is within ``tolerance`` RMS pixel difference of each canary.

    An out canary is in no input of the audit run but the auditor's, so a copy of it cannot come from public
    data: a copy means the canary was in.
    """
    found = np.zeros(len(canaries), dtype=bool)
    if len(delivered) == 0:
        return found
    a = np.asarray(canaries, dtype=np.float64).reshape(len(canaries), -1)
    b = np.asarray(delivered, dtype=np.float64).reshape(len(delivered), -1)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"canaries and delivered images differ in shape: {canaries.shape[1:]} and "
                         f"{delivered.shape[1:]}")
    squared_b = np.einsum("ij,ij->i", b, b)
    for start in range(0, len(a), 256):  # bounds memory at 256 × delivered distances
        block = a[start:start + 256]
        squared = np.einsum("ij,ij->i", block, block)[:, None] + squared_b[None, :] - 2.0 * block @ b.T
        found[start:start + 256] = np.min(squared, axis=1) <= tolerance**2 * a.shape[1]
    return found
