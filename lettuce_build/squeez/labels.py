"""Phase 5: heuristic line relevance per tool type, which outputs go on, and the keep filter.

Labels are 0-based indices into the output's lines. Every output of at least 10 lines
goes on: to the teacher when there is one (the labels then only validate it), or, without
a teacher, into the dataset when its labels pass the keep filter (>= 3 relevant lines, a
relevant share of 0.02-0.40). Decoys (read_file of a file the patch does not touch) are
all-irrelevant by definition and never need a teacher.

What counts as relevant, per type: read_file, the base (old) side of the patch's hunks plus
enclosing def/class headers and imports of names the patch uses; grep, hits in a patch file
near a hunk and definitions of what the patch changes; lint and blame, lines about
patch-touched lines or the functions the patch changes (never a line just for printing the
file's path); test output, failure blocks and error lines; git_diff, its +/- lines and
headers; the rest, lines naming the patch's telling names.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Literal

import regex
from pydantic import BaseModel

from lettuce_build.squeez.execute import ToolResult
from lettuce_build.swebench.patches import DEFINITION, FilePatch, PatchInfo

MIN_LINES = 10
MIN_RELEVANT = 3
MIN_SHARE = 0.02
MAX_SHARE = 0.40
GREP_WINDOW = 10
LINT_WINDOW = 2


#: why an output does not go on, or does not pass the keep filter (the report counts these)
HoldReason = Literal[
    "skipped", "too few lines", "too few relevant lines", "relevant share too low", "relevant share too high"
]


class Labelled(BaseModel):
    """A tool result with its auto-labels, as phase 5 writes it (``phase5_labels.jsonl``)."""

    result: ToolResult
    #: the instance's problem statement, the background task of the squeez row
    task: str
    lines: int
    relevant: list[int]
    #: at least 10 lines and not skipped: goes to the teacher, or is a (capped) decoy row
    eligible: bool
    #: passes the keep filter: without a teacher, the auto-labels are this output's gold
    kept: bool
    held: HoldReason | None = None
    #: ``held`` in words with the counts, e.g. "relevant share below 0.02 (1 of 80 lines)"
    reason: str | None = None

    @property
    def is_decoy(self) -> bool:
        """A read_file of a file the fix does not touch: all lines irrelevant by definition."""
        return self.result.is_patch_file is False


#: what the tool runner writes in place of output it cut
_OMITTED = regex.compile(r"^\.\.\. \[\d+ more lines omitted\]$|^\[timed out after")


def output_lines(output: str) -> list[str]:
    """The output's real lines (the omission and timeout markers are not output)."""
    return [line for line in output.split("\n") if not _OMITTED.match(line)]


def _naming(lines: list[str], names: list[str]) -> set[int]:
    """Lines naming one of ``names`` as a whole word (``url`` does not name ``urljoin``)."""
    if not names:
        return set()
    pattern = regex.compile(r"\b(?:" + "|".join(map(regex.escape, names)) + r")\b")
    return {i for i, line in enumerate(lines) if pattern.search(line)}


def _touched(file: FilePatch | None, window: int = 0) -> set[int]:
    """Base-commit line numbers the patch changes, widened by ``window`` on each side."""
    if file is None:
        return set()
    return {n + d for hunk in file.hunks for n in hunk.old_changed for d in range(-window, window + 1)}


def _in_hunks(file: FilePatch | None) -> set[int]:
    """Base-commit line numbers inside the patch's hunks: the changes and the context around them."""
    if file is None:
        return set()
    return {n for hunk in file.hunks for n in range(hunk.old_start, hunk.old_start + max(hunk.old_length, 1))}


#: a line of a file read with its numbers: `    12\tdef parse(text):`
_NUMBERED = regex.compile(r"^\s*(\d+)\t(.*)$")
#: a def or class header, its indent captured
_HEADER = regex.compile(r"^(\s*)(?:async\s+)?(?:def|class)\s+\w+")
_IMPORT = regex.compile(r"^\s*(?:from\s+\S+\s+)?import\s+")


def _read_file(lines: list[str], result: ToolResult, patch: PatchInfo) -> set[int]:
    file = patch.file(result.target or "")
    if file is None or result.is_patch_file is False:
        return set()  # a decoy file has no relevant lines
    changed = _in_hunks(file)
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
        if _IMPORT.match(text) and any(name in text for name in names):
            relevant.add(index)
    return relevant


def _defines(code: str, definitions: list[str]) -> bool:
    return bool((m := DEFINITION.match(code)) and m.group(1) in definitions)


#: a grep hit: `src/app.py:12:    return parse(text)`
_GREP_HIT = regex.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<code>.*)$")


