"""The peers' selectors live in ``bench/peers/`` (they are benchmarks' systems, not part of the product); their
mechanisms are tested here like pcevolve's own, with the privacy tests' helpers."""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
for folder in (TESTS.parent / "bench", TESTS / "privacy"):  # `import peers.…` and `import privacy_helpers`
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
