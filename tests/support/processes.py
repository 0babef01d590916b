"""Killing a build hard, part-way through: for the resume tests."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest


def kill_9_after(process: subprocess.Popen, log: Path, lines: int, timeout: float = 120) -> None:
    """SIGKILL ``process`` once ``log`` has ``lines`` lines (its backend has answered that many
    requests); fail the test if it never gets that far."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and len(log.read_text().splitlines()) >= lines:
            break
        time.sleep(0.05)
    else:
        process.kill()
        pytest.fail("the build never got going")
    os.kill(process.pid, signal.SIGKILL)
    assert process.wait(timeout=30) == -signal.SIGKILL


def processes_matching(needle: str) -> list[tuple[int, str]]:
    """(pid, command line) of every process whose command line holds ``needle``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
        if needle in cmdline:
            found.append((int(entry.name), cmdline))
    return found


def processes_marked(mark: str) -> list[tuple[int, str]]:
    """(pid, command line) of every process whose environment holds ``mark``: all that a command
    started, however deep, unless a process made its environment anew."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if mark.encode() in (entry / "environ").read_bytes():
                found.append(
                    (int(entry.name), (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
                )
        except (OSError, ValueError):
            continue
    return found
