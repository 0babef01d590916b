"""No process a command started outlives it, however it ends (a SIGKILL included).

A command that ends normally, or stops when asked, stops what it started itself: the engine, a
sandbox, Ray. A SIGKILL (an out-of-memory killer, a scheduler's hard limit) gives it no time to.
Some children die with it anyway (bubblewrap's ``--die-with-parent``, pasta under ``setpriv
--pdeathsig``, Ray's store and scheduler), but not all: Ray's agents, for one, wait a minute for a
server that died with their scheduler before they give up (measured: 61 s).

So a command starts a small watcher process that waits for it to die: every process started
below the command carries a token in its environment, the watcher looks at what runs below the
command once a second, and once the command is gone it kills every process that still holds the
token or that it saw below the command, then exits. One watcher per process; a
lettuce-build started by another gets a token of its own (its children die with it, and it dies
with its parent's).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

#: the environment variable whose value marks the processes started below a command
TOKEN = "LETTUCE_BUILD_LIFELINE"

#: the watcher: polls for its parent's death (a new parent, once orphaned), then kills what holds
#: the token and what it last saw below its parent. Polling, because a parent-death signal is sent
#: when the thread that started a process ends, and commands start processes from worker threads.
#: Both marks, because neither is enough alone: a process that renames itself (Ray's agents, by
#: setproctitle) may write its title over the start of its environment, token included; and an
#: orphan started after the last look below the parent is found only by its token. A process
#: given an environment without the token (a browser the command opened) is left alone.
_WATCHER = """
import os, signal, sys, time
parent, mark, me = int(sys.argv[1]), sys.argv[2].encode(), os.getpid()

def processes():
    # pid -> (parent pid, start time): the start time tells a process from a later one with its pid
    found = {}
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            found[int(entry)] = (int(fields[1]), fields[19])
        except (OSError, ValueError, IndexError):
            pass
    return found

def below(roots, table):
    # every process below the roots: pid -> start time
    children = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = {}, list(roots)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found and child != me:
                found[child] = table[child][1]
                todo.append(child)
    return found

seen, looked = {}, 0.0
while os.getppid() == parent:
    if time.monotonic() - looked > 1:
        seen.update(below([parent], processes()))
        looked = time.monotonic()
    time.sleep(0.25)

def marked(pid):
    # True: it holds the token; False: an environment without it (given so, to outlive us);
    # None: none to read, or written over (its first entry is no NAME=value)
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            held = environ.read()
    except OSError:
        return None
    first = held.split(b"\\0", 1)[0]
    return True if mark in held else False if b"=" in first.lstrip(b" ")[1:] else None

for _ in range(3):  # a process may start another while the first pass kills
    table = processes()
    below_us = {pid for pid, start in seen.items() if table.get(pid, (0, None))[1] == start}
    below_us |= set(below(below_us, table))
    for pid in table:
        if pid != me and (marked(pid) or (pid in below_us and marked(pid) is None)):
            try:
                os.kill(pid, signal.SIGKILL)
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


@contextmanager
def outliving() -> Iterator[None]:
    """The processes started inside live on after the command (a browser it opened for the user):
    they are started without the token. Not for threads that start processes meanwhile."""
    token = os.environ.pop(TOKEN, None)
    try:
        yield
    finally:
        if token is not None:
            os.environ[TOKEN] = token
