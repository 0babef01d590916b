"""Writing answers to the request cache as a build does: batches of 64 committed one by one,
keys spread over the whole key index (they are digests), until the cache holds N answers
(a 100,000-item readme build writes 275,000). The cache as it ships, against the same cache
copying its write-ahead log back every 1,000 pages (SQLite's default), in the same run.

    python benchmarks/cache_writes.py [N]
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
import time
from pathlib import Path

from lettuce_build.llm.cache import CHECKPOINT_PAGES, RequestCache
from lettuce_build.llm.protocol import Completion

BATCH = 64
ANSWER = Completion(text="An answer of a typical length. " * 8, finish_reason="stop", completion_tokens=60)


def fill(path: Path, answers: int, checkpoint_pages: int) -> float:
    """Seconds to write ``answers`` answers and close the cache."""
    cache = RequestCache(path)
    cache._db.execute(f"PRAGMA wal_autocheckpoint={checkpoint_pages}")  # the one thing compared
    started = time.perf_counter()
    for start in range(0, answers, BATCH):
        keys = [hashlib.sha256(str(n).encode()).hexdigest() for n in range(start, start + BATCH)]
        cache.put_many("model", "prompt-v1", [(key, ANSWER) for key in keys])
    cache.close()  # closing copies what the log still holds: part of the cost
    return time.perf_counter() - started


def main() -> None:
    answers = int(sys.argv[1]) if len(sys.argv) > 1 else 275_000
    with tempfile.TemporaryDirectory() as tmp:
        baseline = fill(Path(tmp) / "default.sqlite", answers, 1000)
        shipped = fill(Path(tmp) / "shipped.sqlite", answers, CHECKPOINT_PAGES)
    for name, seconds in (
        ("checkpoint every 1,000 pages", baseline),
        (f"every {CHECKPOINT_PAGES:,}", shipped),
    ):
        print(f"{name:>30}: {seconds:6.1f} s, {seconds * 1e6 / answers:5.1f} µs per answer")
    print(f"{'shipped / default':>30}: {shipped / baseline:.2f}x")


if __name__ == "__main__":
    main()
