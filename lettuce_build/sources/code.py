"""SWE-bench code: a developer's request as the question, the touched files as context, the gold
fix as the answer.

Context: each touched file at ``base_commit`` as ``File: path`` and a fenced block; a long file
keeps its import header and a window around the patch's hunks. Then the definitions the answer
references that the files do not show, from the repository at the base commit (see
swebench/grounding.py). The whole context is fitted to the model's context length before the
item is made (`context_budget`), so the injector sees everything the sample carries and no
request is too long. Answer: the gold fix, every file and hunk of it, in one of three seeded
styles: the patched functions, the diff, or "in file X replace ... with ..." edits. Trivial
(< 40 chars of code) and huge (> 10,000 chars) answers are skipped with a count. One sample per
instance, native splits (SWE-bench's ``dev`` becomes ``validation``). Stages: the issue as a
developer's request (stages/requests.py: written by the model, or with ``--answers extractive``,
the embedded model's default, chosen among requests made of the issue's own words), then a
coding agent's error (stages/code_edits.py), drawn per item: structural with ``--struct-ratio``,
else intent.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from lettuce_build.core.errors import PatchError
from lettuce_build.core.seeding import fraction
from lettuce_build.sources.base import DEFAULT_SETTINGS, LoadOptions, Pipeline, Source, StageSettings, Tally
from lettuce_build.sources.benchmarks import kept_out_instances
from lettuce_build.stages.code_edits import InjectCodeMenuStage, InjectCodeStage, draw_error
from lettuce_build.stages.generation import GenerateStage
from lettuce_build.stages.requests import MAX_REQUEST_CHARS, request_stage
from lettuce_build.swebench.grounding import (
    DEFAULT_BUDGET,
    Definition,
    import_header,
    referenced_definitions,
    render_definitions,
)
from lettuce_build.swebench.patches import FilePatch, PatchInfo, parse_patch
from lettuce_build.swebench.repos import RepoManager, host_git_env
from lettuce_build.swebench.trees import RepoTree

MIN_CODE_CHARS = 40
MAX_CODE_CHARS = 10_000
#: a context never holds more than this, whatever the model's length
CONTEXT_CHARS = 24_000
#: a file's window reaches at most this many lines beyond the patch's first and last hunk
WINDOW_LINES = 60
#: characters per token the context budget assumes: measured 4.1 on flask's and requests' source
#: with the embedded model's tokenizer; 3 leaves room for denser code and for issue text
CHARS_PER_TOKEN = 3.0
#: tokens the longest prompt of a code item needs besides its context, answer and request: the
#: injection prompt's instructions (about 350) and room for the changes it returns
PROMPT_RESERVE_TOKENS = 1_100
#: an item whose context would be smaller than this is skipped (``no_room_for_context``)
MIN_CONTEXT_CHARS = 1_000
STYLES = (("function", 0.4), ("hunk", 0.3), ("replace", 0.3))
REQUIRED = ("instance_id", "repo", "base_commit", "patch", "problem_statement")


def fence_language(path: str) -> str:
    return {".py": "python", ".js": "javascript", ".ts": "typescript", ".rst": "rst", ".md": "markdown"}.get(
        PurePosixPath(path).suffix, ""
    )


def context_budget(model_tokens: int | None, answer_chars: int) -> int:
    """The characters a code item's context may hold: what the model's context length leaves after
    the prompt, the request and the answer (`CONTEXT_CHARS` when the length is unknown)."""
    if model_tokens is None:
        return CONTEXT_CHARS
    room = (model_tokens - PROMPT_RESERVE_TOKENS) * CHARS_PER_TOKEN - MAX_REQUEST_CHARS - answer_chars
    return max(0, min(CONTEXT_CHARS, int(room)))


def _window(lines: list[str], first: int, last: int, chars: int) -> tuple[int, int]:
    """Lines [first, last) widened a line at a time on each side, up to `WINDOW_LINES` and
    ``chars``; a patch larger than ``chars`` keeps its first lines."""
    size = sum(len(line) + 1 for line in lines[first:last])
    while size > chars and last > first + 1:
        last -= 1
        size -= len(lines[last]) + 1
    low, high = max(0, first - WINDOW_LINES), min(len(lines), last + WINDOW_LINES)
    grew = True
    while grew:
        grew = False
        for index in (first - 1, last):
            if (low <= index < first or last <= index < high) and size + len(lines[index]) + 1 <= chars:
                size += len(lines[index]) + 1
                first, last = min(first, index), max(last, index + 1)
                grew = True
    return first, last


def _hunk_ranges(file: FilePatch) -> list[tuple[int, int]]:
    """The 0-based [first, last) line ranges a file's hunks touch at the base, nearby ones joined
    (closer than two windows: one window shows both)."""
    ranges: list[tuple[int, int]] = []
    for hunk in sorted(file.hunks, key=lambda h: h.old_start):
        first = max(0, hunk.old_start - 1)
        last = max(first + 1, hunk.old_start + hunk.old_length - 1)
        if ranges and first - ranges[-1][1] < 2 * WINDOW_LINES:
            ranges[-1] = (ranges[-1][0], max(ranges[-1][1], last))
        else:
            ranges.append((first, last))
    return ranges


def _joined(windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Windows in order, overlapping or touching ones made one."""
    joined: list[tuple[int, int]] = []
    for first, last in sorted(windows):
        if joined and first <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(joined[-1][1], last))
        else:
            joined.append((first, last))
    return joined


