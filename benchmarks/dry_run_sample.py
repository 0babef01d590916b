"""A dry run at scale: the model stages rehearsed on a seeded sample of the items (the default)
against every item rehearsed (``--exact``, what every dry run did before), on custom rows of
distinct contexts. Prints each run's time, peak memory and requests to send, and the sample's
error and speed-up against the exact run of the same input.

    python benchmarks/dry_run_sample.py 20000            # both runs on 20,000 rows
    python benchmarks/dry_run_sample.py 1000000 --sample-only

Rows are paragraphs of this repository's docs, each joined to another's first sentence, so that
no two contexts are the same.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def paragraphs() -> list[str]:
    found = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for block in re.split(r"\n\s*\n", text):
            block = " ".join(block.split())
            if 200 <= len(block) <= 1200 and block[0].isupper() and not block.startswith(("|", "#")):
                found.append(block)
    return found


def write_rows(count: int, path: Path) -> None:
    texts = paragraphs()
    with path.open("w") as out:
        for i in range(count):
            other = texts[(i // len(texts) + i * 7919) % len(texts)].split(". ")[0].rstrip(".")
            out.write(json.dumps({"context": f"{texts[i % len(texts)]} {other}."}) + "\n")


def dry_run(rows: Path, folder: Path, *, exact: bool) -> tuple[float, int, int]:
    """(seconds, peak KB, requests to send) of one dry run."""
    command = ["lettuce-build", "build", "--source", "custom", "--input", str(rows), "--out", str(folder)]
    timed = ["/usr/bin/time", "-f", "%e %M", *command, "--dry-run", *(["--exact"] if exact else [])]
    done = subprocess.run(timed, capture_output=True, text=True, check=True)
    seconds, peak = done.stderr.strip().splitlines()[-1].split()
    requests = int(re.search(r"total: (\d+) requests", done.stdout)[1])  # type: ignore[index]
    return float(seconds), int(peak), requests


def line(run: tuple[float, int, int]) -> str:
    return f"{run[0]:.1f} s, {run[1] / 1024:.0f} MB, {run[2]:,} requests"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=int)
    parser.add_argument("--sample-only", action="store_true", help="skip the exact run (slow at scale)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = Path(tmp) / "rows.jsonl"
        write_rows(args.rows, rows)
        sampled = dry_run(rows, Path(tmp) / "sampled", exact=False)
        print(f"{args.rows:,} rows, sampled: {line(sampled)}")
        if args.sample_only:
            return
        exact = dry_run(rows, Path(tmp) / "exact", exact=True)
        print(f"{args.rows:,} rows, exact:   {line(exact)}")
        error = (sampled[2] - exact[2]) / exact[2] if exact[2] else 0.0
        print(
            f"sampled/exact: time {sampled[0] / exact[0]:.2f}x, memory {sampled[1] / exact[1]:.2f}x, "
            f"requests {error:+.1%}"
        )


if __name__ == "__main__":
    sys.exit(main())
