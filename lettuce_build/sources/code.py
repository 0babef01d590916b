"""SWE-bench code: the issue as the question, the touched files as context, the gold fix as the answer.

Context: each touched file at ``base_commit`` as ``File: path`` and a fenced block,
truncated to a window around the patch when long, capped overall. Answer: the gold
fix in one of three seeded styles: the whole patched function, the hunk, or an
"in file X replace ... with ..." edit. Trivial (< 40 chars of code) and huge
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

from lettuce_build.patches import FilePatch, parse_patch
from lettuce_build.primitives.injection import InjectTaxonomyStage
from lettuce_build.repos import RepoManager, host_git_env
from lettuce_build.runner import Stage
from lettuce_build.sources.base import DEFAULT_SETTINGS, LoadOptions, Source, StageSettings, Tally
from lettuce_build.sources.chunking import seeded_fraction

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


def build_answer(style: str, file: FilePatch, patched: str | None) -> tuple[str, str]:
    """(answer, code) of the gold fix in a style; the code alone is what the size limits measure."""
    path, hunks = file.path, file.hunks
    if style == "function" and patched is not None and hunks:
        function = _enclosing_function(patched, hunks[0].first_changed_line)
        if function:
            code = function
            return f"In `{path}`, the fixed function:\n```{fence_language(path)}\n{code}\n```", code
    if style == "replace" and hunks:
        old, new = hunks[0].side(new=False), hunks[0].side(new=True)
        lang = fence_language(path)
        return (f"In file `{path}`, replace:\n```{lang}\n{old}\n```\nwith:\n```{lang}\n{new}\n```", old + new)
    code = "\n".join(h.text for h in hunks)
    return f"The fix to `{path}`:\n```diff\n{code}\n```", code


def _choose(seed: int, key: str, salt: str, options: tuple[tuple[str, float], ...]) -> str:
    point, total = seeded_fraction(seed, key, salt), 0.0
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
        for row in self.rows(input_path, REQUIRED, hub_splits=("dev", "test")):
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
        main_file = next((f for f in info.files if f.path.endswith(".py")), info.files[0])
        patched = None
        if style == "function":
            patched = _patched_text(texts.get(main_file.path, ""), patch, main_file.path)
        answer, code = build_answer(style, main_file, patched)
        if len(code.strip()) < MIN_CODE_CHARS:
            skipped["trivial_answer"] += 1
            return None
        if len(code) > MAX_CODE_CHARS:
            skipped["huge_answer"] += 1
            return None
        target = TARGETS[int(seeded_fraction(options.seed, key, "target") * len(TARGETS))]
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
                "code", require_fences=True, enforce_in_fence=True, anchors=settings.edit_anchors
            )
        ]
