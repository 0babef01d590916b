"""Supervising a sandboxed command from the host (see squeez/sandbox.py): its output read up to
a bound, processes that detach themselves inside the sandbox killed as they appear, and the
whole sandbox killed on timeout."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import threading
import time
from pathlib import Path

from pydantic import BaseModel

from lettuce_build.core import interrupts

MAX_READ_BYTES = 4_000_000


#: how long the host waits for bubblewrap to report its sandbox's first process
INFO_TIMEOUT = 30.0


#: how often a running sandbox is checked for processes that detached themselves
REAP_INTERVAL = 0.5


class Captured(BaseModel):
    text: str
    exit_code: int | None
    timed_out: bool
    binary: bool


def first_process(info: int, process: subprocess.Popen[bytes]) -> int | None:
    """The host PID of the sandbox's first process, as bubblewrap reports it on its info pipe;
    None when bubblewrap ended before reporting (its output says why)."""
    data = b""
    deadline = time.monotonic() + INFO_TIMEOUT
    while b"}" not in data and time.monotonic() < deadline:
        ready, _, _ = select.select([info], [], [], 0.5)
        if ready:
            block = os.read(info, 4096)
            if not block:
                break
            data += block
        elif process.poll() is not None:
            break
    try:
        return int(json.loads(data)["child-pid"])
    except (ValueError, KeyError):
        return None


def _children(pid: int) -> list[tuple[int, int]]:
    """(start time, PID) of each child of ``pid``, from the kernel's own list of them."""
    try:
        listed = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []  # it has ended
    found = []
    for child in listed:
        try:
            stat = Path(f"/proc/{child}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
        found.append((int(fields[19]), int(child)))
    return found


def _reap_detached(init: int) -> None:
    """Kill what detached itself inside the sandbox: the first process (PID 1 inside) has the
    command as its oldest child; any other child was orphaned and re-parented to it."""
    children = sorted(_children(init))
    for _, pid in children[1:]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def collect(process: subprocess.Popen[bytes], timeout: float, init: int | None) -> Captured:
    """Wait for ``process`` (killing detached processes inside its sandbox as they appear), read
    at most MAX_READ_BYTES of its output; kill the whole group on timeout."""
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
    deadline = time.monotonic() + timeout
    while True:
        try:
            process.wait(timeout=max(0.0, min(REAP_INTERVAL, deadline - time.monotonic())))
            break
        except subprocess.TimeoutExpired:
            if interrupts.asked():  # Ctrl-C or SIGTERM: the command ends now, and the sandbox with it
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                interrupts.check()
            if time.monotonic() >= deadline:
                timed_out = True
                # bubblewrap leads this group; with it dies the sandbox's PID namespace, and
                # every process inside it, whatever session or group it moved itself to.
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                break
            if init is not None:
                _reap_detached(init)
    reader.join(timeout=5)
    raw = b"".join(chunks)
    return Captured(
        text=raw.decode("utf-8", errors="replace"),
        exit_code=None if timed_out else process.returncode,
        timed_out=timed_out,
        binary=b"\x00" in raw,
    )