def _grep(lines: list[str], patch: PatchInfo) -> set[int]:
    """Hits in a patch file near one of its hunks, and definitions of what the patch changes."""
    relevant = set()
    definitions = patch.definitions()
    for i, line in enumerate(lines):
        if not (m := _GREP_HIT.match(line)):
            continue
        number, file = int(m.group("line")), patch.file(m.group("path"))
        near = file is not None and any(
            h.old_start - GREP_WINDOW <= number <= h.old_start + h.old_length + GREP_WINDOW
            for h in file.hunks
        )
        if near or _defines(m.group("code"), definitions):
            relevant.add(i)
    return relevant


#: a blame line: `^1a2b3c4 (Ann Lee 2020-01-02 10:00:00 +0000 12) return parse(text)`
_BLAME = regex.compile(r"^\^?[0-9a-f]{4,40} [^(]*\((?P<meta>[^)]*?)\s(?P<line>\d+)\) ?(?P<code>.*)$")


def _blame(lines: list[str], result: ToolResult, patch: PatchInfo) -> set[int]:
    """Blame lines of the lines inside the patch's hunks, and of the definitions it changes."""
    touched = _in_hunks(patch.file(result.target or ""))
    definitions = patch.definitions()
    relevant = set()
    for i, line in enumerate(lines):
        if (m := _BLAME.match(line)) and (
            int(m.group("line")) in touched or _defines(m.group("code"), definitions)
        ):
            relevant.add(i)
    return relevant


#: the lines of a linter's finding that name a line: the header (`app.py:3:1: F401 ...`, or
#: only `F401 ...`), ruff's location (`--> app.py:3:1`) and a code frame's line (`3 | import os`)
_LINT_HEADER = regex.compile(r"^(?:(?P<path>[^:\s][^:]*):(?P<line>\d+):\d+: )?[A-Z]+\d+\b")
_LINT_LOCATION = regex.compile(r"^\s*--> (?P<path>[^:]+):(?P<line>\d+):\d+")
_LINT_FRAME = regex.compile(r"^\s*(?P<line>\d+) \|")
#: a linter's summary, after its last finding
_LINT_END = regex.compile(r"^Found \d+ errors?|^All checks passed|^\[\*\] \d+ fixable")


def _lint(lines: list[str], result: ToolResult, patch: PatchInfo) -> set[int]:
    """Whole findings (header, location, code frame, help) located at or showing a line the patch
    changes, or naming a function it changes."""
    touched = _touched(patch.file(result.target or ""), LINT_WINDOW)
    definitions = patch.definitions()
    blocks: list[list[int]] = []
    for i, line in enumerate(lines):
        if _LINT_HEADER.match(line):
            blocks.append([i])
        elif _LINT_END.match(line):
            blocks.append([])  # a summary ends the last finding
        elif blocks and blocks[-1]:
            blocks[-1].append(i)
    relevant: set[int] = set()
    for block in filter(None, blocks):
        numbers = set()
        for i in block:
            for pattern in (_LINT_HEADER, _LINT_LOCATION, _LINT_FRAME):
                if (m := pattern.match(lines[i])) and m.groupdict().get("line"):
                    numbers.add(int(m.group("line")))
        if numbers & touched or _naming([lines[block[0]]], definitions):
            relevant.update(i for i in block if lines[i].strip())
    return relevant


_TEST_EVIDENCE = regex.compile(
    r"^_{3,} \S.* _{3,}$"  # a failing test's header
    r"|^>\s"  # the source line that failed
    r"|^E\s"  # the error and assertion details
    r"|^\S+\.py:\d+: \w*(?:Error|Exception|Failed|Interrupted)\b"  # where it was raised
    r"|^(?:FAILED|ERROR) \S"  # the short summary
    r"|^ERROR collecting|ImportError while importing|ModuleNotFoundError"
    r"|^=* ?\d+ (?:failed|errors?)\b"  # the run's outcome
)


def _test_output(lines: list[str]) -> set[int]:
    """What explains a test run: failing tests' headers, the failing source line, the error lines,
    where they were raised, collection errors, and the failure summary."""
    return {i for i, line in enumerate(lines) if _TEST_EVIDENCE.search(line)}


#: a hunk header, its new start captured and the enclosing definition git names after it
_DIFF_HUNK = regex.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@(?P<context>.*)$")


def _git_diff(lines: list[str], result: ToolResult, patch: PatchInfo) -> set[int]:
    """The hunks of an earlier change that reach the lines the fix changes (the diff's new side is
    the base commit) or sit in a function it changes, with their file's diff headers."""
    touched = _touched(patch.file(result.target or ""), GREP_WINDOW)
    definitions = patch.definitions()
    relevant: set[int] = set()
    header: list[int] = []
    hunk: list[int] = []
    hits = False

    def close() -> None:
        if hunk and hits:
            relevant.update(header + hunk)

    new_line = 0
    for i, line in enumerate(lines):
        if line.startswith("diff --git"):
            close()
            header, hunk, hits = [i], [], False
        elif (m := _DIFF_HUNK.match(line)) is not None:
            close()
            hunk, new_line = [i], int(m.group(1))
            hits = bool(_naming([m.group("context")], definitions))
        elif hunk:
            hunk.append(i)
            if line.startswith(("+", " ")):
                hits = hits or (line.startswith("+") and new_line in touched)
                new_line += 1
            elif line.startswith("-"):
                hits = hits or new_line in touched
        else:
            header.append(i)
    close()
    return relevant


