"""vLLM efficiency: the same 64 JSON-schema requests through the stage runner and through raw
`LLM.chat`, on one engine (smollm2-135m on vLLM's CPU build). Prints generated tokens/s of
each and their ratio (goal >= 0.9).

The ratio compares like with like: one attempt per item, as raw `LLM.chat` makes. A second
line runs the stage as builds do, retries included, and reports the retry pass separately
(the tiny model fails a few items, which are retried with new seeds).

    python benchmarks/vllm_efficiency.py [N]
"""

from __future__ import annotations

import sys
import tempfile
import time

from datasets import Dataset, disable_progress_bars

from lettuce_build.engine.completions import Completions
from lettuce_build.engine.runner import Runner, request_seed
from lettuce_build.llm.cache import RequestCache
from lettuce_build.llm.vllm_backend import VLLMBackend

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from capital_stage import CapitalStage, work_items  # noqa: E402


class SingleAttemptCapitalStage(CapitalStage):
    max_attempts = 1


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    disable_progress_bars()
    from vllm import SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    backend = VLLMBackend("smollm2-135m")
    started = time.perf_counter()
    engine = backend.engine()
    print(f"engine load: {time.perf_counter() - started:.1f} s")
    stage = SingleAttemptCapitalStage()
    items = work_items(n)
    schema = stage.response_model.model_json_schema()
    requests = [stage.render(item) for item in items]
    conversations = [r.conversation() for r in requests]
    params = [
        SamplingParams(
            temperature=r.temperature,
            max_tokens=r.max_tokens,
            seed=request_seed(0, item["key"], 0),
            structured_outputs=StructuredOutputsParams(json=schema),
        )
        for r, item in zip(requests, items, strict=True)
    ]
    engine.chat(conversations, params, use_tqdm=False)  # warm-up: compile grammars, fill the prefix cache

    raw_rates, runner_rates = [], []
    for _ in range(2):
        started = time.perf_counter()
        outputs = engine.chat(conversations, params, use_tqdm=False)
        seconds = time.perf_counter() - started
        raw_rates.append(sum(len(o.outputs[0].token_ids) for o in outputs) / seconds)

        with tempfile.TemporaryDirectory() as tmp:  # a fresh cache, so every request reaches the engine
            cache = RequestCache(f"{tmp}/cache.sqlite")
            started = time.perf_counter()
            result = Runner(Completions(backend, cache), batch_size=n).run(Dataset.from_list(items), stage)
            seconds = time.perf_counter() - started
            cache.close()
        runner_rates.append(result.stats.completion_tokens / seconds)
        print(
            f"  raw LLM.chat {raw_rates[-1]:7.1f} tok/s   runner {runner_rates[-1]:7.1f} tok/s   "
            f"(runner: {result.stats.ok} ok, {result.stats.failed} failed, "
            f"backend {result.stats.backend_seconds:.1f} of {result.stats.seconds:.1f} s)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        cache = RequestCache(f"{tmp}/cache.sqlite")
        started = time.perf_counter()
        full = Runner(Completions(backend, cache), batch_size=n).run(Dataset.from_list(items), CapitalStage())
        seconds = time.perf_counter() - started
        cache.close()
    print(
        f"  as a build runs it, retries included: {full.stats.completion_tokens / seconds:.1f} tok/s over "
        f"{full.stats.backend_calls} backend calls ({full.stats.cache_misses} requests, {full.stats.ok} ok, "
        f"{full.stats.failed} failed)"
    )
    raw, run = max(raw_rates), max(runner_rates)
    print(
        f"{n} requests: raw {raw:.1f} tok/s, runner {run:.1f} tok/s, "
        f"runner / raw = {run / raw:.2f} (goal >= 0.9)"
    )


if __name__ == "__main__":
    main()
