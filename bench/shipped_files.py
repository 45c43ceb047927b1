"""Check a run folder's shared files: ``python bench/shipped_files.py RUN_FOLDER``.

The acceptance rule for what ``pcevolve run`` + ``pcevolve evaluate`` leave outside ``secure/``: in every ``*.json``
and ``*.jsonl`` file under the folder (JSON Lines line by line), no float under a key containing ``attack``,
``member`` or ``distance`` (at any depth below such a key) carries more than 3 decimals, and no string is an absolute
path. The rule is :func:`pcevolve.evaluation.shipped.shipped_violations`; this is its command line.

Prints every violation as ``file: key.path = value (why)`` and exits 1 if there is any, 0 if none (2: the folder
does not exist, or none was given).

``--smoke`` checks a tiny run folder instead (bench/smoke.py: scikit-learn's digits, every stage scaled down, made
under ``--out`` or a temporary folder in seconds): ``python bench/shipped_files.py --smoke``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pcevolve.evaluation.shipped import PRIVATE_FIGURE_WORDS, shipped_violations


def check(folder: Path, words: tuple[str, ...] = PRIVATE_FIGURE_WORDS) -> int:
    """Print every violation under ``folder`` (and a one-line verdict to stderr); return the exit code."""
    if not folder.is_dir():
        print(f"error: {folder} is not a folder", file=sys.stderr)
        return 2
    violations = shipped_violations(folder, words=words)
    for violation in violations:
        print(violation)
    verdict = (f"{len(violations)} violation(s) in the shared files of {folder}" if violations
               else f"the shared files of {folder} pass")
    print(verdict, file=sys.stderr)
    return 1 if violations else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, nargs="?",
                        help="a run folder (its secure/ folder is skipped), or its report/")
    parser.add_argument("--word", action="append", default=[],
                        help="also limit the floats under keys containing this word (repeatable)")
    # The smoke flags by hand, not by bench/smoke.py: tests load this file on its own (bench/ not on the path).
    parser.add_argument("--smoke", action="store_true",
                        help="check a tiny run made in seconds instead (bench/smoke.py)")
    parser.add_argument("--out", type=Path, default=None,
                        help="with --smoke: where the tiny run is made (default: a new temporary folder)")
    args = parser.parse_args(argv)
    if (args.folder is not None) == args.smoke:
        parser.error("give a run folder or --smoke")
    if args.smoke:
        import smoke  # run as a script, bench/ is on the path

        args.folder = smoke.image_run(smoke.results_folder(args))
    return check(args.folder, PRIVATE_FIGURE_WORDS + tuple(args.word))


if __name__ == "__main__":
    sys.exit(main())
