"""Sift matcher throughput on real SWE-bench patches.

Replicates the instances given (default: ../shared/data Lite + Verified, 800
real tasks) up to the size of the full SWE-bench test split (2,294) and times
the matcher against two baselines in the same run: itself without its
literal prefilter, and (for v2) a naive loop searching every pattern on every
added line.

    python benchmarks/sift_matcher.py [FILE ...]
"""

from __future__ import annotations

import functools
import itertools
import sys
import time
from pathlib import Path

import regex

from lettuce_build.sift.matcher import CompiledPatternSet
from lettuce_build.sift.presets import load_preset
from lettuce_build.swebench.instances import load_instance_rows

FULL_TEST_SPLIT = 2294
DEFAULT_FILES = [
    Path(__file__).parents[1] / ".." / "shared" / "data" / f
    for f in ("swebench_lite.jsonl", "swebench_verified.jsonl")
]


def naive_matched(
    patch: str,
    compiled: dict[str, list[tuple[str, regex.Pattern[str]]]],
    exclusions: list[regex.Pattern[str]],
) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for number, line in enumerate(patch.split("\n"), start=1):
        if not line.startswith("+") or line.startswith("+++"):
            continue
        if any(e.search(line) for e in exclusions):
            continue
        for category, patterns in compiled.items():
            for source, pattern in patterns:
                if pattern.search(line):
                    found.setdefault(category, []).append(
                        f"{source} on line {number}: {line[1:].strip()[:80]}"
                    )
                    break
    return found


def main() -> None:
    files = [Path(a) for a in sys.argv[1:]] or DEFAULT_FILES
    rows = [r for f in files for r in load_instance_rows(f, ["instance_id", "patch"])]
    patches = [r["patch"] for r in itertools.islice(itertools.cycle(rows), FULL_TEST_SPLIT)]
    added = sum(
        1 for p in patches for line in p.split("\n") if line.startswith("+") and not line.startswith("+++")
    )
    print(f"{len(rows)} real instances replicated to {len(patches)} patches ({added} added lines)")
    for name in ("v2", "v3"):
        preset = load_preset(name)
        matcher = CompiledPatternSet(preset)
        unfiltered = CompiledPatternSet(preset, prefilter=False)
        naive = {
            c: [(s, regex.compile(s, regex.IGNORECASE)) for s in ss] for c, ss in preset.categories.items()
        }
        exclusions = [regex.compile(s, regex.IGNORECASE) for s in preset.exclusions]
        timings = {}
        runs = [("compiled", matcher.matched), ("no-prefilter", unfiltered.matched)]
        if name == "v2":  # the naive loop has v2's semantics only
            runs.append(("naive", functools.partial(naive_matched, compiled=naive, exclusions=exclusions)))
        for label, run in runs:
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                hits = sum(1 for p in patches if run(p))
                best = min(best, time.perf_counter() - start)
            timings[label] = best
            rate = len(patches) / best
            print(f"  {name} {label:<12} {best:6.3f} s  {rate:8.0f} instances/s  ({hits} with a match)")
        print(f"  {name}: prefilter speed-up {timings['no-prefilter'] / timings['compiled']:.2f}x", end="")
        if "naive" in timings:
            print(f", {timings['naive'] / timings['compiled']:.2f}x the naive per-pattern loop", end="")
        print()


if __name__ == "__main__":
    main()
