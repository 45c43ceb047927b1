"""pcevolve: Private Contrastive Evolution.

Turns a few hundred privacy-sensitive labelled samples into a larger synthetic
dataset with a formal differential-privacy guarantee.

Importing this package has no side effects: no downloads, no seeding, no
warning filters, no log handlers. Subpackages follow the pipeline:
``data`` → ``privacy`` → (``encoders`` → ``evolution`` → ``decoders``) → ``evaluation``.

As a library::

    from pcevolve import Synthesizer
    synth = Synthesizer(epsilon=8.0).fit("private/", public="public/")
    synth.save("synthetic/")

(:mod:`pcevolve.api`; imported on first use, so ``import pcevolve`` stays light.)
"""

from pcevolve.lazy_exports import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, _exports = lazy_exports(__name__, {"api": ["NotFittedError", "Synthesizer"]})
__all__ = [*_exports, "__version__"]
