"""Cached rebuild against the first build: the same stage over the same items, twice, each in a
fresh process as a user would run it (engine load included). Prints both wall times and the ratio.

    python benchmarks/cached_rebuild.py [N]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time

from datasets import Dataset, disable_progress_bars

from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.engine.completions import Completions
from lettuce_build.engine.runner import Runner
from lettuce_build.llm.vllm_backend import VLLMBackend

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from capital_stage import CapitalStage, work_items  # noqa: E402


def child(build_dir: str, n: int) -> None:
    disable_progress_bars()
    backend = VLLMBackend("smollm2-135m")
    result = Runner(Completions(backend, BuildDir(build_dir).open_cache())).run(
        Dataset.from_list(work_items(n)), CapitalStage()
    )
    print(
        f"    hits {result.stats.cache_hits}, misses {result.stats.cache_misses}, "
        f"engine started: {backend.started}"
    )


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]))
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    with tempfile.TemporaryDirectory() as build:
        timings = []
        for label in ("first build", "cached rebuild"):
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, __file__, "--child", build, str(n)], check=True, stderr=subprocess.DEVNULL
            )
            timings.append(time.perf_counter() - started)
            print(f"  {label:<15} {timings[-1]:6.1f} s")
    print(
        f"{n} items: cached rebuild / first build = {timings[1] / timings[0]:.3f} "
        f"({timings[0] / timings[1]:.1f}x faster)"
    )


if __name__ == "__main__":
    main()
