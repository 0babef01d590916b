"""A dry run's memory and speed as its input grows: `build --source custom --dry-run` over
10,000 and 100,000 rows of your own data (1,000,000 with --big), each in a process of its own.

Prints, per size, the wall time, rows per second and peak resident memory, and the memory's
ratio to the smallest size's (it should stay near 1: a dry run keeps its items and passes on
disk, as a build does). The rows are sentences of English words from Debian's word list, with a
question about their first sentence on every row, so the rule-made edits find names, numbers
and sentences to offer as on real prose.

    python benchmarks/dry_run_scale.py [--big] [--sizes 10000,100000] [--work DIR]
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from scale_inputs import inputs, scale_parser


def about_the_first(sentences: list[str]) -> str:
    """A question about a word of the first sentence: one about none would fail the gates."""
    return f"What does it say about {sentences[0].split()[1]}?"


def dry_run(rows: Path, out: Path) -> tuple[float, int]:
    """Seconds and peak resident kilobytes of one dry run, in a process of its own."""
    command = [sys.executable, "-c", "from lettuce_build.cli import main; main()"]
    command += ["build", "--source", "custom", "--input", str(rows), "--out", str(out), "--dry-run"]
    probe = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
        "stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    started = time.perf_counter()
    peak = subprocess.run([sys.executable, "-c", probe, *command], check=True, capture_output=True, text=True)
    return time.perf_counter() - started, int(peak.stdout.strip())


def main() -> None:
    args = scale_parser(__doc__).parse_args()
    first = None
    print(f"{'rows':>9} {'seconds':>8} {'rows/s':>7} {'peak MB':>8} {'x first':>7}")
    for size, rows, out in inputs(args, "rows", about_the_first):
        seconds, peak = dry_run(rows, out)
        first = first or peak
        rate, megabytes = size / seconds, peak / 1024
        print(f"{size:>9} {seconds:>8.1f} {rate:>7.0f} {megabytes:>8.0f} {peak / first:>7.2f}")


if __name__ == "__main__":
    main()
