"""Failure rows at scale: a build of your own rows whose every question is about something its
context never mentions, so every item fails the question gate and leaves a failure row (no
model is asked anything: the tests' scripted model stands by). At 10,000 and 100,000 rows
(1,000,000 with --big), each in a process of its own.

Prints, per size, the wall time, peak RSS and its ratio to the smallest size's. A build's
failure rows stay in the pass files they were written to and are read back a batch at a time,
so the ratio should stay near a build's without failures (benchmarks/build_scale.py: 1.38x at
a million). Held as objects, a million failure rows took a build to 2.4 GB.

    python benchmarks/failure_scale.py [--big] [--sizes 10000,100000] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = Path("/usr/share/dict/american-english")


def write_rows(path: Path, count: int, seed: int = 0) -> None:
    """``count`` rows of five twelve-word sentences, each asking about a word none of them holds."""
    draw = random.Random(seed)
    words = [w for w in WORDS.read_text().split() if w.isalpha()][:20000]
    with path.open("w", encoding="utf-8") as out:
        for index in range(count):
            sentences = [" ".join(draw.choice(words) for _ in range(12)).capitalize() for _ in range(5)]
            row = {
                "id": f"row{index}",
                "context": ". ".join(sentences) + ".",
                "question": "What is a quuxfrob?",
            }
            out.write(json.dumps(row) + "\n")


def child(rows: Path, out: Path) -> None:
    """One build in this process; prints its figures as JSON."""
    sys.path.insert(0, str(ROOT))
    from lettuce_build.builds.recipe import Recipe
    from lettuce_build.builds.run import run_build
    from tests.support.documents import respond
    from tests.support.scripted import ScriptedBackend

    started = time.perf_counter()
    summary = run_build(
        Recipe(source="custom", input=str(rows), out=out), ScriptedBackend(respond, record=False)
    )
    figures = {
        "seconds": time.perf_counter() - started,
        "failed": sum(sum(reasons.values()) for reasons in summary.failures.values()),
        "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big", action="store_true", help="also 1,000,000 rows")
    parser.add_argument("--sizes", default="10000,100000", help="row counts, comma-separated")
    parser.add_argument("--work", type=Path, help="where the inputs go (default: a temporary folder)")
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    sizes = [int(size) for size in args.sizes.split(",")] + ([1_000_000] if args.big else [])
    with tempfile.TemporaryDirectory() as temporary:
        work = args.work or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        first = None
        print(f"{'rows':>9} {'failed':>9} {'seconds':>8} {'peak MB':>8} {'x first':>7}")
        for size in sizes:
            rows = work / f"failing{size}.jsonl"
            if not rows.exists():
                write_rows(rows, size)
            command = [sys.executable, __file__, "--child", str(rows), str(work / f"out{size}")]
            result = subprocess.run(command, check=True, capture_output=True, text=True)
            figures = json.loads(result.stdout.strip().splitlines()[-1])
            first = first or figures["peak_kb"]
            print(
                f"{size:>9} {figures['failed']:>9} {figures['seconds']:>8.1f} "
                f"{figures['peak_kb'] / 1024:>8.0f} {figures['peak_kb'] / first:>7.2f}"
            )


if __name__ == "__main__":
    main()
