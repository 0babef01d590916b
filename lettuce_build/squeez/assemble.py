"""Phase 7: rows with repository-disjoint splits, as an HF dataset and JSONL, plus a chat view.

The chat view follows the published squeez training data: a ChatML prompt whose user turn
holds the query, the background task and the raw tool output in XML-style tags, and a
response that is the relevant lines, verbatim, inside ``<relevant_lines>`` tags (empty for an
irrelevant output). ``messages`` holds the same turns for chat-template trainers.
Compression is measured in lines: 1 - relevant lines / output lines.
"""

from __future__ import annotations

import math
from typing import Any

from datasets import Features, List, Value
from pydantic import BaseModel

from lettuce_build.squeez.labels import Labelled

TEST_REPOS = frozenset({"pydata/xarray", "pallets/flask"})
VALIDATION_REPOS = frozenset({"psf/requests"})

SQUEEZ_FEATURES = Features(
    {
        "instance_id": Value("string"),
        "repo": Value("string"),
        "split": Value("string"),
        "tool_type": Value("string"),
        "command": Value("string"),
        "query": Value("string"),
        "background_task": Value("string"),
        "tool_output": Value("string"),
        "gold_spans": List({"start_line": Value("int32"), "end_line": Value("int32")}),
        "gold_source": Value("string"),
        "auto_spans": List({"start_line": Value("int32"), "end_line": Value("int32")}),
        "relevant_lines": List(Value("string")),
        "is_irrelevant": Value("bool"),
        "is_patch_file": Value("bool"),
        "compression_ratio": Value("float32"),
        "prompt": Value("string"),
        "response": Value("string"),
        "messages": List({"role": Value("string"), "content": Value("string")}),
    }
)


class Selection(BaseModel):
    """What phase 7 assembled: where each row's gold came from and how many decoys stayed."""

    rows: int
    #: "teacher", "auto" (no teacher, labels passed the keep filter) or "decoy"
    gold_sources: dict[str, int]
    #: outputs left out: no teacher's spans and auto-labels that failed the keep filter
    without_gold: int
    decoys_available: int
    decoys_kept: int
    max_decoy_share: float

    def text(self) -> str:
        return (
            f"gold: {self.gold_sources}; {self.without_gold} outputs without gold left out; decoys: "
            f"{self.decoys_kept} of {self.decoys_available} kept (at most {self.max_decoy_share:.0%} of rows)"
        )


def decoy_cap(rows: int, share: float) -> int:
    """The most decoys that can join ``rows`` other rows and stay at most ``share`` of them all."""
    return math.floor(share * rows / (1.0 - share) + 1e-9) if share < 1.0 else rows


def repo_split(repo: str) -> str:
    if repo in TEST_REPOS:
        return "test"
    if repo in VALIDATION_REPOS:
        return "validation"
    return "train"


def spans_from_indices(indices: list[int]) -> list[dict[str, int]]:
    """0-based line indices -> 1-based inclusive spans of consecutive lines."""
    spans: list[dict[str, int]] = []
    for index in sorted(set(indices)):
        line = index + 1
        if spans and spans[-1]["end_line"] == line - 1:
            spans[-1]["end_line"] = line
        else:
            spans.append({"start_line": line, "end_line": line})
    return spans


CHAT_SYSTEM = (
    "You prune tool output for a coding agent. Given what the agent is looking for, its task and one "
    "tool output, return only the lines of the output the agent should read next, copied verbatim, "
    "inside <relevant_lines> tags. Return empty tags when no line matters."
)


def chat_user(task: str, query: str, output: str) -> str:
    return (
        f"<query>\n{query}\n</query>\n<background_task>\n{task}\n</background_task>\n"
        f"<tool_output>\n{output}\n</tool_output>"
    )


def chat_response(relevant: list[str]) -> str:
    return "<relevant_lines>\n" + "".join(f"{line}\n" for line in relevant) + "</relevant_lines>"


def chatml(system: str, user: str) -> str:
    """The prompt as a ChatML string, ending where the assistant's turn begins."""
    return (
        f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
    )


def build_row(
    record: Labelled,
    lines: list[str],
    *,
    gold: list[dict[str, int]],
    gold_source: str,
    auto: list[dict[str, int]],
) -> dict[str, Any]:
    relevant = [line for span in gold for line in lines[span["start_line"] - 1 : span["end_line"]]]
    output = "\n".join(lines)
    result = record.result
    user = chat_user(record.task, result.query, output)
    response = chat_response(relevant)
    return {
        "instance_id": result.instance_id,
        "repo": result.repo,
        "split": repo_split(result.repo),
        "tool_type": result.tool_type,
        "command": result.command,
        "query": result.query,
        "background_task": record.task,
        "tool_output": output,
        "gold_spans": gold,
        "gold_source": gold_source,
        "auto_spans": auto,
        "relevant_lines": relevant,
        "is_irrelevant": not gold,
        "is_patch_file": not record.is_decoy,
        "compression_ratio": 1.0 - len(relevant) / len(lines) if lines else 0.0,
        "prompt": chatml(CHAT_SYSTEM, user),
        # the relevant lines themselves, tagged: a student learns to copy, never to write
        "response": response,
        "messages": [
            {"role": "system", "content": CHAT_SYSTEM},
            {"role": "user", "content": user},
            {"role": "assistant", "content": response},
        ],
    }
