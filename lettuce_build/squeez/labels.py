"""Phase 5: heuristic line relevance per tool type, and the keep filter.

Labels are 0-based indices into the output's lines. They are the fallback gold
when no teacher runs, and are compared with the teacher's spans in the report.

read_file shows a file at the base commit, so its relevant lines are the base
(old) side of the patch's hunks: the lines the patch removes or inserts after,
plus enclosing def/class headers and imports of names the patch uses.
"""

from __future__ import annotations

from pathlib import PurePosixPath

import regex
from pydantic import BaseModel

from lettuce_build.patches import PatchInfo
from lettuce_build.squeez.execute import ToolResult

MIN_LINES = 10
MIN_RELEVANT = 3
MIN_SHARE = 0.02
MAX_SHARE = 0.40
GREP_WINDOW = 10

_NUMBERED = regex.compile(r"^\s*(\d+)\t(.*)$")
_GREP_HIT = regex.compile(r"^(?:[0-9a-f]{7,40}:)?(?P<path>[^:\n]+):(?P<line>\d+):")
_HEADER = regex.compile(r"^(\s*)(?:async\s+)?(?:def|class)\s+\w+")
_IMPORT = regex.compile(r"^\s*(?:from\s+\S+\s+)?import\s+")
_FAILURE = regex.compile(r"FAILED|ERROR|Error\b|Traceback|^E\s|assert", regex.IGNORECASE)
_TEST_HEADER = regex.compile(r"^_{3,} .+ _{3,}$")
_OMITTED = regex.compile(r"^\.\.\. \[\d+ more lines omitted\]$|^\[timed out after")


class Labelled(BaseModel):
    result: ToolResult
    lines: int
    relevant: list[int]
    kept: bool
    reason: str | None = None


def output_lines(output: str) -> list[str]:
    """The output's real lines (the omission and timeout markers are not output)."""
    return [line for line in output.split("\n") if not _OMITTED.match(line)]


def _mentions(line: str, words: list[str]) -> bool:
    return any(w and w in line for w in words)


def _read_file(lines: list[str], result: ToolResult, patch: PatchInfo) -> set[int]:
    file = patch.file(result.target or "")
    if file is None or result.is_patch_file is False:
        return set()  # a decoy file has no relevant lines
    changed = {n for hunk in file.hunks for n in hunk.old_changed}
    numbered = {
        int(m.group(1)): (i, m.group(2)) for i, line in enumerate(lines) if (m := _NUMBERED.match(line))
    }
    relevant = {numbered[n][0] for n in changed if n in numbered}
    names = patch.identifiers()
    for n in sorted(changed):  # the nearest enclosing def/class header above each change
        if n not in numbered:
            continue
        indent = len(numbered[n][1]) - len(numbered[n][1].lstrip())
        for above in range(n - 1, 0, -1):
            if (
                above in numbered
                and (m := _HEADER.match(numbered[above][1]))
                and len(m.group(1)) < max(indent, 1)
            ):
                relevant.add(numbered[above][0])
                break
    for index, text in numbered.values():
        if _IMPORT.match(text) and _mentions(text, names):
            relevant.add(index)
    return relevant


def _grep(lines: list[str], patch: PatchInfo) -> set[int]:
    relevant = set()
    for i, line in enumerate(lines):
        if not (m := _GREP_HIT.match(line)) or not (file := patch.file(m.group("path"))):
            continue
        number = int(m.group("line"))
        if any(
            h.old_start - GREP_WINDOW <= number <= h.old_start + h.old_length + GREP_WINDOW
            for h in file.hunks
        ):
            relevant.add(i)
    return relevant


def _test_output(lines: list[str]) -> set[int]:
    relevant, in_block = set(), False
    for i, line in enumerate(lines):
        if _TEST_HEADER.match(line):
            in_block = "test" in line.lower()
        if in_block or _FAILURE.search(line):
            relevant.add(i)
    return relevant


def _git_diff(lines: list[str]) -> set[int]:
    return {i for i, line in enumerate(lines) if line.startswith(("+", "-", "@@", "diff --git", "index "))}


def relevant_lines(result: ToolResult, patch: PatchInfo) -> list[int]:
    lines = output_lines(result.output)
    names = patch.identifiers()
    paths = patch.paths
    basenames = [PurePosixPath(p).name for p in paths]
    match result.tool_type:
        case "read_file":
            found = _read_file(lines, result, patch)
        case "grep":
            found = _grep(lines, patch)
        case "git_log":
            found = {i for i, line in enumerate(lines) if _mentions(line, names)}
        case "test_output":
            found = _test_output(lines)
        case "git_diff":
            found = _git_diff(lines)
        case "ls":
            found = {i for i, line in enumerate(lines) if _mentions(line, basenames)}
        case "python":
            found = {i for i, line in enumerate(lines) if _mentions(line, names)}
        case _:  # git_blame, lint_output, build_output, curl
            found = {i for i, line in enumerate(lines) if _mentions(line, paths + names)}
    return sorted(found)


def label(result: ToolResult, patch: PatchInfo) -> Labelled:
    """Relevant lines and whether the output is kept (>= 10 lines, >= 3 relevant, share 0.02-0.40)."""
    lines = output_lines(result.output)
    if result.skipped:
        return Labelled(result=result, lines=0, relevant=[], kept=False, reason=f"skipped: {result.skipped}")
    relevant = relevant_lines(result, patch)
    share = len(relevant) / len(lines) if lines else 0.0
    reason = None
    if len(lines) < MIN_LINES:
        reason = f"only {len(lines)} lines (< {MIN_LINES})"
    elif len(relevant) < MIN_RELEVANT and result.is_patch_file is not False:
        reason = f"only {len(relevant)} relevant lines (< {MIN_RELEVANT})"
    elif result.is_patch_file is not False and not MIN_SHARE <= share <= MAX_SHARE:
        reason = f"relevant share {share:.2f} outside [{MIN_SHARE}, {MAX_SHARE}]"
    return Labelled(result=result, lines=len(lines), relevant=relevant, kept=reason is None, reason=reason)
