"""Checks of a whole run configuration that need more than one field: registry keys and cross-field rules.

Run when a :class:`~pcevolve.config.RunConfig` is built (from YAML, the CLI or Python), so a
typo in an operator or decoder name, or a combination that a later stage would refuse, is an
error *before* the first privacy charge — never a traceback after ε was spent. Data-dependent
checks (sizes of the folders) run in ``pcevolve.pipeline`` right after reading, also before any
charge.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

# The parts' catalogues, plain data: checking a config loads no torch, and the config imports no part.
from pcevolve.catalog.decoders import DECODER_TRAITS, INSTALL_HINT, LLM_DECODER, missing_parts
from pcevolve.catalog.encoders import BACKBONE_BLOCKS
from pcevolve.catalog.executors import EXECUTOR_NAMES, RAY_INSTALL_HINT
from pcevolve.catalog.modalities import MODALITY_TRAITS, ModalityTraits, modality_spec
from pcevolve.catalog.search import CROSSOVER_NAMES, MAX_VOTE_CLASSES, MUTATION_NAMES
from pcevolve.registry import Registry

if TYPE_CHECKING:
    from pcevolve.config.schema import RunConfig


def run_config_problems(config: "RunConfig") -> list[str]:
    """Every problem of ``config``, one line each, starting with the dotted key it concerns."""
    modalities, backbones = Registry("modality", MODALITY_TRAITS), Registry("backbone", BACKBONE_BLOCKS)
    decoders = Registry("decoder", DECODER_TRAITS)
    mutations, crossovers = Registry("mutation", dict.fromkeys(MUTATION_NAMES)), \
        Registry("crossover", dict.fromkeys(CROSSOVER_NAMES))
    executors = Registry("executor", dict.fromkeys(EXECUTOR_NAMES))

    problems: list[str] = []
    search, decoder, rep, privacy = config.search, config.decoder, config.representation, config.privacy
    for key, registry, name in (("data.modality", modalities, config.data.modality),
                                ("representation.backbone", backbones, rep.backbone),
                                ("decoder.name", decoders, decoder.name),
                                ("search.mutation", mutations, search.mutation),
                                ("search.periodic_mutation", mutations, search.periodic_mutation),
                                ("search.crossover", crossovers, search.crossover),
                                ("executor.name", executors, config.executor.name)):
        if name not in registry:
            problems.append(f"{key}: unknown {registry.kind} {name!r}; known: {', '.join(sorted(registry))}")

    if decoder.name in decoders and not decoders[decoder.name].makes(config.data.modality) \
            and not config.makes_samples:  # without a pool nothing is decoded
        serving = sorted(name for name, part in decoders.items() if part.makes(config.data.modality))
        problems.append(f"decoder.name: decoder {decoder.name!r} does not make {config.data.modality} samples; "
                        f"for data.modality {config.data.modality!r} use one of: {', '.join(serving)}")
    if config.executor.name == "ray" and importlib.util.find_spec("ray") is None:
        problems.append(f"executor.name: executor ray needs Ray on this machine and on the cluster: {RAY_INSTALL_HINT}")
    if decoder.name == LLM_DECODER and missing_parts():
        problems.append(f"decoder.name: the {decoder.name} decoder rewrites texts with a local LLM that is not "
                        f"installed ({', '.join(missing_parts())} missing): {INSTALL_HINT}")
    # An unknown modality was named above; the checks below that depend on what a modality is then assume nothing.
    modality = modalities.get(config.data.modality, ModalityTraits("sample", encoder_trains_under_dp=True))
    if not modality.encoder_trains_under_dp and privacy.split.get("representation", 0.0) > 0:
        problems.append(f"privacy.split.representation: with data.modality {config.data.modality} the encoder is not "
                        f"trained on the private {modality.noun}s (it is fitted on public data or used as pretrained, "
                        "free); give the representation stage no share (its budget goes to the release)")
    problems += _class_problems(config, modality)
    if config.data.modality in modalities:  # what only the modality itself knows to refuse
        own_checks = modality_spec(config.data.modality).load("config_problems")
        problems += own_checks(config) if own_checks is not None else []
    if rep.backbone in backbones and rep.trainable_blocks is not None:
        blocks = backbones[rep.backbone]
        if rep.trainable_blocks > blocks:
            problems.append(f"representation.trainable_blocks: {rep.trainable_blocks} exceeds the {blocks} blocks of "
                            f"{rep.backbone}")
    if search.basis_dim > rep.feature_dim:
        problems.append(f"search.basis_dim: {search.basis_dim} is more than the encoder's feature_dim "
                        f"{rep.feature_dim}; the search basis lives inside the encoder's feature space")

    if decoder.name in decoders and decoders[decoder.name].needs_pixel_view and rep.pixel_view == 0:
        problems.append(f"decoder.name: decoder {decoder.name!r} draws the image the features' pixel view holds; "
                        "set representation.pixel_view above 0 (28 by default)")
    if search.pool_labeller == "pixel-cnn" and not modality.pixels:
        problems.append(f"search.pool_labeller: pixel-cnn learns from image pixels; data.modality "
                        f"{config.data.modality!r} takes class-model (or auto)")
    if search.pixel_frequencies > 0:
        if not modality.pixels or rep.pixel_view == 0:
            problems.append("search.pixel_frequencies: only images whose encoder keeps a pixel view "
                            "(representation.pixel_view > 0) have pixel frequencies; set it to 0")
        elif search.pixel_frequencies > min(rep.pixel_view, config.data.image_size):
            problems.append(f"search.pixel_frequencies: {search.pixel_frequencies} is more than the pixel view's side "
                            f"({min(rep.pixel_view, config.data.image_size)}: representation.pixel_view, at most "
                            "data.image_size)")

    if search.release_dim is not None and search.release_dim > config.basis_size:
        problems.append(f"search.release_dim: {search.release_dim} is more than the basis's {config.basis_size} "
                        "directions (search.basis_dim, plus the pixel frequencies' directions)")

    stages = privacy.split
    if config.makes_samples:
        problems += _made_problems(config, modality)
    if stages.get("release", 0.0) <= 0.0:
        problems.append("privacy.split.release: the search is judged on one DP release of class statistics, "
                        "which needs a share above 0")
    if stages.get("verdict", 0.0) > 0.0 and not config.makes_samples and (search.territory <= 0 or (
            decoder.name in decoders and not decoders[decoder.name].retrieval)):
        problems.append("privacy.split.verdict: the private verdict judges labellings of a retrieval decoder's pool "
                        f"(decoder.name: nearest-public) cut into class territories (search.territory >= 1); give "
                        f"its share to the release (decoder {decoder.name!r}, territory {search.territory:g})")
    uses_private = decoder.training != "public"
    if uses_private and decoder.name in decoders and not decoders[decoder.name].trainable_under_dp:
        # A property of the decoder (decoders/round_trips.py), not of this check: retrieval trains nothing.
        problems.append(f"decoder.training: decoder {decoder.name!r} has nothing to train under DP (it returns "
                        f"samples of the public pool); use training: public (got {decoder.training!r})")
    if uses_private and stages.get("decoder", 0.0) <= 0.0:
        problems.append(f"privacy.split.decoder: decoder.training {decoder.training!r} trains on the private "
                        "data under DP and needs a share above 0 (or use training: public)")
    return problems


def _made_problems(config: "RunConfig", traits: ModalityTraits) -> list[str]:
    """What a run without a public pool (``data.public: null``) needs: a table, its schema declared in a file, and
    the whole budget on the release its rows are made from (nothing is trained or retrieved)."""
    if not traits.needs_schema:
        return [f"data.public: with data.modality {config.data.modality!r} a run needs a public pool of "
                f"{traits.noun}s like the private ones (its features and delivered samples come from it); runs "
                "without one are made for tables so far: give data.public"]
    problems = []
    if config.data.schema_file is None:
        problems.append("data.schema_file: a table run without a public table needs its schema declared in a file "
                        "(column types, bounds a domain expert would state, category lists: public knowledge, "
                        "never the private rows' own min/max): `pcevolve init PRIVATE.csv` drafts one for you to "
                        "check, `pcevolve data schema TABLE.csv` drafts one from a public table")
    classes = config.data.classes
    if config.synthesis.labels == "logistic" and classes is not None and len(classes) != 2:
        problems.append(f"synthesis.labels: the logistic labeller labels two classes; data.classes declares "
                        f"{len(classes)} (use marginals, or auto)")
    synthesis, split = config.synthesis, config.privacy.split
    if synthesis.evolve and synthesis.labels == "logistic":
        problems.append("synthesis.labels: the evolution judges the marginals' own labels; use marginals (or auto) "
                        "with synthesis.evolve")
    if synthesis.evolve and split.get("verdict", 0.0) <= 0:
        problems.append("privacy.split.verdict: synthesis.evolve pays a private verdict each generation from the "
                        "verdict stage; give it a share, e.g. split: {release: 0.95, verdict: 0.05}")
    if not synthesis.evolve and split.get("verdict", 0.0) > 0:
        problems.append("privacy.split.verdict: without a public pool only synthesis.evolve pays from the verdict "
                        "stage; give it no share, or set synthesis.evolve: true")
    paid = sorted(stage for stage, share in split.items() if share > 0 and stage not in ("release", "verdict"))
    if paid:
        problems.append(f"privacy.split: without a public pool the rows are made from one release of the private "
                        f"rows' statistics; give {', '.join(paid)} no share (split: {{release: 1.0}})")
    return problems


def _class_problems(config: "RunConfig", traits: ModalityTraits) -> list[str]:
    """The declared classes (``data.classes``): given for files, fit for folder names, few enough for the vote.

    Decided from the config alone, so whether a run proceeds never depends on which labels the private data holds.
    """
    classes, modality = config.data.classes, config.data.modality
    if classes is None:
        if modality in MODALITY_TRAITS and not traits.classes_from_folders:
            return [f"data.classes: a {modality} run reads its classes from the config, not from the private labels "
                    "(one record more or less must not change them): list the task's classes, e.g. classes: [bad, "
                    "good]; `pcevolve init` proposes the label values it finds for you to confirm"]
        return []  # images: one class per folder of data.private, the folders being the declaration
    problems = []
    if traits.classes_from_folders:
        bad = [name for name in classes if "/" in name or "\\" in name or name.startswith(".")]
        if bad:
            problems.append(f"data.classes: {bad} cannot name a folder (each image class is a folder of "
                            "data.private and of the delivered set)")
    if config.search.class_means == "votes" and len(classes) > MAX_VOTE_CLASSES:
        problems.append(f"data.classes: {len(classes)} classes; search.class_means: votes takes at most "
                        f"{MAX_VOTE_CLASSES} (set it to sums)")
    return problems


def check_run_config(config: "RunConfig") -> None:
    """Raise ``ValueError`` listing every problem :func:`run_config_problems` finds."""
    problems = run_config_problems(config)
    if problems:
        raise ValueError("\n".join(problems))
