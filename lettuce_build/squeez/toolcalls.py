"""Phase 3: seeded, reproducible tool calls per instance (3-7, drawn by type weight, always a
read_file, and a test_output wherever a test can be found).

grep terms are the patch's telling names (``PatchInfo.telling_names``: defined names, the
functions its hunks sit in, names on changed lines); the issue text's backticked and
CamelCase terms only when the patch has none.
read_file mostly targets a patch file, sometimes a sibling "decoy" in the same folder
(``is_patch_file: false``). Commands are argv lists, never shell strings.
"""

from __future__ import annotations

import random
from pathlib import PurePosixPath
from typing import Literal, TypedDict

import git
import regex
from pydantic import BaseModel

from lettuce_build.core import seeding
from lettuce_build.squeez.instances import SqueezInstance
from lettuce_build.swebench.patches import MAX_TELLING_NAMES, PatchInfo, parse_patch

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
#: the chance that a read_file call reads a decoy sibling of a patched file, not the file
DECOY_CALL_CHANCE = 0.2
ENV_TOOLS = frozenset({"python", "test_output", "build_output"})

MAX_RELATED_TESTS = 3
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
    def needs_env(self) -> bool:
        """Calls that import the repository's code run on its environment."""
        return self.tool_type in ENV_TOOLS

    @property
    def command(self) -> str:
        return " ".join(a if regex.fullmatch(r"[\w@%+=:,./-]+", a) else repr(a) for a in self.argv)

    @property
    def key(self) -> str:
        return f"{self.instance_id}::{self.command}"


def _rng(seed: int, instance_id: str) -> random.Random:
    return seeding.rng(seed, instance_id)


def issue_terms(text: str) -> list[str]:
    terms: dict[str, None] = {}
    for pattern in (_BACKTICKED, _CAMEL):
        for match in pattern.finditer(text):
            terms.setdefault(match.group(1).split(".")[-1], None)
    return list(terms)


def related_tests(bare: git.Repo | None, commit: str, patch: PatchInfo) -> list[str]:
    """Test files at the base commit that exercise the patched modules, best first.

    A test file named after a patched module (``test_blueprints.py`` for ``blueprints.py``)
    ranks first, then files importing the module by its dotted path, then files importing
    its package.
    """
    if bare is None:
        return []
    modules = [m for m in (module_name(p) for p in patch.paths) if m]
    if not modules:
        return []
    try:
        listing = bare.git.ls_tree("-r", "--name-only", commit).splitlines()
    except git.GitCommandError:
        return []
    tests = [p for p in listing if _is_test_file(p)]
    score: dict[str, int] = {}
    stems = {m.rsplit(".", 1)[-1] for m in modules}
    for path in tests:
        stem = PurePosixPath(path).stem.removeprefix("test_").removesuffix("_test")
        if stem in stems:
            score[path] = 3
    for rank, terms in ((2, modules), (1, sorted({m.split(".")[0] for m in modules}))):
        args = [a for t in terms for a in ("-e", f"import {t}" if rank == 1 else t)]
        try:
            hits = bare.git.grep("-l", "-F", *args, commit, "--", "*test*.py").splitlines()
        except git.GitCommandError:  # no match
            hits = []
        for hit in hits:
            path = hit.split(":", 1)[1] if hit.startswith(commit) else hit
            if path in tests:
                score[path] = max(score.get(path, 0), rank)
    ranked = sorted(score, key=lambda p: (-score[p], len(p), p))
    return ranked[:MAX_RELATED_TESTS]


def _is_test_file(path: str) -> bool:
    """pytest's default test file names, and ``*test_*.py`` (pylint's ``unittest_*.py``)."""
    name = PurePosixPath(path).name
    return name.endswith(".py") and ("test_" in name or name.endswith("_test.py"))


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
    #: per touched file, the last commit before the base commit that changed it (and has a parent)
    last_changes: dict[str, str]


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


