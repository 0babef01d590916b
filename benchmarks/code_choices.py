"""What choosing instead of writing does to the code source on a small model, on real SWE-bench
issues and fixes, with no repository needed: the request stage written (``RequestStage``)
against chosen (``ChosenRequestStage``), and the injection written (``InjectCodeStage``) against
chosen from mutations (``InjectCodeMenuStage``), each over the same items in one run. Printed:
per stage the items made, the failure reasons, the model time, and the chosen edits to read.

The fixes are answered in the hunk and replace styles (the function style needs the repository);
the context is the fix's old side, which is what the gates read; a fabricated name is looked up
in that context only.

    python benchmarks/code_choices.py SWE_BENCH_JSONL [--model PATH] [--every 6]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from lettuce_build.core.characters import clean_text
from lettuce_build.engine.runner import check_response, seeded_request
from lettuce_build.engine.stage import ParseFailure, Stage
from lettuce_build.llm.embedded import embedded_model_path
from lettuce_build.llm.factory import make_backend
from lettuce_build.llm.protocol import Backend, ChatRequest
from lettuce_build.sources.code import build_answer, fence_language
from lettuce_build.stages.code_edits import InjectCodeMenuStage, InjectCodeStage, draw_error
from lettuce_build.stages.requests import ChosenRequestStage, RequestStage
from lettuce_build.swebench.patches import parse_patch


class InContext:
    """Whether a name occurs in the item's context or answer (no repository here)."""

    def __call__(self, item: dict[str, Any], name: str) -> bool:
        return name in item["context"] or name in item["answer"]

    def __repr__(self) -> str:
        return "InContext()"


def items_of(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    made = []
    for number, row in enumerate(rows):
        info = parse_patch(row["patch"])
        answer, code = build_answer(("hunk", "replace")[number % 2], info, {})
        if not 40 <= len(code) <= 10_000:
            continue
        context = "\n\n".join(
            f"File: {f.path}\n```{fence_language(f.path)}\n"
            + "\n...\n".join(h.side(new=False) for h in f.hunks)
            + "\n```"
            for f in info.files
        )
        key = f"code::{row['instance_id']}"
        made.append(
            {
                "key": key,
                "issue": clean_text(row["problem_statement"]),  # as a build's input cleaning leaves it
                "context": context,
                "answer": answer,
                "inject": True,
                "code_error": draw_error(0, key, 0.2),
                "repo_dir": "",
                "base_commit": row["base_commit"],
            }
        )
    return made


def run(
    stage: Stage, items: list[dict[str, Any]], backend: Backend
) -> tuple[dict[str, Any], Counter[str], float]:
    """The stage over the items as a build runs it: passes, retries, pass-through."""
    made: dict[str, Any] = {}
    reasons: Counter[str] = Counter()
    todo = []
    for item in items:
        if stage.applies(item):
            todo.append(item)
            continue
        try:
            made[item["key"]] = stage.passed(item)
        except ParseFailure as failure:
            reasons[failure.reason] += 1
    schema = stage.response_model.model_json_schema() if stage.response_model else None
    started = time.perf_counter()
    for attempt in range(stage.max_attempts):
        completions = backend.generate(
            [seeded_request(stage, item, build_seed=0, attempt=attempt, schema=schema) for item in todo]
        )
        left = []
        for item, completion in zip(todo, completions, strict=True):
            try:
                made[item["key"]] = stage.parse(item, check_response(stage, completion))
            except ParseFailure as failure:
                if failure.retry and attempt < stage.max_attempts - 1:
                    left.append(item)
                else:
                    reasons[failure.reason] += 1
        todo = left
    return made, reasons, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("instances", type=Path)
    parser.add_argument("--model", default=None)
    parser.add_argument("--every", type=int, default=6, help="besides flask and requests, every Nth instance")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.instances.read_text().splitlines() if line.strip()]
    picked = [r for r in rows if r["repo"] in ("pallets/flask", "psf/requests")] + rows[:: args.every]
    items = items_of(list({r["instance_id"]: r for r in picked}.values()))
    backend = make_backend("vllm", args.model or str(embedded_model_path()))
    backend.generate([ChatRequest.of(None, "Hello", max_tokens=1)])  # the engine's start is no stage's

    requests: dict[str, Any] = {}
    for stage in (RequestStage(), ChosenRequestStage()):
        made, reasons, seconds = run(stage, items, backend)
        print(
            f"{type(stage).__name__}: {len(made)} of {len(items)} requests, {seconds:.0f} s; {dict(reasons)}"
        )
        requests = made
    asked = [
        {**item, "question": requests[item["key"]]["question"]} for item in items if item["key"] in requests
    ]
    for stage in (InjectCodeStage(InContext()), InjectCodeMenuStage(InContext())):
        made, reasons, seconds = run(stage, asked, backend)
        print(
            f"{type(stage).__name__}: {len(made)} of {len(asked)} injected, {seconds:.0f} s; {dict(reasons)}"
        )
    for key, result in made.items():
        for edit in json.loads(result["injection"])["applied"]:
            print(f"  {key}: {edit['original'].strip()[:70]!r} -> {edit['hallucinated'].strip()[:70]!r}")


if __name__ == "__main__":
    main()
