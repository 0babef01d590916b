"""The readme build on smollm2-135m: samples/s, and the share of wall time spent outside the engine.

Documents are the shipped examples/readmes, copied N times under new names (each copy is a
new document, so nothing is served from a cache). The engine is started before the clock
runs, so its load time is reported apart; goal: under 5% of build time outside the engine.

    python benchmarks/readme_build.py [COPIES]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from datasets import disable_progress_bars

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.llm.vllm_backend import VLLMBackend

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "readmes"


def main() -> None:
    copies = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    disable_progress_bars()
    backend = VLLMBackend("smollm2-135m")
    started = time.perf_counter()
    backend.engine()
    print(f"engine load: {time.perf_counter() - started:.1f} s (not counted below)")
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        docs.mkdir()
        for copy in range(copies):
            for readme in EXAMPLES.glob("*.md"):
                (docs / f"{readme.stem}-{copy}.md").write_text(readme.read_text())
        summary = run_build(Recipe(source="readme", input=str(docs), out=Path(tmp) / "out"), backend)
    produced = sum(summary.by_split.values())
    outside = summary.seconds - summary.backend_seconds
    print(
        f"{summary.items} work items -> {produced} samples ({summary.hallucinated} hallucinated) "
        f"in {summary.seconds:.1f} s: {produced / summary.seconds:.2f} samples/s, "
        f"{summary.items / summary.seconds:.2f} items/s"
    )
    print(f"  failures: {summary.failures}")
    print(
        f"  in the engine {summary.backend_seconds:.1f} s, outside it {outside:.1f} s: "
        f"{outside / summary.seconds:.1%} of wall time outside the engine (goal < 5%)"
    )


if __name__ == "__main__":
    main()
