"""The sizes and fixed recipes of an image evaluation, apart from the code that runs it.

Kept free of torch and the models so that ``pcevolve evaluate``'s options can show their defaults without loading
them (every ``pcevolve`` command would otherwise start several seconds slower: docs/performance.md).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Square input size of the independent evaluator, in pixels (:mod:`pcevolve.evaluation.features` says why 48).
INDEPENDENT_INPUT_SIZE = 48


@dataclass(frozen=True)
class EvaluationSettings:
    """Sizes and fixed recipes of an evaluation; tests shrink them.

    Attributes:
        seed: Seeds every choice and model.
        cnn_epochs: CNN epochs, the same for every line (the recipe's 15).
        probe_folds: Cross-validation folds of the linear probe's C (the library's default is 5; 3 here costs
            12 instead of 20 fits, and on the demo features the C values score nearly alike on the test set
            anyway: measured in docs/compare.md, "The evaluation's own recipe", and docs/performance.md).
        full_max: Most full-set images used (seeded choice); the full line's CNN then costs no more than ours.
        public_max: Most public-pool images read; DOMIAS's reference data in pixel space.
        public_features: Of those, how many are encoded for DOMIAS in the independent space.
        distribution_max: Synthetic images, and test images, (seeded choices) whose distributions are compared in each
            feature space.
        independent_input_size: Input size of the independent encoder.
        resamples: Bootstrap resamples of every attack statistic.
        domias_dims: DOMIAS's principal components.
        projections: Sliced-Wasserstein directions.
        batch_size: Encoder batch size.
        threads: Torch and BLAS threads while the evaluation runs (restored afterwards), except while the two
            encoders run (``encode_threads``); 0 leaves them alone. Default 1: on a shared machine of few cores one
            thread trains the CNN far faster than two, because two OpenMP threads wait for each other whenever
            another process holds a core — and the CNNs train in ``workers`` processes side by side (measured in
            docs/performance.md, "The evaluation"). On an idle many-core machine raise it.
        encode_threads: Torch threads while the run's encoder and the independent one encode (nothing else runs
            then); 0: every core this process may use. With the machine to themselves, more threads encode faster
            (measured in docs/performance.md, "The evaluation").
        workers: Processes that train the CNNs and fit the probes side by side (``threads`` threads each; same
            results as one process). Default 2, this project's core count: the models are most of an evaluation's time
            (docs/performance.md, "The evaluation"); 1 trains them in this process. The workers are *spawned*, so a
            script that calls :func:`evaluate_run` with ``workers`` > 1 needs the usual ``if __name__ == "__main__":``
            guard (the ``pcevolve evaluate`` command has it).
    """

    seed: int = 0
    cnn_epochs: int = 15
    probe_folds: int = 3
    full_max: int = 5000
    public_max: int = 2000
    public_features: int = 1000
    distribution_max: int = 2000
    independent_input_size: int = INDEPENDENT_INPUT_SIZE
    resamples: int = 200
    domias_dims: int = 5
    projections: int = 128
    batch_size: int = 256
    threads: int = 1
    encode_threads: int = 0
    workers: int = 2