def file_context(path: str, text: str, file: FilePatch, chars: int = CONTEXT_CHARS) -> str:
    """``File: path`` and a fenced block within ``chars``. A longer file shows its import header
    (a Python file's), then a window around each of the patch's hunks (far-apart hunks get one
    each), the gaps marked "..."; the note says which lines are shown."""
    opening = f"File: {path}\n```{fence_language(path)}\n"
    room = max(0, chars - len(opening) - 60)  # 60: the fence's end and the note on lines shown
    if len(text) <= room or not file.hunks:
        return f"{opening}{text[:room]}\n```"
    lines = text.split("\n")
    header = import_header(text) if path.endswith(".py") else ""
    header = header if len(header) <= room // 2 else ""  # a header may not crowd out the patch
    windows = [(0, header.count("\n") + 1)] if header else []
    ranges = _hunk_ranges(file)
    left = room - len(header) - 4 * len(ranges)
    for index, (first, last) in enumerate(ranges):
        window = _window(lines, first, last, left // (len(ranges) - index))
        left -= sum(len(line) + 1 for line in lines[window[0] : window[1]])
        windows.append(window)
    shown = _joined(windows)
    body = "\n...\n".join("\n".join(lines[first:last]) for first, last in shown)
    spans = [f"{first + 1}-{last}" for first, last in shown]
    listed = spans[0] if len(spans) == 1 else ", ".join(spans[:-1]) + f" and {spans[-1]}"
    return f"File: {path} (lines {listed} of {len(lines)})\n```{fence_language(path)}\n{body}\n```"


def _patched_text(base_text: str, patch: str, path: str) -> str | None:
    """``path`` after the patch, or None when it does not apply: `git apply` on a lone copy of the
    file in a temporary folder (outside any repository, so git finds none to work in)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tree"
        target = folder / path
        target.parent.mkdir(parents=True)
        target.write_text(base_text, encoding="utf-8")
        applied = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", f"--include={path}", "-"],
            input=patch.encode(),
            cwd=folder,
            capture_output=True,
            env={**host_git_env(), "GIT_CEILING_DIRECTORIES": tmp},
        )
        return target.read_text(encoding="utf-8") if applied.returncode == 0 else None


def _enclosing_function(source: str, line: int) -> str | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno <= line <= (
            node.end_lineno or 0
        ):
            if best is None or node.lineno > best.lineno:
                best = node  # the innermost one
    return ast.get_source_segment(source, best) if best else None


def _functions(file: FilePatch, patched: str | None) -> list[str] | None:
    """The fixed functions around every hunk of a file, in order, or None when a hunk lies outside
    any function (module-level code): then only the diff shows the whole fix."""
    if patched is None or not file.path.endswith(".py"):
        return None
    found: list[str] = []
    for hunk in file.hunks:
        function = _enclosing_function(patched, hunk.first_changed_line)
        if function is None:
            return None
        if function not in found:
            found.append(function)
    return found


def build_answer(style: str, patch: PatchInfo, patched: dict[str, str | None]) -> tuple[str, str]:
    """(answer, code) of the whole gold fix, every file and hunk of it, in a style; the code alone is
    what the size limits measure. A file the function style cannot show (module-level changes)
    falls back to its diff, so the answer never leaves part of the fix out."""
    parts, code = [], []
    for file in patch.files:
        lang = fence_language(file.path)
        functions = _functions(file, patched.get(file.path)) if style == "function" else None
        if functions:
            body = "\n\n".join(functions)
            noun = "function" if len(functions) == 1 else "functions"
            parts.append(f"In `{file.path}`, the fixed {noun}:\n```{lang}\n{body}\n```")
            code.append(body)
        elif style == "replace" and file.hunks:
            for hunk in file.hunks:
                old, new = hunk.side(new=False), hunk.side(new=True)
                parts.append(
                    f"In file `{file.path}`, replace:\n```{lang}\n{old}\n```\nwith:\n```{lang}\n{new}\n```"
                )
                code.append(old + new)
        else:
            diff = "\n".join(h.text for h in file.hunks)
            parts.append(f"The fix to `{file.path}`:\n```diff\n{diff}\n```")
            code.append(diff)
    return "\n\n".join(parts), "\n".join(code)


def _choose(seed: int, key: str, salt: str, options: tuple[tuple[str, float], ...]) -> str:
    point, total = fraction(seed, key, salt), 0.0
    for name, weight in options:
        total += weight
        if point < total:
            return name
    return options[-1][0]


class CodeSource(Source):
    name = "code"
    dataset_name = "lettucedetect-code"
    modality = "code"
    task_type = "code_fix"
    hub_id = "princeton-nlp/SWE-bench"
    own_options = ("struct_ratio", "repo_url")

    def items(self, input_path: str | None, options: LoadOptions, tally: Tally) -> Iterator[dict[str, Any]]:
        repos = RepoManager(options.work_dir or Path("repos"), options.repo_url)
        statuses: dict[str, bool] = {}
        # a benchmark's own instances are skipped before their repositories are cloned
        kept_out = kept_out_instances(options.decontaminate_against, options.decontaminate_repos)
        kept_out = {} if options.mark_only else kept_out
        for row in self.rows(input_path, REQUIRED, tally, hub_splits=("train", "dev", "test")):
            tally.documents += 1
            repo = row["repo"]
            if (benchmark := kept_out.get(row["instance_id"])) or (benchmark := kept_out.get(repo)):
                what = "instance" if row["instance_id"] in kept_out else "repository"
                where, why = f"code instance {row['instance_id']}", f"{benchmark} holds this SWE-bench {what}"
                tally.skip(f"contaminated ({benchmark}, {what})", where, why)
                continue
            if repo not in statuses:
                statuses[repo] = repos.clone(repo).ok
            if not statuses[repo]:
                tally.skipped[f"repository_unavailable:{repo}"] += 1
                continue
            item = self._item(row, repos, options, tally.skipped)
            if item is not None:
                yield item

    def _item(
        self, row: dict[str, Any], repos: RepoManager, options: LoadOptions, skipped: Counter[str]
    ) -> dict[str, Any] | None:
        patch, commit, repo = row["patch"], row["base_commit"], row["repo"]
        if not isinstance(patch, str) or not patch.strip() or not repos.has_commit(repo, commit):
            skipped["no_patch_or_commit"] += 1
            return None
        try:
            info = parse_patch(patch)
        except PatchError:
            skipped["malformed_patch"] += 1
            return None
        tree = RepoTree(repos.bare_path(repo), commit)
        texts = {f.path: tree.read(f.path) or "" for f in info.files}  # "": a file the patch creates
        key = f"code::{row['instance_id']}"
        style = _choose(options.seed, key, "style", STYLES)
        patched = {
            f.path: _patched_text(texts[f.path], patch, f.path) if style == "function" else None
            for f in info.files
        }
        answer, code = build_answer(style, info, patched)
        if len(code.strip()) < MIN_CODE_CHARS:
            skipped["trivial_answer"] += 1
            return None
        if len(code) > MAX_CODE_CHARS:
            skipped["huge_answer"] += 1
            return None
        budget = context_budget(options.context_tokens, len(answer))
        if budget < MIN_CONTEXT_CHARS:
            skipped["no_room_for_context"] += 1
            return None
        context, added = grounded_context(info, texts, answer=answer, tree=tree, budget=budget)
        return {
            "key": key,
            "split": row.get("split", "test"),  # a local file without splits: SWE-bench's test split
            "issue": row["problem_statement"],
            "context": context,
            "answer": answer,
            "code_error": draw_error(options.seed, key, options.struct_ratio, options.error_types),
            "repo_dir": str(tree.bare),
            "base_commit": commit,
            "language": "en",
            "metadata": {
                "instance_id": row["instance_id"],
                "repo": repo,
                "base_commit": commit,
                "answer_style": style,
                "files": info.paths,
                "problem_statement": row["problem_statement"],
                "referenced_definitions": [{"name": d.name, "path": d.path} for d in added],
                "context_budget": budget,
            },
        }

    def pipeline(self, settings: StageSettings = DEFAULT_SETTINGS) -> Pipeline:
        # what the model writes here is the request (the answer is the gold fix): extractive
        # answers (a small model's) mean a request chosen among the issue's own sentences, and
        # a mistake chosen among the fix's mutations
        small = settings.answers == "extractive"
        request = request_stage("chosen" if small else "free")
        edits = InjectCodeMenuStage if small else InjectCodeStage
        anchors = "free" if settings.edit_anchors == "free" else "constrained"
        inject = edits(RepositoryNames(), allowed=settings.error_types, anchors=anchors, seed=settings.seed)
        return Pipeline(inject=[request, inject], generate=[request, GenerateStage(seed=settings.seed)])


class RepositoryNames:
    """`InjectCodeStage`'s lookup: ``git grep`` in the bare clone the item names, at its base commit."""

    def __call__(self, item: dict[str, Any], name: str) -> bool:
        return _tree(item["repo_dir"], item["base_commit"]).mentions(name)

    def __repr__(self) -> str:
        return "RepositoryNames()"


@functools.lru_cache(maxsize=64)
def _tree(repo_dir: str, commit: str) -> RepoTree:
    return RepoTree(Path(repo_dir), commit)


def grounded_context(
    info: PatchInfo, texts: dict[str, str], *, answer: str, tree: RepoTree, budget: int
) -> tuple[str, list[Definition]]:
    """The touched files within ``budget`` characters, then the definitions the answer references
    that they do not show (see swebench/grounding.py), and the definitions added. The files share
    what the definitions may not take, the shortest first: a short file leaves its share to the
    others."""
    room = budget - min(DEFAULT_BUDGET.total, budget // 3)
    blocks: dict[str, str] = {}
    for index, file in enumerate(sorted(info.files, key=lambda f: len(texts[f.path]))):
        share = (room - sum(len(b) + 2 for b in blocks.values())) // (len(info.files) - index)
        blocks[file.path] = file_context(file.path, texts[file.path], file, share)
    files = "\n\n".join(blocks[f.path] for f in info.files)
    limit = DEFAULT_BUDGET.model_copy(update={"total": max(0, budget - len(files) - 200)})
    added = referenced_definitions(answer, files, tree=tree, changed=info.paths, budget=limit)
    return "\n\n".join(part for part in (files, render_definitions(added)) if part), added
