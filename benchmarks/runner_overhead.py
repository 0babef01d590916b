"""Runner overhead: 20,000 items through a stage whose cache is warm, against a plain loop.

The plain loop does the same parsing over the same raw responses held in a
list (JSON decode, validate, the stage's parse); the runner adds rendering,
cache keys, SQLite look-ups and `Dataset.map`. Goal: within 2x.

    python benchmarks/runner_overhead.py [N]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from datasets import Dataset, Value, disable_progress_bars
from pydantic import BaseModel

from lettuce_build.engine.completions import Completions
from lettuce_build.engine.responses import check_response
from lettuce_build.engine.runner import Runner
from lettuce_build.engine.stage import ParseFailure, Stage
from lettuce_build.llm.cache import RequestCache
from lettuce_build.llm.protocol import BackendInfo, ChatRequest, Completion


class Answer(BaseModel):
    value: int
    note: str


class EchoStage(Stage):
    name = "echo"
    prompt_version = "echo-v1"
    response_model = Answer

    outputs = {"value": Value("int64"), "note": Value("string")}

    def render(self, item: dict[str, Any]) -> ChatRequest:
        return ChatRequest.of(
            "Return the number as JSON.", f"number {item['n']}", temperature=0.0, max_tokens=32
        )

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        if response.value != item["n"]:
            raise ParseFailure("wrong_value")
        return {"value": response.value, "note": response.note}


class InstantBackend:
    model_id = "instant"

    def info(self) -> BackendInfo:
        return BackendInfo(backend="instant", model=self.model_id)

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        return [
            Completion(
                text=json.dumps({"value": int(r.messages[-1].content.split()[-1]), "note": "ok"}),
                finish_reason="stop",
            )
            for r in requests
        ]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    disable_progress_bars()
    items = Dataset.from_list([{"key": f"item-{i}", "n": i} for i in range(n)])
    stage = EchoStage()
    with tempfile.TemporaryDirectory() as tmp:
        cache = RequestCache(Path(tmp) / "cache.sqlite")
        runner = Runner(Completions(InstantBackend(), cache), batch_size=1000)
        started = time.perf_counter()
        runner.run(items, stage)
        cold = time.perf_counter() - started

        raw = InstantBackend().generate([stage.render(item) for item in items])
        best_runner = best_plain = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            result = runner.run(items, stage)
            best_runner = min(best_runner, time.perf_counter() - started)
            assert result.stats.cache_hits == n and len(result.ok) == n

            started = time.perf_counter()
            out = [
                stage.parse(item, check_response(stage, completion))
                for item, completion in zip(items, raw, strict=True)
            ]
            best_plain = min(best_plain, time.perf_counter() - started)
            assert len(out) == n
        cache.close()
    print(f"{n} items, warm cache")
    print(
        f"  runner (render, key, SQLite, parse, Dataset.map)  {best_runner:6.2f} s  "
        f"{n / best_runner:8.0f} items/s"
    )
    print(
        f"  plain loop (same parsing, responses in a list)    {best_plain:6.2f} s  "
        f"{n / best_plain:8.0f} items/s"
    )
    print(f"  runner / plain = {best_runner / best_plain:.2f}x (goal: within 2x)")
    print(f"  (first, cold run with an instant backend: {cold:.2f} s)")


if __name__ == "__main__":
    main()
