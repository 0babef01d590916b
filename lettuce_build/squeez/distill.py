"""Phase 6: a teacher picks the relevant lines; the lines themselves always come from the output.

The teacher sees the task, the tool and the command that ran, the query and the output with
numbered lines
(bounded: 500 lines, 400 characters a line) and returns 1-based inclusive line
spans. Spans are clamped, sorted and merged, and relevant lines are sliced from
the ORIGINAL output: nothing generated ever reaches the dataset. An empty span
list marks an irrelevant output. Runs on the stage runner: cached and resumable
per tool result (`ToolResult.key`).
"""

from __future__ import annotations

from typing import Any

from datasets import List, Value
from pydantic import BaseModel, Field

from lettuce_build.engine.stage import Sampling, Stage
from lettuce_build.llm.protocol import ChatRequest

MAX_VIEW_LINES = 500
MAX_LINE_CHARS = 400
MAX_TASK_CHARS = 3000

SYSTEM = (
    "You select the lines of a tool output that matter for a software task. You get the task, what "
    "the agent is looking for, the tool and command that produced the output, and the output with "
    "numbered lines. Return the line spans that a developer fixing the task needs, as few and as "
    "tight as possible. Return an empty list when nothing matters."
)
PROMPT_VERSION = "distill-v2"


class LineSpan(BaseModel):
    start: int = Field(ge=1)
    end: int = Field(ge=1)


class Spans(BaseModel):
    spans: list[LineSpan] = Field(max_length=20)


def numbered_view(lines: list[str]) -> str:
    view = [f"{i}: {line[:MAX_LINE_CHARS]}" for i, line in enumerate(lines[:MAX_VIEW_LINES], start=1)]
    return "\n".join(view)


def normalise_spans(spans: list[tuple[int, int]], line_count: int) -> list[tuple[int, int]]:
    """Clamp to [1, line_count], order each pair, sort, and merge overlapping or adjacent spans."""
    clamped = sorted((max(1, min(a, b)), min(line_count, max(a, b))) for a, b in spans if line_count)
    merged: list[tuple[int, int]] = []
    for start, end in clamped:
        if start > end:
            continue
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


class Distilled(BaseModel):
    """A teacher's spans for one tool result, as phase 6 writes them (``phase6_distilled.jsonl``)."""

    #: the tool result's key (`ToolResult.key`)
    key: str
    #: the instance the result belongs to (`merge` orders a shard's rows by it)
    instance_id: str
    teacher_spans: list[dict[str, int]]


class DistillStage(Stage):
    """The teacher's line spans for one tool output (``lines``: the output's real lines)."""

    name = "distill"
    prompt_version = PROMPT_VERSION
    response_model = Spans
    requires = ("task", "query", "tool_type", "command", "lines")
    outputs = {"teacher_spans": List({"start_line": Value("int32"), "end_line": Value("int32")})}
    sampling = Sampling(temperature=0.0, max_tokens=512)

    def render(self, item: dict[str, Any]) -> ChatRequest:
        user = (
            f"Task:\n{item['task'][:MAX_TASK_CHARS]}\n\nLooking for: {item['query']}\n\n"
            f"Tool: {item['tool_type']}\nCommand: {item['command'][:MAX_LINE_CHARS]}\n\n"
            f"Output ({len(item['lines'])} lines):\n{numbered_view(item['lines'])}"
        )
        return self.request(SYSTEM, user)

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        visible = min(len(item["lines"]), MAX_VIEW_LINES)
        spans = normalise_spans([(s.start, s.end) for s in response.spans], visible)
        return {"teacher_spans": [{"start_line": a, "end_line": b} for a, b in spans]}
