"""Phase 4: run tool calls for real, safely.

- argv lists, never a shell;
- git tools read the bare clone directly (host git, no hooks, no config but the clone's);
- every other call runs in the sandbox (`squeez.sandbox`) on a fresh copy of the instance's
  exported tree, thrown away afterwards: nothing a command writes survives it, and host git
  never touches anything a command could have written;
- python, test_output and build_output run on the instance's environment (`environments`),
  mounted read-only, never on lettuce-build's own interpreter; without one they are skipped;
- per-type timeouts: a timeout kills the sandbox and everything in it, and is recorded as output;
- output capped at 500 lines (and a byte budget while reading) with an omission marker;
- an output holding a secret (a token-shaped string, or the value of one of this process's
  secret variables) is withheld and the call recorded as skipped, so it can never be published.
Types that cannot run are recorded as skipped, with the reason.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from lettuce_build.core.errors import RepoError
from lettuce_build.core.leaks import SecretScanner
from lettuce_build.squeez.environments import Environments, EnvStatus, apply_overlay
from lettuce_build.squeez.instances import SqueezInstance
from lettuce_build.squeez.sandbox import (
    SANDBOX_TREE,
    Isolation,
    IsolationMode,
    Sandbox,
    interpreter_paths,
    run_bounded,
    sandbox_uid,
    scrubbed_env,
)
from lettuce_build.squeez.toolcalls import ToolCall
from lettuce_build.squeez.tree_copies import copy_tree, unlink_copies
from lettuce_build.squeez.usernet import INSTALL_HINT
from lettuce_build.swebench.patches import parse_patch
from lettuce_build.swebench.repos import RepoManager, host_git_env

MAX_LINES = 500
_NO_ENV = "no environment for this repository: repository code never runs on lettuce-build's interpreter"


class ToolResult(BaseModel):
    instance_id: str
    repo: str
    tool_type: str
    command: str
    query: str
    target: str | None = None
    is_patch_file: bool | None = None
    output: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    truncated_lines: int = 0
    skipped: str | None = None
    isolation: IsolationMode = "none"
    seconds: float = 0.0

    @property
    def key(self) -> str:
        return f"{self.instance_id}::{self.command}"


def cap_lines(text: str, max_lines: int = MAX_LINES) -> tuple[str, int]:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    if len(lines) <= max_lines:
        return "\n".join(lines), 0
    omitted = len(lines) - max_lines
    return "\n".join(lines[:max_lines] + [f"... [{omitted} more lines omitted]"]), omitted


def strip_revision(text: str, revision: str) -> str:
    """git grep over a commit prefixes every hit with ``<commit>:``; an agent's grep shows paths."""
    prefix = f"{revision}:"
    return "\n".join(line.removeprefix(prefix) for line in text.split("\n"))


def number_lines(text: str) -> str:
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(text.split("\n"), start=1))


