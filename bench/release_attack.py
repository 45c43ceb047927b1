"""Attack a run folder as someone holding every file except ``secure/``: can the release's noise be regenerated?

    python bench/release_attack.py runs/demo [more run folders]       # → bench/results/release_attack.json

The class-statistics release adds N(0, s_count²) to each exact per-class count first. If the
standard normals behind that noise can be reproduced, ``noisy − s_count · g`` gives the exact
counts back: whole numbers. The attack tries every way of reproducing them from shipped files:

* ``seed, old scheme`` — the generator an earlier pcevolve drew both the RFF frequencies and the
  noise from (``SeedSequence([seed, 3])``);
* ``seed, reproducible scheme`` — the generator ``privacy.reproducible_noise: true`` derives for the
  release stage (that mode is labelled not DP: this hypothesis must succeed there);
* ``saved frequencies`` — the frequencies in ``release.npz``, rescaled to standard normals, as if
  they were the noise's first draws.

It also scans every array in the folder's ``.npz`` files (outside ``secure/``) for a copy of a
reproducible noise stream: an affine transform of any stretch of its first draws. A run with
secure noise must let every hypothesis fail. The tests run these functions on small runs.

``python bench/release_attack.py --smoke`` attacks a tiny run instead (bench/smoke.py: scikit-learn's digits, every
stage scaled down, secure noise, made in seconds) and writes under ``--out`` or a temporary folder.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import smoke
import yaml
from results_file import write_results

from pcevolve.randomness import NOISE_STREAMS, RunRandomness

WHOLE = 1e-6  # recovered counts within this of an integer count as recovered


@dataclass(frozen=True)
class Hypothesis:
    """One way of regenerating the count noise, and what it gives."""

    name: str
    recovered: bool
    counts: list[float]


def _seed(folder: Path) -> int:
    text = (folder / "config.yaml").read_text(encoding="utf-8")
    return int(yaml.safe_load(text)["seed"])


def _release(folder: Path) -> dict[str, np.ndarray]:
    with np.load(folder / "release.npz", allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def count_std(release: dict[str, np.ndarray]) -> float:
    names = [str(n) for n in release["noise_std_names"]]
    return float(release["noise_std_values"][names.index("count")])


def recover_counts(noisy: np.ndarray, std: float, normals: np.ndarray) -> Hypothesis:
    """``noisy − std · normals``; recovered when every entry is a whole, positive number."""
    guess = np.asarray(noisy, dtype=np.float64) - std * np.asarray(normals, dtype=np.float64)[: len(noisy)]
    whole = bool(np.all(np.abs(guess - np.round(guess)) < WHOLE) and np.all(np.round(guess) >= 1))
    return Hypothesis("", whole, [float(x) for x in guess])


def hypotheses(folder: Path) -> list[Hypothesis]:
    """Every regeneration the attack tries on ``folder``, with its outcome."""
    seed, release = _seed(folder), _release(folder)
    noisy, std = release["counts"], count_std(release)
    k = len(noisy)
    candidates = {
        "seed, old scheme": old_scheme_generator(seed, "fitness").standard_normal(k),
        "seed, reproducible scheme": stream_normals(seed, "release", k),
        "saved frequencies": release["rff_frequencies"].ravel()[:k] * float(release["rff_bandwidth"]),
    }
    out = []
    for name, normals in candidates.items():
        result = recover_counts(noisy, std, normals)
        out.append(Hypothesis(name, result.recovered, result.counts))
    return out


_OLD_STAGE_KEYS = {"representation": 1, "decoder": 2, "fitness": 3}  # what pcevolve ≤ 0.1 (Nov 2026) used


def old_scheme_generator(seed: int, stage: str) -> np.random.Generator:
    """The generator an earlier pcevolve used for both a stage's noise and its public draws."""
    return np.random.default_rng(int(np.random.SeedSequence([seed, _OLD_STAGE_KEYS[stage]]).generate_state(1)[0]))


