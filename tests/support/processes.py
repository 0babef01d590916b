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
