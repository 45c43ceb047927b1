"""Import pcevolve from one fixed commit, so that the pool-free lab's judge and accountant do not change under it
while others edit ``src/`` (the lab's numbers were all made with the same code).

``POOLFREE_PCEVOLVE_COMMIT`` (default :data:`COMMIT`) names the commit; ``worktree`` imports the working tree's
``src/`` as installed. The commit's ``src/pcevolve`` is extracted once with ``git archive`` into
``bench/.cache/poolfree-pcevolve-<commit>/`` (git-ignored) and put first on ``sys.path``. Import this module before
anything from pcevolve.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The commit the lab was measured with (the tree was clean there; its judge and privacy code are what ran).
COMMIT = "4302548b74d019ea64ebc43643cec6c7425a8310"


def pin() -> str:
    commit = os.environ.get("POOLFREE_PCEVOLVE_COMMIT", COMMIT)
    if commit == "worktree":
        return commit
    target = ROOT / "bench" / ".cache" / f"poolfree-pcevolve-{commit[:12]}"
    if not (target / "pcevolve" / "__init__.py").exists():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "src/pcevolve"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target), "--strip-components=1"], input=archive, check=True)
    if "pcevolve" in sys.modules:
        raise RuntimeError("import bench/poolfree_pin.py before pcevolve")
    sys.path.insert(0, str(target))
    return commit


PINNED = pin()