def _last_changes(bare: git.Repo | None, commit: str, paths: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    if bare is None:
        return found
    for path in paths:
        try:
            last = bare.git.log("-1", "--format=%H %P", commit, "--", path).split()
        except git.GitCommandError:
            continue
        if len(last) >= 2:  # a root commit has no parent to diff against
            found[path] = last[0]
    return found


class _Common(TypedDict):
    """What every call of one instance and tool shares."""

    instance_id: str
    repo: str
    base_commit: str
    tool_type: str
    timeout: float


def _make(ctx: _Context, tool: str, rng: random.Random) -> ToolCall | None:
    inst, patch = ctx.instance, ctx.patch
    commit = inst.base_commit
    code_files = [p for p in patch.paths if p.endswith(".py")] or patch.paths
    base = _Common(
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
        is_patch = not (decoys and rng.random() < DECOY_CALL_CHANCE)
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
        term = rng.choice(ctx.terms)
        return ToolCall(
            **base,
            argv=["git", "grep", "-n", "-F", "-e", term, commit],
            runs_in="bare",
            target=term,
            query=f"Where is `{term}` defined or used in the code the fix needs?",
        )
    if tool == "git_log":
        only = rng.choice(patch.paths) if rng.random() < 0.5 else None  # one file's history, or all
        argv = ["git", "log", "--oneline", "-20", commit] + (["--", only] if only else [])
        return ToolCall(
            **base,
            argv=argv,
            runs_in="bare",
            target=only,
            query="Which recent commits touched the code related to this issue?",
        )
    if tool == "git_diff":
        # the last change to a touched file before the base commit: never empty, unlike a fixed
        # range of commits that usually missed the file
        path = rng.choice(code_files)
        last = ctx.last_changes.get(path)
        if last is None:
            return None
        return ToolCall(
            **base,
            argv=["git", "diff", f"{last}~1", commit, "--", path],
            runs_in="bare",
            target=path,
            query=f"Which recent changes to {path} matter for this issue?",
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
        # the touched folder and the folder of its tests, as an agent looks for both
        folder = str(PurePosixPath(rng.choice(patch.paths)).parent)
        test_folders = sorted({str(PurePosixPath(t.split("::")[0]).parent) for t in ctx.tests} - {folder})
        folders = [folder, *test_folders[:1]]
        return ToolCall(
            **base,
            argv=["ls", "-la", *folders],
            runs_in="tree",
            target=" ".join(folders),
            query=f"Which files in {' and '.join(folders)} are involved in the fix?",
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
    """3-7 distinct calls for an instance, the same for the same seed: always a read_file, and a
    test_output run of the FAIL_TO_PASS tests, the patch's test files, or the test files that
    exercise the patched modules, whichever the instance has first."""
    patch = parse_patch(instance.patch)
    test_files = [p for p in patch.paths if "test" in PurePosixPath(p).name] + [
        f.path for f in parse_patch(instance.test_patch).files
    ]
    ctx = _Context(
        instance=instance,
        patch=patch,
        siblings=_siblings(bare, instance.base_commit, patch.paths),
        # the patch's own names; the issue's backticked and CamelCase terms only when it has none
        terms=patch.telling_names() or issue_terms(instance.problem_statement)[:MAX_TELLING_NAMES],
        tests=instance.FAIL_TO_PASS
        or sorted(set(test_files))
        or related_tests(bare, instance.base_commit, patch),
        urls=_URL.findall(instance.problem_statement),
        last_changes=_last_changes(bare, instance.base_commit, patch.paths),
    )
    rng = _rng(seed, instance.instance_id)
    wanted = rng.randint(3, 7)
    types, weights = list(TOOL_WEIGHTS), list(TOOL_WEIGHTS.values())
    calls: dict[str, ToolCall] = {}
    for always in ("read_file", "test_output"):  # every instance gets a file read and a test run
        call = _make(ctx, always, rng)
        if call is not None:
            calls[call.command] = call
    for _ in range(wanted * 6):  # draws that yield nothing (no term, no URL) or repeat are redrawn
        if len(calls) >= wanted:
            break
        call = _make(ctx, rng.choices(types, weights)[0], rng)
        if call is not None:
            calls.setdefault(call.command, call)
    return list(calls.values())
