"""No process a command started outlives it, however it ends (a SIGKILL included).

A command that ends normally, or stops when asked, stops what it started itself: the engine, a
sandbox, Ray. A SIGKILL (an out-of-memory killer, a scheduler's hard limit) gives it no time to.
Some children die with it anyway (bubblewrap's ``--die-with-parent``, pasta under ``setpriv
--pdeathsig``, Ray's store and scheduler), but not all: Ray's agents, for one, wait a minute for a
server that died with their scheduler before they give up (measured: 61 s).

So a command starts a small watcher process that waits for it to die: every process started
below the command carries a token in its environment, and once the command is gone the watcher
kills every process that still holds the token, then exits. One watcher per process; a
lettuce-build started by another gets a token of its own (its children die with it, and it dies
with its parent's).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

#: the environment variable whose value marks the processes started below a command
TOKEN = "LETTUCE_BUILD_LIFELINE"

#: the watcher: polls for its parent's death (a new parent, once orphaned), then kills what holds
#: the token. Polling, because a parent-death signal is sent when the thread that started a
#: process ends, and commands start processes from worker threads too.
_WATCHER = """
import os, signal, sys, time
parent, mark = int(sys.argv[1]), sys.argv[2].encode()
while os.getppid() == parent:
    time.sleep(0.25)
for _ in range(3):  # a process may start another while the first pass kills
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/environ", "rb") as environ:
                    if mark in environ.read():
                        os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass
    time.sleep(0.1)
"""


class _Watched:
    #: the process whose watcher runs (a forked child has none of its own), and the watcher
    pid: int | None = None
    watcher: subprocess.Popen[bytes] | None = None


def children_die_with_this_process() -> None:
    """From now on, the processes this one starts (and theirs) are killed when it dies, however it
    dies. Once per process; on Linux only (the watcher reads /proc), elsewhere nothing."""
    if not sys.platform.startswith("linux") or not sys.executable or _Watched.pid == os.getpid():
        return
    token = uuid.uuid4().hex
    try:
        _Watched.watcher = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WATCHER, str(os.getpid()), f"{TOKEN}={token}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C to the terminal's group is for the command, not for it
        )
    except OSError:  # no process to spare (a fork refused): the command runs, without the watcher
        return
    os.environ[TOKEN] = token
    _Watched.pid = os.getpid()