class Executor:
    def __init__(
        self,
        repos: RepoManager,
        isolation: Isolation,
        *,
        allow_network: bool = False,
        instances: dict[str, SqueezInstance] | None = None,
        environments: Environments | None = None,
        scanner: SecretScanner | None = None,
    ) -> None:
        self.repos = repos
        self.isolation = isolation
        self.allow_network = allow_network
        self.instances = instances or {}
        self.environments = environments
        self.scanner = scanner or SecretScanner.from_environment()
        self.sandbox = Sandbox(isolation, repos.root / "sandbox")
        self.tool_path = [str(Path(sys.executable).parent)]  # pytest and ruff of lettuce-build's env
        self.has_ruff = shutil.which("ruff", path=scrubbed_env("/", self.tool_path)["PATH"]) is not None
        self._scratch = itertools.count()

    def _skip(self, call: ToolCall, env: EnvStatus | None) -> str | None:
        if call.needs_network and not self.allow_network:
            return "network disabled: curl calls run only with --allow-network"
        if call.needs_network and self.isolation.network != "pasta":
            return f"no user-mode network on this machine: {INSTALL_HINT}"
        if call.runs_in == "tree" and self.isolation.mode != "bwrap":
            return "no sandbox on this machine (install bubblewrap): repository code is never run unconfined"
        if call.needs_env and env is None:
            return _NO_ENV
        if call.needs_env and env is not None and not env.ok:
            return f"environment {env.key} failed: {env.reason}"
        if call.tool_type == "lint_output" and not self.has_ruff:
            return "ruff is not installed"
        return None

    def run_instance(self, calls: list[ToolCall], worker: int = 0) -> list[ToolResult]:
        """Every call of one instance, sharing one export of its tree (removed afterwards) and, for
        the calls that import the repository, its environment (built on first need)."""
        if not calls:
            return []
        if not any(c.runs_in == "tree" and self._skip(c, None) in (None, _NO_ENV) for c in calls):
            return [self.run(call, worker) for call in calls]
        first = calls[0]
        try:
            with self.repos.exported(first.repo, first.base_commit) as tree:
                env = None
                if self.environments is not None and any(c.needs_env for c in calls):
                    instance = self.instances.get(first.instance_id)
                    version = instance.version if instance else None
                    tag = self.repos.nearest_tag(first.repo, first.base_commit)
                    env = self.environments.ensure(
                        first.instance_id, first.repo, version=version, tree=tree, worker=worker, tag=tag
                    )
                return [self.run(call, worker, tree, env) for call in calls]
        except RepoError as err:
            return [self._result(c, skipped=f"cannot export the tree: {err}") for c in calls]

    def _result(self, call: ToolCall, **values: Any) -> ToolResult:
        said = call.model_dump(
            include={"instance_id", "repo", "tool_type", "query", "target", "is_patch_file"}
        )
        return ToolResult(**said, command=call.command, isolation=self.isolation.mode, **values)

    def run(
        self, call: ToolCall, worker: int = 0, tree: Path | None = None, env: EnvStatus | None = None
    ) -> ToolResult:
        if reason := self._skip(call, env):
            return self._result(call, skipped=reason)
        started = time.perf_counter()
        if call.runs_in == "bare":
            bare = self.repos.bare_path(call.repo)
            git_env = {**host_git_env(), "GIT_DIR": str(bare)}
            captured = run_bounded(call.argv, cwd=bare, env=git_env, timeout=call.timeout)
        else:
            with self._scratch_tree(call, worker, tree, env if call.needs_env else None) as scratch:
                captured = self._run_sandboxed(call, worker, scratch, env)
        result = self._result(
            call,
            seconds=time.perf_counter() - started,
            exit_code=captured.exit_code,
            timed_out=captured.timed_out,
        )
        if leaks := self.scanner.find(captured.text):
            result.skipped = f"output withheld: it holds a secret ({', '.join(leaks)})"
            return result
        if captured.binary:
            result.output = f"[binary output: {len(captured.text.encode())} bytes not shown]"
        else:
            text = captured.text
            if call.tool_type == "read_file":
                text = number_lines(text.rstrip("\n"))
            elif call.tool_type == "grep":
                text = strip_revision(text, call.base_commit)
            result.output, result.truncated_lines = cap_lines(text)
        if captured.timed_out:
            result.output += f"\n[timed out after {call.timeout:.0f} s]"
        return result

    @contextmanager
    def _scratch_tree(
        self, call: ToolCall, worker: int, tree: Path | None, env: EnvStatus | None = None
    ) -> Iterator[Path]:
        """A fresh copy of the exported tree for one command, with the files its environment's
        build wrote into the tree laid over it; deleted afterwards whatever the command did."""
        if tree is None:
            with self.repos.exported(call.repo, call.base_commit) as exported:
                with self._scratch_tree(call, worker, exported, env) as scratch:
                    yield scratch
            return
        scratch = self.repos.root / "scratch" / f"w{worker}-{next(self._scratch)}"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.parent.mkdir(parents=True, exist_ok=True)
        copy_tree(tree, scratch, sandbox_uid(worker))
        if env is not None and env.overlay:
            apply_overlay(Path(env.overlay), scratch, sandbox_uid(worker))
        try:
            if call.tool_type == "test_output":
                self._apply_test_patch(call, scratch)
            yield scratch
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _run_sandboxed(self, call: ToolCall, worker: int, scratch: Path, env: EnvStatus | None):  # noqa: ANN202
        network = call.needs_network and self.allow_network
        if call.needs_env and env is not None:
            # the environment and the interpreter it links to, read-only; the tree's own code
            # first on the path (a src layout's package lives under src/)
            read_only = [*interpreter_paths(Path(env.interpreter)), Path(env.path)]
            path, extra = [str(env.bin)], {"VIRTUAL_ENV": env.path}
            if (scratch / "src").is_dir():
                extra["PYTHONPATH"] = f"{SANDBOX_TREE}/src"
        else:  # ls, lint: lettuce-build's own tools, never repository code
            read_only, path, extra = interpreter_paths(), self.tool_path, {}
        return self.sandbox.run(
            call.argv,
            tree=scratch,
            read_only=read_only,
            network=network,
            uid=sandbox_uid(worker),
            env_path=path,
            extra_env=extra,
            timeout=call.timeout,
        )

    def _apply_test_patch(self, call: ToolCall, scratch: Path) -> None:
        """SWE-bench's FAIL_TO_PASS tests arrive with the test patch: apply it, as the harness does.
        A patch that does not apply leaves the tests as they are at the base commit. Runs before
        any repository code has touched the copy; linked files are copied first, so the pristine
        export never changes."""
        instance = self.instances.get(call.instance_id)
        patch = instance.test_patch if instance else ""
        if not patch:
            return
        unlink_copies(scratch, parse_patch(patch).paths)
        subprocess.run(
            ["git", "apply", "--whitespace=nowarn", "-"],
            input=patch.encode("utf-8"),
            cwd=scratch,
            capture_output=True,
            # outside any repository: never let git find one above the scratch folder
            env={**host_git_env(), "GIT_CEILING_DIRECTORIES": str(scratch.parent)},
            timeout=60,
        )
