"""The code source's context build (windows, import headers and the referenced definitions found
in the repository at the base commit) per SWE-bench instance, next to what the model then costs.

- cold: a fresh work folder, so each repository is cloned (bare) on its first instance and every
  file is read from git for the first time;
- warm: the same load again in the same folder (the repository cache a re-run or a second
  source finds), clones skipped;
- the model: a code build of a few of the same instances on the embedded model (the engine is
  loaded before the clock runs), seconds per developer-request call and per injection call.

The load is timed at the embedded model's context length (4,096 tokens) and without one (the
24,000-character cap a long-context model gets).

    python benchmarks/code_context.py [INSTANCES.jsonl] [REPO_URL_TEMPLATE] [MODEL_ITEMS]

By default the real SWE-bench Lite instances in ../shared/data, cloned from GitHub; on a machine
without GitHub, give a local mirror as the template (``file:///mirrors/{repo}``).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import lettuce_build
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.core.quiet import quiet
from lettuce_build.llm.vllm_backend import VLLMBackend
from lettuce_build.sources.base import LoadOptions, Tally
from lettuce_build.sources.code import CodeSource
from lettuce_build.swebench.repos import DEFAULT_URL_TEMPLATE

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "swebench_lite.jsonl"
MODEL = "smollm2-135m"
EMBEDDED_TOKENS = 4096


def load_times(instances: str, options: LoadOptions) -> tuple[list[float], list[int], float]:
    """Seconds per yielded item (a clone counts toward the first item of its repository),
    context lengths, and the whole load's seconds."""
    seconds, lengths = [], []
    started = last = time.perf_counter()
    for item in CodeSource().items(instances, options, Tally()):
        now = time.perf_counter()
        seconds.append(now - last)
        lengths.append(len(item["context"]))
        last = now
    return seconds, lengths, time.perf_counter() - started


def spread(values: list[float], unit: float = 1000.0) -> str:
    if len(values) < 2:
        return f"{values[0] * unit:.0f}" if values else "-"
    tenths = statistics.quantiles(values, n=10)
    middle, high, top = statistics.median(values) * unit, tenths[-1] * unit, max(values) * unit
    return f"p50 {middle:.0f}  p90 {high:.0f}  max {top:.0f}"


def main() -> None:
    instances = sys.argv[1] if len(sys.argv) > 1 else str(SHARED)
    url = sys.argv[2] if len(sys.argv) > 2 else DEFAULT_URL_TEMPLATE
    model_items = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    quiet()
    medians: dict[int | None, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for tokens in (EMBEDDED_TOKENS, None):
            work = Path(tmp) / f"repos-{tokens}"  # each length starts cold
            options = LoadOptions(repo_url=url, work_dir=work, context_tokens=tokens)
            cold, lengths, cold_total = load_times(instances, options)
            warm, _, warm_total = load_times(instances, options)
            label = f"{tokens} tokens" if tokens else "no length"
            print(f"context build, {label}: {len(cold)} items, context chars {spread(lengths, 1.0)}")
            print(f"  cold  {cold_total:6.2f} s   ms per item {spread(cold)}")
            print(f"  warm  {warm_total:6.2f} s   ms per item {spread(warm)}")
            print(f"  warm/cold {warm_total / cold_total:.2f}")
            medians[tokens] = statistics.median(warm)

        engine = VLLMBackend(MODEL)
        engine.engine()
        out = Path(tmp) / "out"
        started = time.perf_counter()
        lettuce_build.build(
            "code", input=instances, out=out, limit=model_items, ratio=1.0, repo_url=url, backend=engine
        )
        wall = time.perf_counter() - started
        print(f"model, {model_items} items on {MODEL}: {wall:.1f} s for the build")
        for stage in BuildDir(out).read_manifest().stages:
            if stage.cache_misses:
                each = stage.backend_seconds / stage.cache_misses
                ratio = each / medians[EMBEDDED_TOKENS]
                print(
                    f"  {stage.name}: {stage.cache_misses} requests, {each:.2f} s per request "
                    f"= {ratio:.0f}x a warm context build at {EMBEDDED_TOKENS} tokens"
                )


if __name__ == "__main__":
    main()