def _module_stems(patch: PatchInfo) -> list[str]:
    stems = {PurePosixPath(p).stem for p in patch.paths}
    return sorted(s for s in stems if len(s) >= 4 and s != "__init__")


def _ls(lines: list[str], patch: PatchInfo, tests: Sequence[str]) -> set[int]:
    """The touched files, their tests (the instance's, or named after them), and the headers of
    their folders."""
    stems = {PurePosixPath(p).stem for p in patch.paths}
    names = {PurePosixPath(p).name for p in [*patch.paths, *tests]}
    names |= {f"test_{s}.py" for s in stems} | {f"{s}_test.py" for s in stems}
    relevant: set[int] = set()
    folder_header = None
    for i, line in enumerate(lines):
        if line.endswith(":") and " " not in line.strip():
            folder_header = i  # "src/flask:" when ls lists several folders
        elif line.split() and line.split()[-1] in names:
            relevant.add(i)
            if folder_header is not None:
                relevant.add(folder_header)
    return relevant


_FAILURE = regex.compile(r"FAILED|ERROR|Error\b|Traceback")


def _collected(lines: list[str], names: list[str], tests: Sequence[str]) -> set[int]:
    """Collected tests of the instance's test files or named after the fix, and collection errors."""
    files = tuple(f"{t}::" for t in tests)
    found = _naming(lines, names) | {i for i, line in enumerate(lines) if _FAILURE.search(line)}
    return found | {i for i, line in enumerate(lines) if line.startswith(files)}


def relevant_lines(result: ToolResult, patch: PatchInfo, tests: Sequence[str] = ()) -> list[int]:
    """``tests``: the instance's test files (its test patch's, its FAIL_TO_PASS tests')."""
    return _relevant(output_lines(result.output), result, patch, tests)


def _relevant(lines: list[str], result: ToolResult, patch: PatchInfo, tests: Sequence[str]) -> list[int]:
    names = patch.telling_names()
    match result.tool_type:
        case "read_file":
            found = _read_file(lines, result, patch)
        case "grep":
            found = _grep(lines, patch)
        case "git_blame":
            found = _blame(lines, result, patch)
        case "lint_output":
            found = _lint(lines, result, patch)
        case "test_output":
            found = _test_output(lines)
        case "build_output":
            found = _collected(lines, names, tests)
        case "git_diff":
            found = _git_diff(lines, result, patch)
        case "ls":
            found = _ls(lines, patch, tests)
        case "git_log":  # commits naming what the fix changes, or the module it changes
            found = _naming(lines, names + _module_stems(patch))
        case _:  # python, curl
            found = _naming(lines, names)
    return sorted(found)


def label(result: ToolResult, patch: PatchInfo, tests: Sequence[str] = (), task: str = "") -> Labelled:
    """Relevant lines, whether the output goes on (>= 10 lines) and whether its labels pass the
    keep filter (>= 3 relevant lines, share 0.02-0.40; a decoy passes as all-irrelevant)."""
    lines = output_lines(result.output)
    if result.skipped:
        return Labelled(
            result=result,
            task=task,
            lines=0,
            relevant=[],
            eligible=False,
            kept=False,
            held="skipped",
            reason=f"skipped: {result.skipped}",
        )
    if len(lines) < MIN_LINES:
        return Labelled(
            result=result,
            task=task,
            lines=len(lines),
            relevant=[],
            eligible=False,
            kept=False,
            held="too few lines",
            reason=f"fewer than {MIN_LINES} lines ({len(lines)})",
        )
    if result.is_patch_file is False:
        return Labelled(result=result, task=task, lines=len(lines), relevant=[], eligible=True, kept=True)
    relevant = _relevant(lines, result, patch, tests)
    counts = f"({len(relevant)} of {len(lines)} lines)"  # counts, not a rounded share: never contradictory
    held: HoldReason | None = None
    reason = None
    if len(relevant) < MIN_RELEVANT:
        held, reason = "too few relevant lines", f"fewer than {MIN_RELEVANT} relevant lines {counts}"
    elif len(relevant) < MIN_SHARE * len(lines):
        held, reason = "relevant share too low", f"relevant share below {MIN_SHARE} {counts}"
    elif len(relevant) > MAX_SHARE * len(lines):
        held, reason = "relevant share too high", f"relevant share above {MAX_SHARE} {counts}"
    return Labelled(
        result=result,
        task=task,
        lines=len(lines),
        relevant=relevant,
        eligible=True,
        kept=held is None,
        held=held,
        reason=reason,
    )
