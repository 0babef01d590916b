"""Phase 3: seeded, reproducible tool calls per instance (3-7, drawn by type weight, >= 1 read_file).

Names come from the gold patch (def/class names, assignment targets, quoted strings),
the touched files and hunks, and the issue text (backticked terms, CamelCase words).
read_file mostly targets a patch file, sometimes a sibling "decoy" in the same folder
(``is_patch_file: false``). Commands are argv lists, never shell strings.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import PurePosixPath
from typing import Literal

import git
import regex
from pydantic import BaseModel

from lettuce_build.patches import PatchInfo, parse_patch
from lettuce_build.squeez.instances import SqueezInstance

TOOL_WEIGHTS: dict[str, float] = {
    "read_file": 0.25,
    "grep": 0.15,
    "python": 0.10,
    "git_log": 0.10,
    "test_output": 0.10,
    "git_diff": 0.05,
    "git_blame": 0.05,
    "ls": 0.05,
    "lint_output": 0.05,
    "build_output": 0.05,
    "curl": 0.05,
}
TIMEOUTS: dict[str, float] = {"test_output": 60.0, "build_output": 120.0}
DEFAULT_TIMEOUT = 30.0
DECOY_SHARE = 0.2

_BACKTICKED = regex.compile(r"`([A-Za-z_][\w.]{2,60})`")
_CAMEL = regex.compile(r"\b([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+)\b")
_URL = regex.compile(r"https?://[^\s)>\]\"'`]+")


class ToolCall(BaseModel):
    instance_id: str
    repo: str
    base_commit: str
    tool_type: str
    argv: list[str]
    runs_in: Literal["bare", "tree"]
    target: str | None = None
    is_patch_file: bool | None = None
    query: str
    timeout: float = DEFAULT_TIMEOUT
    needs_network: bool = False

    @property
    def command(self) -> str:
        return " ".join(a if regex.fullmatch(r"[\w@%+=:,./-]+", a) else repr(a) for a in self.argv)

    @property
    def key(self) -> str:
        return f"{self.instance_id}::{self.command}"


def _rng(seed: int, instance_id: str) -> random.Random:
    return random.Random(int(hashlib.sha256(f"{seed}::{instance_id}".encode()).hexdigest()[:16], 16))


def issue_terms(text: str) -> list[str]:
    terms: dict[str, None] = {}
    for pattern in (_BACKTICKED, _CAMEL):
        for match in pattern.finditer(text):
            terms.setdefault(match.group(1).split(".")[-1], None)
    return list(terms)


def module_name(path: str) -> str | None:
    if not path.endswith(".py") or "/test" in f"/{path}" or path.endswith("__init__.py"):
        return None
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[0] in ("src", "lib"):
        parts = parts[1:]
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else None


_INTROSPECT = (
    "import importlib, inspect\n"
    "m = importlib.import_module({module!r})\n"
    "for name, obj in sorted(vars(m).items()):\n"
    "    if name.startswith('_') or not (inspect.isfunction(obj) or inspect.isclass(obj)):\n"
    "        continue\n"
    "    try:\n"
    "        sig = str(inspect.signature(obj))\n"
    "    except (TypeError, ValueError):\n"
    "        sig = '(...)'\n"
    "    print(('class ' if inspect.isclass(obj) else 'def ') + name + sig)\n"
)


class _Context(BaseModel):
    instance: SqueezInstance
    patch: PatchInfo
    siblings: dict[str, list[str]]
    terms: list[str]
    tests: list[str]
    urls: list[str]


def _siblings(bare: git.Repo | None, commit: str, paths: list[str]) -> dict[str, list[str]]:
    """Other files in each touched folder at the base commit: decoy candidates."""
    found: dict[str, list[str]] = {}
    if bare is None:
        return found
    for path in paths:
        folder = str(PurePosixPath(path).parent)
        try:
            listing = bare.git.ls_tree("--name-only", commit, f"{folder}/" if folder != "." else ".")
        except git.GitCommandError:
            continue
        found[path] = [p for p in listing.splitlines() if p.endswith(".py") and p not in paths]
    return found


def _make(ctx: _Context, tool: str, rng: random.Random) -> ToolCall | None:
    inst, patch = ctx.instance, ctx.patch
    commit = inst.base_commit
    code_files = [p for p in patch.paths if p.endswith(".py")] or patch.paths
    base = dict(
        instance_id=inst.instance_id,
        repo=inst.repo,
        base_commit=commit,
        tool_type=tool,
        timeout=TIMEOUTS.get(tool, DEFAULT_TIMEOUT),
    )
    if not patch.paths:
        return None
    if tool == "read_file":
        path = rng.choice(patch.paths)
        decoys = ctx.siblings.get(path, [])
        is_patch = not (decoys and rng.random() < DECOY_SHARE)
        target = path if is_patch else rng.choice(decoys)
        return ToolCall(
            **base,
            argv=["git", "show", f"{commit}:{target}"],
            runs_in="bare",
            target=target,
            is_patch_file=is_patch,
            query=f"Which lines of {target} matter for fixing this issue?",
        )
    if tool == "grep":
        if not ctx.terms:
            return None
        term = rng.choice(ctx.terms[:8])
        return ToolCall(
            **base,
            argv=["git", "grep", "-n", "-F", "-e", term, commit],
            runs_in="bare",
            target=term,
            query=f"Where is `{term}` defined or used in the code the fix needs?",
        )
    if tool == "git_log":
        path = rng.choice(patch.paths) if rng.random() < 0.5 else None
        argv = ["git", "log", "--oneline", "-20", commit] + (["--", path] if path else [])
        return ToolCall(
            **base,
            argv=argv,
            runs_in="bare",
            target=path,
            query="Which recent commits touched the code related to this issue?",
        )
    if tool == "git_diff":
        return ToolCall(
            **base,
            argv=["git", "diff", f"{commit}~3", commit, "--", *patch.paths],
            runs_in="bare",
            query="Which recent changes to the touched files matter for this issue?",
        )
    if tool == "git_blame":
        path = rng.choice(code_files)
        return ToolCall(
            **base,
            argv=["git", "blame", commit, "--", path],
            runs_in="bare",
            target=path,
            query=f"Which lines of {path} (and their history) matter for this issue?",
        )
    if tool == "ls":
        folder = str(PurePosixPath(rng.choice(patch.paths)).parent)
        return ToolCall(
            **base,
            argv=["ls", "-la", folder],
            runs_in="tree",
            target=folder,
            query=f"Which files in {folder} are involved in the fix?",
        )
    if tool == "python":
        modules = [m for m in (module_name(p) for p in patch.paths) if m]
        if not modules:
            return None
        module = rng.choice(modules)
        return ToolCall(
            **base,
            argv=["python", "-c", _INTROSPECT.format(module=module)],
            runs_in="tree",
            target=module,
            query=f"Which functions or classes of {module} does the fix touch?",
        )
    if tool == "test_output":
        if not ctx.tests:
            return None
        return ToolCall(
            **base,
            argv=["python", "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *ctx.tests[:5]],
            runs_in="tree",
            target=" ".join(ctx.tests[:5]),
            query="Which test failures and error lines explain the bug?",
        )
    if tool == "lint_output":
        path = rng.choice(code_files)
        return ToolCall(
            **base,
            argv=["ruff", "check", "--no-cache", path],
            runs_in="tree",
            target=path,
            query=f"Which lint findings in {path} concern the code the fix changes?",
        )
    if tool == "build_output":
        folders = sorted({str(PurePosixPath(t.split("::")[0]).parent) for t in ctx.tests}) or ["."]
        return ToolCall(
            **base,
            argv=["python", "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", folders[0]],
            runs_in="tree",
            target=folders[0],
            query="Which collected tests or collection errors relate to the fix?",
        )
    if tool == "curl":
        if not ctx.urls:
            return None
        url = ctx.urls[0]
        return ToolCall(
            **base,
            argv=["curl", "-sS", "-L", "-m", "10", url],
            runs_in="tree",
            target=url,
            needs_network=True,
            query="What in this response matters for the issue?",
        )
    raise ValueError(f"unknown tool type {tool!r}")


def generate_tool_calls(instance: SqueezInstance, seed: int, bare: git.Repo | None) -> list[ToolCall]:
    """3-7 distinct calls for an instance, the same for the same seed, at least one read_file."""
    patch = parse_patch(instance.patch)
    test_files = [p for p in patch.paths if "test" in PurePosixPath(p).name] + [
        f.path for f in parse_patch(instance.test_patch).files
    ]
    ctx = _Context(
        instance=instance,
        patch=patch,
        siblings=_siblings(bare, instance.base_commit, patch.paths),
        terms=patch.identifiers() + issue_terms(instance.problem_statement) + patch.quoted_strings(),
        tests=instance.FAIL_TO_PASS or sorted(set(test_files)),
        urls=_URL.findall(instance.problem_statement),
    )
    rng = _rng(seed, instance.instance_id)
    wanted = rng.randint(3, 7)
    types, weights = list(TOOL_WEIGHTS), list(TOOL_WEIGHTS.values())
    calls: dict[str, ToolCall] = {}
    read_file = _make(ctx, "read_file", rng)
    if read_file is not None:
        calls[read_file.command] = read_file
    for _ in range(wanted * 6):  # draws that yield nothing (no term, no URL) or repeat are redrawn
        if len(calls) >= wanted:
            break
        call = _make(ctx, rng.choices(types, weights)[0], rng)
        if call is not None:
            calls.setdefault(call.command, call)
    return list(calls.values())
