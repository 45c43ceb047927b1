"""Check a run folder's shared files: ``python bench/shipped_files.py RUN_FOLDER``.

The acceptance rule for what ``pcevolve run`` + ``pcevolve evaluate`` leave outside ``secure/``: in every ``*.json``
and ``*.jsonl`` file under the folder (JSON Lines line by line), no float under a key containing ``attack``,
``member`` or ``distance`` (at any depth below such a key) carries more than 3 decimals, and no string is an absolute
path. The rule is :func:`pcevolve.evaluation.shipped.shipped_violations`; this is its command line.

Prints every violation as ``file: key.path = value (why)`` and exits 1 if there is any, 0 if none (2: the folder
does not exist, or none was given).

``--against OTHER`` reads every key, whatever its name: OTHER is the same run judged against another private set
(one sample more or less); every float that differs between the two folders' shared JSON files must carry at most 3
decimals, and no key, list length or file may differ (:func:`pcevolve.evaluation.shipped.dependence_violations`). A
key's name cannot say whether a private set shaped its value; a second judgement can.

``--smoke`` checks a tiny run folder instead (bench/smoke.py: scikit-learn's digits, every stage scaled down, made
under ``--out`` or a temporary folder in seconds): ``python bench/shipped_files.py --smoke``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pcevolve.evaluation.shipped import (
    PRIVATE_FIGURE_WORDS,
    Violation,
    dependence_violations,
    shared_files,
    shipped_violations,
)


def against(folder: Path, other: Path) -> list[Violation]:
    """Every key of the two folders' shared JSON files that one private set decides beyond rounding."""
    import json

    mine = {path.relative_to(folder).as_posix(): path for path in shared_files(folder) if path.suffix == ".json"}
    theirs = {path.relative_to(other).as_posix(): path for path in shared_files(other) if path.suffix == ".json"}
    found = [Violation(name, "", None, "a file present with one private set only") for name in sorted(set(mine) ^
                                                                                                     set(theirs))]
    for name in sorted(set(mine) & set(theirs)):
        found += dependence_violations(json.loads(mine[name].read_text(encoding="utf-8")),
                                       json.loads(theirs[name].read_text(encoding="utf-8")), file=name)
    return found


def check(folder: Path, words: tuple[str, ...] = PRIVATE_FIGURE_WORDS, other: Path | None = None) -> int:
    """Print every violation under ``folder`` (and a one-line verdict to stderr); return the exit code."""
    if not folder.is_dir() or (other is not None and not other.is_dir()):
        print(f"error: {folder if not folder.is_dir() else other} is not a folder", file=sys.stderr)
        return 2
    violations = shipped_violations(folder, words=words) + ([] if other is None else against(folder, other))
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
    parser.add_argument("--against", type=Path, default=None,
                        help="the same run judged against another private set: read every key of both")
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
    return check(args.folder, PRIVATE_FIGURE_WORDS + tuple(args.word), args.against)


if __name__ == "__main__":
    sys.exit(main())
