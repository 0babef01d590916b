"""Phase 4: run tool calls for real, safely.

Code from third-party repositories runs with:
- argv lists, never a shell;
- a scrubbed environment: PATH, HOME, TMPDIR, LANG and nothing else (no tokens, no keys);
- isolation, the best the machine offers: bubblewrap (read-only root, only the worktree
  writable, no network), else `unshare -n` (no network, writes not confined),
  else none; the mode in force is recorded with every result and in the report;
- resource limits on CPU time, address space, processes and file size;
- per-type timeouts: a timeout kills the process group and is recorded as output;
- output capped at 500 lines (and a byte budget while reading) with an omission marker.
Nothing is installed anywhere. Types that cannot run are recorded as skipped, with the reason.
Git tools read the bare clone directly and need no checkout.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from lettuce_build.squeez.repos import RepoManager
from lettuce_build.squeez.toolcalls import ToolCall

MAX_LINES = 500
MAX_READ_BYTES = 4_000_000
CPU_SECONDS_MARGIN = 5
ADDRESS_SPACE_BYTES = 4 * 1024**3
MAX_FILE_BYTES = 64 * 1024**2
MAX_PROCESSES = 256

IsolationMode = Literal["bwrap", "unshare", "none"]


class Isolation(BaseModel):
    mode: IsolationMode
    note: str


def detect_isolation() -> Isolation:
    """The strongest isolation that works here, checked by running it once."""
    probe = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "true"]
    if shutil.which("bwrap") and subprocess.run(probe, capture_output=True).returncode == 0:
        return Isolation(
            mode="bwrap", note="bubblewrap: read-only root (/tmp included), writable worktree, no network"
        )
    if (
        shutil.which("unshare")
        and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0
    ):
        return Isolation(
            mode="unshare",
            note="unshare -n: no network; writes outside the worktree are NOT "
            "confined (install bubblewrap for that)",
        )
    return Isolation(
        mode="none",
        note="no isolation available: no bubblewrap and no network namespaces; "
        "commands run with a scrubbed environment and limits only",
    )


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


def scrubbed_env(home: str) -> dict[str, str]:
    """Only what a tool needs; the python on PATH is ours, so pytest and the stdlib are there."""
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"])
    return {
        "PATH": path,
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "NO_COLOR": "1",
    }


def _limits(cpu_seconds: int) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_FILE_BYTES, MAX_FILE_BYTES))
    resource.setrlimit(resource.RLIMIT_NPROC, (MAX_PROCESSES, MAX_PROCESSES))  # not enforced for root
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class Captured(BaseModel):
    text: str
    exit_code: int | None
    timed_out: bool
    binary: bool


def run_bounded(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> Captured:
    """Run argv with limits; read at most MAX_READ_BYTES; kill the whole group on timeout."""
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=lambda: _limits(int(timeout) + CPU_SECONDS_MARGIN),
    )
    chunks: list[bytes] = []
    kept = 0

    def drain() -> None:  # keep the first bytes, discard the rest so the child never blocks
        nonlocal kept
        assert process.stdout is not None
        while block := process.stdout.read(65536):
            if kept < MAX_READ_BYTES:
                chunks.append(block[: MAX_READ_BYTES - kept])
                kept += len(chunks[-1])

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    reader.join(timeout=5)
    raw = b"".join(chunks)
    return Captured(
        text=raw.decode("utf-8", errors="replace"),
        exit_code=None if timed_out else process.returncode,
        timed_out=timed_out,
        binary=b"\x00" in raw,
    )


def cap_lines(text: str, max_lines: int = MAX_LINES) -> tuple[str, int]:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    if len(lines) <= max_lines:
        return "\n".join(lines), 0
    omitted = len(lines) - max_lines
    return "\n".join(lines[:max_lines] + [f"... [{omitted} more lines omitted]"]), omitted


def number_lines(text: str) -> str:
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(text.split("\n"), start=1))


class Executor:
    def __init__(
        self,
        repos: RepoManager,
        isolation: Isolation,
        *,
        allow_network: bool = False,
        test_patches: dict[str, str] | None = None,
    ) -> None:
        self.repos = repos
        self.isolation = isolation
        self.allow_network = allow_network
        self.test_patches = test_patches or {}
        self.has_ruff = shutil.which("ruff", path=scrubbed_env("/tmp")["PATH"]) is not None

    def _skip(self, call: ToolCall) -> str | None:
        if call.needs_network and not self.allow_network:
            return "network disabled: curl calls run only with --allow-network"
        if call.tool_type == "lint_output" and not self.has_ruff:
            return "ruff is not installed"
        if call.tool_type == "git_diff" and not self.repos.has_commit(call.repo, f"{call.base_commit}~3"):
            return "the base commit has fewer than 3 ancestors"
        return None

    def _sandboxed(self, argv: list[str], worktree: Path, network: bool) -> list[str]:
        if self.isolation.mode == "bwrap":
            # The whole tree read-only, /tmp included (a private tmpfs would also hide a virtualenv
            # that lives under /tmp); HOME and TMPDIR point into the writable worktree instead.
            wrap = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
            wrap += ["--bind", str(worktree), str(worktree), "--die-with-parent", "--chdir", str(worktree)]
            return wrap + ([] if network else ["--unshare-net"]) + ["--", *argv]
        if self.isolation.mode == "unshare" and not network:
            return ["unshare", "-n", "--", *argv]
        return argv

    def run(self, call: ToolCall, worker: int = 0) -> ToolResult:
        result = ToolResult(
            instance_id=call.instance_id,
            repo=call.repo,
            tool_type=call.tool_type,
            command=call.command,
            query=call.query,
            target=call.target,
            is_patch_file=call.is_patch_file,
            isolation=self.isolation.mode,
        )
        if reason := self._skip(call):
            result.skipped = reason
            return result
        started = time.perf_counter()
        if call.runs_in == "bare":
            bare = self.repos.bare_path(call.repo)
            env = {**scrubbed_env(str(bare)), "GIT_DIR": str(bare)}
            captured = run_bounded(call.argv, cwd=bare, env=env, timeout=call.timeout)
        else:
            worktree = self.repos.worktree(call.repo, call.base_commit, worker)
            if call.tool_type == "test_output":
                self._apply_test_patch(call, worktree)
            home = worktree / ".squeez-home"  # removed by the clean before the next command
            home.mkdir(exist_ok=True)
            argv = self._sandboxed(call.argv, worktree, network=call.needs_network and self.allow_network)
            captured = run_bounded(argv, cwd=worktree, env=scrubbed_env(str(home)), timeout=call.timeout)
        result.seconds = time.perf_counter() - started
        result.exit_code, result.timed_out = captured.exit_code, captured.timed_out
        if captured.binary:
            result.output = f"[binary output: {len(captured.text.encode())} bytes not shown]"
        else:
            text = (
                number_lines(captured.text.rstrip("\n")) if call.tool_type == "read_file" else captured.text
            )
            result.output, result.truncated_lines = cap_lines(text)
        if captured.timed_out:
            result.output += f"\n[timed out after {call.timeout:.0f} s]"
        return result

    def _apply_test_patch(self, call: ToolCall, worktree: Path) -> None:
        """SWE-bench's FAIL_TO_PASS tests arrive with the test patch: apply it, as the harness does.
        A patch that does not apply leaves the tests as they are at the base commit."""
        if patch := self.test_patches.get(call.instance_id):
            subprocess.run(
                ["git", "apply", "--whitespace=nowarn", "-"],
                input=patch.encode("utf-8"),
                cwd=worktree,
                capture_output=True,
                env=scrubbed_env(str(worktree)),
                timeout=60,
            )
