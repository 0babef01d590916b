"""The dry run's cost estimate against the measured cost of the same build, live and batched, at
one price, on real documents: vLLM's OpenAI-compatible server (the embedded model, on loopback)
answers live calls, and a loopback Batch API in front of it answers batches (no hosted Batch API
can run here; tests/support/batch_server.py).

    python benchmarks/batch_cost.py READMES_DIR [PRICE_IN/PRICE_OUT]     # default 3/15

Three builds of the same recipe into fresh folders: a dry run, a live build, a batched build.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import lettuce_build
from lettuce_build.builds.settings.recipe import Recipe

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the suite's servers, below
from tests.support.batch_server import serve_batches  # noqa: E402
from tests.support.vllm_server import vllm_openai_server  # noqa: E402


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    docs = Path(sys.argv[1])
    price = tuple(float(p) for p in (sys.argv[2] if len(sys.argv) == 3 else "3/15").split("/"))
    with tempfile.TemporaryDirectory() as tmp, vllm_openai_server() as upstream:

        def recipe(name: str, url: str, **more: object) -> Recipe:
            return Recipe.checked(
                {
                    "source": "readme",
                    "input": str(docs),
                    "out": Path(tmp) / name,
                    "backend": "openai",
                    "base_url": url,
                    "model": "smollm2-135m",
                    "concurrency": 4,
                    "price_per_mtok": price,
                    "batch_poll_seconds": 1.0,
                    **more,
                }
            )

        dry = lettuce_build.dry_run(recipe=recipe("dry", upstream))
        dry_batched = lettuce_build.dry_run(recipe=recipe("dry", upstream, batch=True))
        started = time.perf_counter()
        live = lettuce_build.build(recipe=recipe("live", upstream)).summary
        live_seconds = time.perf_counter() - started
        with serve_batches(upstream) as (url, server):
            started = time.perf_counter()
            batched = lettuce_build.build(recipe=recipe("batched", url, batch=True)).summary
            batched_seconds = time.perf_counter() - started
    print(f"{docs}: {dry.items} work items, price ${price[0]:g}/${price[1]:g} per million tokens in/out")
    print(f"{'':28}{'requests':>9}{'prompt tok':>12}{'compl. tok':>12}{'dollars':>11}{'seconds':>9}")
    print(
        f"{'dry run (first attempts)':28}{sum(s.cache_misses for s in dry.stages):>9}"
        f"{dry.prompt_tokens:>12}{dry.completion_tokens:>12}{dry.dollars:>11.5f}{'':>9}"
    )
    for name, summary, seconds in (
        ("live build", live, live_seconds),
        ("batched build", batched, batched_seconds),
    ):
        cost = summary.cost
        print(
            f"{name:28}{cost.requests:>9}{cost.prompt_tokens:>12}{cost.completion_tokens:>12}"
            f"{cost.dollars:>11.5f}{seconds:>9.1f}"
        )
    print(f"{'dry run, batched':28}{'':>9}{'':>12}{'':>12}{dry_batched.dollars:>11.5f}")
    assert dry.dollars and live.cost.dollars and batched.cost.dollars and dry_batched.dollars
    print(
        f"measured / estimated: live {live.cost.dollars / dry.dollars:.2f}, "
        f"batched {batched.cost.dollars / dry_batched.dollars:.2f}; "
        f"batched / live {batched.cost.dollars / live.cost.dollars:.2f}; "
        f"samples live {sum(live.by_split.values())}, batched {sum(batched.by_split.values())}; "
        f"lines in batches {server.lines_asked()}, live calls during the batched build {server.live_calls}"
    )


if __name__ == "__main__":
    main()
