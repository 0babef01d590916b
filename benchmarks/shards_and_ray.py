"""One readme build of N work items, four ways, on the embedded model: local (one engine in the
process, the baseline), 2 shards + merge, Ray with 1 actor and with 2 actors.

Prints wall time and the ratio to local for each, the engine's tokens/s, what Ray adds per
item and per pass (the actors, and their engines, live for the whole build: one load each),
and whether each way wrote the local build's rows. The local engine is loaded before the
clock runs. Shards run one after the other here (one machine): the sum is this machine's
cost, the slowest shard plus the merge is the wall time on 2 machines.

On 2 cores, 2 actors are 2 CPU engines computing at once: they share the cores, so that line
measures contention, not scaling; on GPUs each actor has its own device. Last, Ray's own cost
apart from any engine: the same build again, local and on Ray, with an engine that answers
instantly from the local build's cache (no load, no compute), per item and per pass.

    python benchmarks/shards_and_ray.py [N] [--skip-shards]
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from datasets import load_from_disk

import lettuce_build
from lettuce_build.builds.running.merge import merge_builds
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.core.quiet import quiet
from lettuce_build.llm.cache import RequestCache, request_key
from lettuce_build.llm.protocol import Backend, BackendInfo, ChatRequest, Completion
from lettuce_build.llm.ray_pool import RayBackend, RayOptions
from lettuce_build.llm.vllm_backend import VLLMBackend

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "readmes"
MODEL = "smollm2-135m"


def rows(out: Path) -> dict[str, list[dict[str, Any]]]:
    dataset = load_from_disk(str(out / "dataset"))
    return {split: dataset[split].to_list() for split in dataset}


def build(docs: Path, out: Path, items: int, backend: Backend, **settings: Any) -> float:
    started = time.perf_counter()
    lettuce_build.build("readme", input=str(docs), out=out, limit=items, backend=backend, **settings)
    return time.perf_counter() - started


def passes(out: Path) -> int:
    """Stage passes that asked the model."""
    return sum(stage.backend_calls for stage in BuildDir(out).read_manifest().stages)


class CachedEngine:
    """Answers instantly with the responses a finished build holds (looked up under each prompt
    version the cache has, since a request does not carry its version): Ray's cost, alone."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache

    @property
    def model_id(self) -> str:
        return MODEL

    def info(self) -> BackendInfo:
        return BackendInfo(backend="cached", model=MODEL)

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        cache = RequestCache(self.cache)
        try:
            versions = list(cache.stats().by_prompt_version)
            answers = []
            for request in requests:
                keys = [request_key(MODEL, request, version) for version in versions]
                answers.append(next(iter(cache.get_many(keys).values())))
            return answers
        finally:
            cache.close()


def report_shards(root: Path, engine: Backend, local: float, shard_times: list[float]) -> None:
    """The two shards' times, merged, against the local build."""
    started = time.perf_counter()
    merge_builds([root / "shard0", root / "shard1"], root / "merged", backend=engine)
    merge = time.perf_counter() - started
    same = rows(root / "merged") == rows(root / "local")
    print(
        f"2 shards:       {sum(shard_times):7.1f} s  {sum(shard_times) / local:.2f}x on one machine; "
        f"on two: {max(shard_times) + merge:.1f} s {(max(shard_times) + merge) / local:.2f}x "
        f"(shards {shard_times[0]:.1f} + {shard_times[1]:.1f} s, merge {merge:.1f} s, "
        f"{passes(root / 'merged')} merge passes asked the model); rows equal local: {same}"
    )


def main() -> None:
    items = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 64
    quiet()
    import ray

    engine = VLLMBackend(MODEL)
    started = time.perf_counter()
    engine.engine()
    print(f"local engine load: {time.perf_counter() - started:.1f} s (not counted)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        docs = root / "docs"
        docs.mkdir()
        for copy in range(items):  # more documents than items: --limit takes the first N
            for readme in EXAMPLES.glob("*.md"):
                (docs / f"{readme.stem}-{copy}.md").write_text(readme.read_text())

        local = build(docs, root / "local", items, engine)
        manifest = BuildDir(root / "local").read_manifest()
        tokens = sum(s.completion_tokens for s in manifest.stages)
        engine_seconds = sum(s.backend_seconds for s in manifest.stages)
        print(f"local:          {local:7.1f} s  1.00x  ({tokens / engine_seconds:.0f} completion tokens/s)")

        if "--skip-shards" in sys.argv:
            shard_times = []
        else:
            shard_times = [build(docs, root / f"shard{i}", items, engine, shard=f"{i}/2") for i in range(2)]
        if shard_times:
            report_shards(root, engine, local, shard_times)

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        for actors in (1, 2):
            out = root / f"ray{actors}"
            pool = RayBackend(VLLMBackend(MODEL), RayOptions(actors=actors, cpus_per_actor=1.0))
            # the actors load their engines before the clock runs, as the local engine did
            pool.start(ChatRequest.of("Reply with one word.", "Hello", max_tokens=1))
            seconds = build(docs, out, items, pool)
            runs = passes(out)
            print(
                f"Ray, {actors} actor(s): {seconds:7.1f} s  {seconds / local:.2f}x  "
                f"({runs} passes; {(seconds - local) / items:+.2f} s per item, "
                f"{(seconds - local) / runs:+.1f} s per pass over local); rows equal local: "
                f"{rows(out) == rows(root / 'local')}"
            )
        engine = CachedEngine(root / "local" / "cache.sqlite")
        free_local = build(docs, root / "free-local", items, engine)
        free_ray = build(docs, root / "free-ray", items, RayBackend(engine, RayOptions(actors=1)))
        runs, extra = passes(root / "free-ray"), free_ray - free_local
        print(
            f"Ray's own cost (an instant engine): local {free_local:.1f} s, Ray {free_ray:.1f} s: "
            f"{extra / items:+.2f} s per item, {extra / runs:+.1f} s per pass ({runs} passes); "
            f"rows equal local: {rows(root / 'free-ray') == rows(root / 'local')}"
        )
        ray.shutdown()


if __name__ == "__main__":
    main()
