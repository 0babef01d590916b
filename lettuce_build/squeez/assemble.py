"""Phase 7: rows with repository-disjoint splits, as an HF dataset and JSONL, plus a chat view."""

from __future__ import annotations

from typing import Any

from datasets import Features, List, Value

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
    }
)


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


def chat_prompt(task: str, query: str, output: str) -> str:
    return (
        f"Task: {task}\n\nQuery: {query}\n\nTool output:\n{output}\n\n"
        "Return only the lines of the tool output that matter for the query, verbatim."
    )


def build_row(
    record: dict[str, Any],
    lines: list[str],
    gold: list[dict[str, int]],
    gold_source: str,
    auto: list[dict[str, int]],
) -> dict[str, Any]:
    relevant = [line for span in gold for line in lines[span["start_line"] - 1 : span["end_line"]]]
    output = "\n".join(lines)
    kept = len("\n".join(relevant))
    return {
        "instance_id": record["instance_id"],
        "repo": record["repo"],
        "split": repo_split(record["repo"]),
        "tool_type": record["tool_type"],
        "command": record["command"],
        "query": record["query"],
        "background_task": record["task"],
        "tool_output": output,
        "gold_spans": gold,
        "gold_source": gold_source,
        "auto_spans": auto,
        "relevant_lines": relevant,
        "is_irrelevant": not gold,
        "is_patch_file": record["is_patch_file"] is not False,
        "compression_ratio": 1.0 - kept / len(output) if output else 0.0,
        "prompt": chat_prompt(record["task"], record["query"], output),
        # the response is the relevant lines themselves, joined: a student learns to copy, never to write
        "response": "\n".join(relevant),
    }
