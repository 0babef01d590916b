"""SWE-bench code: the issue as the question, the touched files as context, the gold fix as the answer.

Context: each touched file at ``base_commit`` as ``File: path`` and a fenced block,
truncated to a window around the patch when long, capped overall. Answer: the gold
fix, every file and hunk of it, in one of three seeded styles: the patched functions, the
diff, or "in file X replace ... with ..." edits. Trivial (< 40 chars of code) and huge
(> 10,000 chars) answers are skipped with a count. One sample per instance, native
splits (SWE-bench's ``dev`` becomes ``validation``), targeted code injection with
in-fence enforcement and the fabricated-reference check.
"""

from __future__ import annotations

import ast
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import git

from lettuce_build.core.seeding import fraction
from lettuce_build.engine.stage import Stage
from lettuce_build.sources.base import DEFAULT_SETTINGS, LoadOptions, Source, StageSettings, Tally
from lettuce_build.stages.injection import InjectTaxonomyStage
from lettuce_build.swebench.patches import FilePatch, PatchInfo, parse_patch
from lettuce_build.swebench.repos import RepoManager, host_git_env

MIN_CODE_CHARS = 40
MAX_CODE_CHARS = 10_000
FILE_CONTEXT_CHARS = 8_000
CONTEXT_CHARS = 24_000
WINDOW_LINES = 60
STYLES = (("function", 0.4), ("hunk", 0.3), ("replace", 0.3))
TARGETS = (
    ("contradiction", "value"),
    ("contradiction", "numerical"),
    ("unsupported_addition", "behavior"),
    ("fabricated_reference", "identifier"),
    ("fabricated_reference", "attribute"),
)
REQUIRED = ("instance_id", "repo", "base_commit", "patch", "problem_statement")


def fence_language(path: str) -> str:
    return {".py": "python", ".js": "javascript", ".ts": "typescript", ".rst": "rst", ".md": "markdown"}.get(
        PurePosixPath(path).suffix, ""
    )


def file_context(path: str, text: str, file: FilePatch) -> str:
    """``File: path`` and a fenced block; long files keep a window around the patch's hunks."""
    lines = text.split("\n")
    if len(text) > FILE_CONTEXT_CHARS and file.hunks:
        first = max(0, min(h.old_start for h in file.hunks) - WINDOW_LINES)
        last = min(len(lines), max(h.old_start + h.old_length for h in file.hunks) + WINDOW_LINES)
        body = "\n".join(lines[first:last])[:FILE_CONTEXT_CHARS]
        note = f" (lines {first + 1}-{last} of {len(lines)})"
    else:
        body, note = text[:FILE_CONTEXT_CHARS], ""
    return f"File: {path}{note}\n```{fence_language(path)}\n{body}\n```"


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

    def items(self, input_path: str | None, options: LoadOptions, tally: Tally) -> Iterator[dict[str, Any]]:
        repos = RepoManager(options.work_dir or Path("repos"), options.repo_url)
        statuses: dict[str, bool] = {}
        for row in self.rows(input_path, REQUIRED, hub_splits=("train", "dev", "test")):
            tally.documents += 1
            repo = row["repo"]
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
        info = parse_patch(patch)
        bare = git.Repo(repos.bare_path(repo))
        blocks, texts = [], {}
        for file in info.files:
            try:
                texts[file.path] = bare.git.show(f"{commit}:{file.path}")
            except git.GitCommandError:
                texts[file.path] = ""  # a file the patch creates
            blocks.append(file_context(file.path, texts[file.path], file))
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
        target = TARGETS[int(fraction(options.seed, key, "target") * len(TARGETS))]
        return {
            "key": key,
            "split": row.get("split", "test"),  # a local file without splits: SWE-bench's test split
            "question": row["problem_statement"],
            "context": "\n\n".join(blocks)[:CONTEXT_CHARS],
            "answer": answer,
            "target_category": target[0],
            "target_subcategory": target[1],
            "language": "en",
            "metadata": {
                "instance_id": row["instance_id"],
                "repo": repo,
                "base_commit": commit,
                "answer_style": style,
                "files": info.paths,
            },
        }

    def stages(self, settings: StageSettings = DEFAULT_SETTINGS) -> list[Stage]:
        return [
            InjectTaxonomyStage(
                "code",
                require_fences=True,
                enforce_in_fence=True,
                anchors=settings.edit_anchors,
                seed=settings.seed,
            )
        ]
