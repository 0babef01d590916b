"""Phase 8: the validation report of an assembled squeez dataset (JSON and text).

The phase fails on repository overlap between splits, on any relevant line that is
not verbatim in its tool output, and on any row holding a secret (a token-shaped string
or a value of this process's secret variables); everything else is reported.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import regex
from pydantic import BaseModel, Field

from lettuce_build.core.leaks import SecretScanner
from lettuce_build.squeez.assemble import Selection
from lettuce_build.squeez.execute import ToolResult
from lettuce_build.squeez.toolcalls import ENV_TOOLS

CORE_TOOL_TYPES = ("read_file", "grep", "git_log", "test_output", "python")
PROMPT_OUTLIER_CHARS = 60_000
_IMPORT_FAILURE = regex.compile(r"ModuleNotFoundError|ImportError while importing|^ImportError\b", regex.M)
#: pytest ran tests: its summary, or (in an output capped before the summary) a failing test's
#: header; "1 error" alone is a collection error
_PYTEST_OUTCOME = regex.compile(
    r"\b\d+ (?:passed|failed|xfailed|xpassed)\b|^_{3,} \S*test\S* _{3,}$", regex.M | regex.IGNORECASE
)
#: pytest's exit codes for a usage error and for "no tests collected"
_PYTEST_NOTHING = (4, 5)


class Execution(BaseModel):
    """What phase 4's python, test_output and build_output calls did."""

    calls: int = 0
    ran_repository_code: int = 0
    failed_at_import: int = 0
    nothing_to_run: int = 0
    skipped: int = 0
    instances: int = 0
    #: instances with a test_output call in which pytest ran tests (passed or failed)
    instances_with_a_pytest_run: int = 0

    def text(self) -> str:
        ran = self.calls - self.skipped
        share = f" ({self.ran_repository_code / ran:.0%} of those not skipped)" if ran else ""
        return (
            f"execution calls (python, test_output, build_output): {self.ran_repository_code} of "
            f"{self.calls} ran repository code{share}; failed at import {self.failed_at_import}, "
            f"nothing to run {self.nothing_to_run}, skipped {self.skipped}; instances with a real "
            f"pytest run: {self.instances_with_a_pytest_run} of {self.instances}"
        )


def execution_summary(results: Sequence[ToolResult]) -> Execution:
    """How many execution calls ran the repository's code, rather than dying before it."""
    summary = Execution(instances=len({r.instance_id for r in results}))
    tested: set[str] = set()
    for result in results:
        if result.tool_type not in ENV_TOOLS:
            continue
        summary.calls += 1
        # tests that ran (and failed on a missing module, say) ran the repository's code
        tests_ran = result.tool_type != "python" and bool(_PYTEST_OUTCOME.search(result.output))
        if result.skipped:
            summary.skipped += 1
        elif not tests_ran and _IMPORT_FAILURE.search(result.output):
            summary.failed_at_import += 1
        elif result.tool_type != "python" and result.exit_code in _PYTEST_NOTHING:
            summary.nothing_to_run += 1
        else:
            summary.ran_repository_code += 1
            if result.tool_type == "test_output" and tests_ran:
                tested.add(result.instance_id)
    summary.instances_with_a_pytest_run = len(tested)
    return summary


class ValidationReport(BaseModel):
    rows: int
    unique_instances: int
    by_tool_type: dict[str, int]
    by_split: dict[str, int]
    by_split_and_tool: dict[str, dict[str, int]]
    compression: dict[str, float]
    missing_core_tool_types: list[str]
    prompt_size_outliers: list[str]
    empty_responses: int
    irrelevant_outputs: int
    repo_overlap: dict[str, list[str]]
    non_verbatim_lines: list[str]
    #: rows holding a secret (instance, tool type and the kind of secret, never the secret)
    secret_rows: list[str] = Field(default_factory=list)
    teacher_auto_agreement: dict[str, float] = Field(default_factory=dict)
    isolation: str | None = None
    skipped_calls: dict[str, int] = Field(default_factory=dict)
    filtered_outputs: dict[str, int] = Field(default_factory=dict)
    decoy_rows: int = 0
    selection: Selection | None = None
    #: every environment phase 4 built or tried: "ready", or "failed: <why>"
    environments: dict[str, str] = Field(default_factory=dict)
    execution: Execution | None = None

    @property
    def ok(self) -> bool:
        return not any(self.repo_overlap.values()) and not self.non_verbatim_lines and not self.secret_rows

    def text(self) -> str:
        lines = [
            f"squeez validation: {'OK' if self.ok else 'FAILED'}",
            f"  rows {self.rows}, unique instances {self.unique_instances}",
            f"  per split: {self.by_split}",
            f"  per tool type: {self.by_tool_type}",
        ]
        for split, tools in self.by_split_and_tool.items():
            lines.append(f"    {split}: {tools}")
        c = self.compression
        lines.append(
            f"  compression: mean {c.get('mean', 0):.3f}, median {c.get('median', 0):.3f}, "
            f"share in 0.70-0.95: {c.get('share_0.70_0.95', 0):.2f}"
        )
        lines.append(
            f"  irrelevant outputs {self.irrelevant_outputs} (decoy files {self.decoy_rows}), "
            f"empty responses {self.empty_responses}"
        )
        if self.selection:
            lines.append(f"  {self.selection.text()}")
        lines.append(f"  missing core tool types: {self.missing_core_tool_types or 'none'}")
        lines.append(
            f"  prompt size outliers (> {PROMPT_OUTLIER_CHARS} chars): {len(self.prompt_size_outliers)}"
        )
        overlap = {k: v for k, v in self.repo_overlap.items() if v}
        lines.append(f"  repository overlap between splits: {overlap or 'none'}")
        lines.append(f"  relevant lines not verbatim in their output: {len(self.non_verbatim_lines)}")
        lines.extend(f"    {item}" for item in self.non_verbatim_lines[:20])
        lines.append(f"  rows holding a secret: {len(self.secret_rows)}")
        lines.extend(f"    {item}" for item in self.secret_rows[:20])
        if self.teacher_auto_agreement:
            lines.append(
                f"  teacher vs auto-label agreement (Jaccard of lines): {self.teacher_auto_agreement}"
            )
        if self.skipped_calls:
            lines.append(f"  skipped tool calls: {self.skipped_calls}")
        if self.filtered_outputs:
            lines.append(f"  outputs filtered in phase 5: {self.filtered_outputs}")
        if self.execution:
            lines.append(f"  {self.execution.text()}")
        if self.environments:
            failed = {k: v for k, v in self.environments.items() if v != "ready"}
            ready = len(self.environments) - len(failed)
            lines.append(f"  environments: {ready} of {len(self.environments)} ready")
            lines.extend(f"    {key}: {why}" for key, why in failed.items())
        if self.isolation:
            lines.append(f"  isolation: {self.isolation}")
        return "\n".join(lines)


