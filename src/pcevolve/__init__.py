"""pcevolve: Private Contrastive Evolution.

Turns a few hundred privacy-sensitive labelled samples into a larger synthetic
dataset with a formal differential-privacy guarantee.

Importing this package has no side effects: no downloads, no seeding, no
warning filters, no log handlers. Subpackages follow the pipeline:
``data`` → ``privacy`` → (``encoders`` → ``evolution`` → ``decoders``) → ``evaluation``.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
