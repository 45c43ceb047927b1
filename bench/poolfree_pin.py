"""Import pcevolve from one fixed commit, so that the pool-free lab's judge and accountant do not change under it
while others edit ``src/`` (the lab's numbers were all made with the same code).

``POOLFREE_PCEVOLVE_COMMIT`` (default :data:`COMMIT`) names the commit; ``worktree`` imports the working tree's
``src/`` as installed. The commit's ``src/pcevolve`` is extracted once with ``git archive`` into
``bench/.cache/poolfree-pcevolve-<commit>/`` (git-ignored; atomically, so two benches started at once share it) and
put first on ``sys.path``; the commit must be in the clone's history (a full clone has it, a shallow one may not).
Import this module before anything from pcevolve. A helper: no command line (tests/test_benches.py ``HELPERS``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
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
        _extract(commit, target)
    if "pcevolve" in sys.modules:
        raise RuntimeError("import bench/poolfree_pin.py before pcevolve")
    sys.path.insert(0, str(target))
    return commit


def _extract(commit: str, target: Path) -> None:
    """``git archive`` the commit's ``src/pcevolve`` into ``target``, atomically: extracted into a fresh folder beside
    it and renamed, so that two benches started at once on a fresh clone (the smokes run two at a time) never import
    a half-written copy."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "src/pcevolve"], capture_output=True)
    if archive.returncode != 0:
        raise RuntimeError(f"bench/poolfree_pin.py: git archive {commit} failed ({archive.stderr.decode().strip()}); "
                           "the commit must be in this clone's history (not a shallow clone), or set "
                           "POOLFREE_PCEVOLVE_COMMIT=worktree to import the working tree's pcevolve")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=target.name + ".partial-", dir=target.parent))
    try:
        subprocess.run(["tar", "-x", "-C", str(staging), "--strip-components=1"], input=archive.stdout, check=True)
        try:
            staging.rename(target)
        except OSError as error:
            if not (target / "pcevolve" / "__init__.py").exists():  # not another process finishing first
                raise RuntimeError(f"{target} is there but incomplete: delete it and rerun") from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)


PINNED = pin()
