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
import resource
import subprocess
import sys
import time
from pathlib import Path

from scale_inputs import inputs, scale_parser

ROOT = Path(__file__).resolve().parents[1]
#: about nothing any row says: every item fails the question gate
QUESTION = "What is a quuxfrob?"


def child(rows: Path, out: Path) -> None:
    """One build in this process; prints its figures as JSON."""
    sys.path.insert(0, str(ROOT))
    from lettuce_build.builds.running.run import run_build
    from lettuce_build.builds.settings.recipe import Recipe
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
    parser = scale_parser(__doc__)
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    first = None
    print(f"{'rows':>9} {'failed':>9} {'seconds':>8} {'peak MB':>8} {'x first':>7}")
    for size, rows, out in inputs(args, "failing", lambda _: QUESTION):
        command = [sys.executable, __file__, "--child", str(rows), str(out)]
        result = subprocess.run(command, check=True, capture_output=True, text=True)
        figures = json.loads(result.stdout.strip().splitlines()[-1])
        first = first or figures["peak_kb"]
        print(
            f"{size:>9} {figures['failed']:>9} {figures['seconds']:>8.1f} "
            f"{figures['peak_kb'] / 1024:>8.0f} {figures['peak_kb'] / first:>7.2f}"
        )


if __name__ == "__main__":
    main()