def stream_normals(seed: int, stage: str, count: int) -> np.ndarray:
    """The first ``count`` standard normals of the reproducible noise stream of ``stage``."""
    noise = RunRandomness(seed, reproducible_noise=True).noise(stage)
    return noise.generator.standard_normal(count)  # type: ignore[attr-defined]


def stream_uniforms(seed: int, stage: str, count: int) -> np.ndarray:
    """The first ``count`` uniforms of the reproducible noise stream of ``stage`` (Poisson sampling)."""
    noise = RunRandomness(seed, reproducible_noise=True).noise(stage)
    return noise.generator.random(count)  # type: ignore[attr-defined]


def is_affine_copy(array: np.ndarray, stream: np.ndarray, *, min_length: int = 16) -> bool:
    """Whether ``array`` (flattened) equals a + b·stream[j : j + n] for some offset j and b ≠ 0.

    Matched on ratios of successive differences, which an affine map leaves unchanged, then
    confirmed by a least-squares fit over the whole stretch.
    """
    x = np.asarray(array, dtype=np.float64).ravel()
    if x.size < min_length or not np.all(np.isfinite(x)) or x.size > stream.size:
        return False
    dx = np.diff(x[:3])
    if dx[0] == 0:
        return False
    target = dx[1] / dx[0]
    ds = np.diff(stream)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = ds[1:] / ds[:-1]
    for j in np.flatnonzero(np.isclose(ratios, target, rtol=1e-7, atol=0.0)):
        if j + x.size > stream.size:
            continue
        window = stream[j: j + x.size]
        design = np.stack([np.ones_like(window), window], axis=1)
        coef, *_ = np.linalg.lstsq(design, x, rcond=None)
        if coef[1] != 0 and np.allclose(design @ coef, x, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(x).max())):
            return True
    return False


def stream_copies(folder: Path, *, draws: int = 100_000) -> list[str]:
    """``file:array`` of every shipped array that copies a stretch of a reproducible noise stream."""
    seed = _seed(folder)
    streams = {f"{stage} {kind}": make(seed, stage, draws) for stage in NOISE_STREAMS
               for kind, make in (("normals", stream_normals), ("uniforms", stream_uniforms))}
    streams.update({f"{stage} normals, old scheme": old_scheme_generator(seed, stage).standard_normal(draws)
                    for stage in _OLD_STAGE_KEYS})
    found = []
    for path in sorted(folder.rglob("*.npz")):
        if "secure" in path.relative_to(folder).parts:
            continue
        with np.load(path, allow_pickle=False) as data:
            for name in data.files:
                array = data[name]
                if not np.issubdtype(array.dtype, np.floating):
                    continue
                # Long arrays: their start and a stretch from the middle are enough to find a copy.
                for part in (array.ravel()[:4096], array.ravel()[array.size // 2: array.size // 2 + 4096]):
                    if any(is_affine_copy(part, stream) for stream in streams.values()):
                        found.append(f"{path.relative_to(folder)}:{name}")
                        break
    return found


def attack(folder: Path) -> dict:
    """The attack's findings on one run folder (JSON-ready)."""
    return {"run": str(folder), "hypotheses": [asdict(h) for h in hypotheses(folder)],
            "recovered": any(h.recovered for h in hypotheses(folder)), "stream_copies": stream_copies(folder)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="*", type=Path, help="run folders")
    smoke.add_arguments(parser)
    args = smoke.parse_run_folders(parser, argv)
    if args.smoke:
        args.runs = [smoke.image_run(args.out)]

    results = [attack(folder) for folder in args.runs]
    for result in results:
        print(f"{result['run']}: counts recovered: {result['recovered']}; stream copies: {result['stream_copies']}")
        for h in result["hypotheses"]:
            print(f"  {h['name']:>26}: {'RECOVERED' if h['recovered'] else 'nothing'} "
                  f"({', '.join(f'{c:.3f}' for c in h['counts'])})")
    print(write_results(results, "release_attack"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