def _lines_of(spans: list[dict[str, int]]) -> set[int]:
    return {n for s in spans for n in range(s["start_line"], s["end_line"] + 1)}


def validate_rows(
    rows: list[dict[str, Any]], scanner: SecretScanner | None = None, **extra: Any
) -> ValidationReport:
    """The report over assembled rows; ``scanner`` defaults to this process's secrets."""
    scanner = scanner or SecretScanner.from_environment()
    by_split_tool: dict[str, Counter[str]] = defaultdict(Counter)
    repos_per_split: dict[str, set[str]] = defaultdict(set)
    non_verbatim: list[str] = []
    agreement: dict[str, list[float]] = defaultdict(list)
    secrets: list[str] = []
    for row in rows:
        if found := scanner.find("\n".join(str(v) for v in row.values())):
            secrets.append(f"{row['instance_id']} {row['tool_type']}: {', '.join(found)}")
        by_split_tool[row["split"]][row["tool_type"]] += 1
        repos_per_split[row["split"]].add(row["repo"])
        output_lines = set(row["tool_output"].split("\n"))
        for line in row["relevant_lines"]:
            if line not in output_lines:
                non_verbatim.append(f"{row['instance_id']} {row['tool_type']}: {line[:80]!r}")
        if row["gold_source"] == "teacher":
            gold, auto = _lines_of(row["gold_spans"]), _lines_of(row["auto_spans"])
            agreement[row["tool_type"]].append(len(gold & auto) / len(gold | auto) if gold | auto else 1.0)
    splits = sorted(repos_per_split)
    overlap = {
        f"{a}/{b}": sorted(repos_per_split[a] & repos_per_split[b])
        for i, a in enumerate(splits)
        for b in splits[i + 1 :]
    }
    ratios = [row["compression_ratio"] for row in rows if not row["is_irrelevant"]]
    tools = Counter(row["tool_type"] for row in rows)
    return ValidationReport(
        rows=len(rows),
        unique_instances=len({row["instance_id"] for row in rows}),
        by_tool_type=dict(tools),
        by_split={s: sum(by_split_tool[s].values()) for s in splits},
        by_split_and_tool={s: dict(by_split_tool[s]) for s in splits},
        compression={
            "mean": statistics.fmean(ratios) if ratios else 0.0,
            "median": statistics.median(ratios) if ratios else 0.0,
            "share_0.70_0.95": sum(0.70 <= r <= 0.95 for r in ratios) / len(ratios) if ratios else 0.0,
        },
        missing_core_tool_types=[t for t in CORE_TOOL_TYPES if t not in tools],
        prompt_size_outliers=[
            f"{r['instance_id']} {r['tool_type']}" for r in rows if len(r["prompt"]) > PROMPT_OUTLIER_CHARS
        ],
        empty_responses=sum(1 for r in rows if not r["relevant_lines"] and not r["is_irrelevant"]),
        irrelevant_outputs=sum(1 for r in rows if r["is_irrelevant"]),
        decoy_rows=sum(1 for r in rows if r.get("is_patch_file") is False),
        repo_overlap=overlap,
        non_verbatim_lines=non_verbatim,
        secret_rows=secrets,
        teacher_auto_agreement={t: round(statistics.fmean(v), 3) for t, v in sorted(agreement.items())},
        **extra,
    )
