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

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = Path("/usr/share/dict/american-english")


def write_rows(path: Path, count: int, seed: int = 0) -> None:
    """``count`` rows of five twelve-word sentences each, with a number and a name among them."""
    draw = random.Random(seed)
    words = [w for w in WORDS.read_text().split() if w.isalpha()][:20000]
    with path.open("w", encoding="utf-8") as out:
        for index in range(count):
            sentences = [
                " ".join(draw.choice(words) for _ in range(12)).capitalize()
                + f" in {draw.randint(2, 999)} ways"
                for _ in range(5)
            ]
            row = {
                "id": f"row{index}",
                "context": ". ".join(sentences) + ".",
                # about a word of its context: a question about none would fail the gates
                "question": f"What does it say about {sentences[0].split()[1]}?",
            }
            out.write(json.dumps(row) + "\n")


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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big", action="store_true", help="also 1,000,000 rows")
    parser.add_argument("--sizes", default="10000,100000", help="row counts, comma-separated")
    parser.add_argument("--work", type=Path, help="where the inputs go (default: a temporary folder)")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")] + ([1_000_000] if args.big else [])
    with tempfile.TemporaryDirectory() as temporary:
        work = args.work or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        first = None
        print(f"{'rows':>9} {'seconds':>8} {'rows/s':>7} {'peak MB':>8} {'x first':>7}")
        for size in sizes:
            rows = work / f"rows{size}.jsonl"
            if not rows.exists():
                write_rows(rows, size)
            seconds, peak = dry_run(rows, work / f"out{size}")
            first = first or peak
            rate, megabytes = size / seconds, peak / 1024
            print(f"{size:>9} {seconds:>8.1f} {rate:>7.0f} {megabytes:>8.0f} {peak / first:>7.2f}")


if __name__ == "__main__":
    main()
