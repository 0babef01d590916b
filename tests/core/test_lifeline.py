"""What a command starts dies with it, a SIGKILL of the command included; nothing else does."""

import os
import signal
import subprocess
import sys
import time

from lettuce_build.core.lifeline import TOKEN

from ..support.processes import processes_matching

#: a command that starts two detached processes (a session of their own: no signal to its group
#: reaches them), one of them meant to outlive it (as a browser it opens for the user)
_COMMAND = """
import subprocess, sys, time
from lettuce_build.core.lifeline import children_die_with_this_process, outliving
children_die_with_this_process()
subprocess.Popen(["sleep", "921"], start_new_session=True)
with outliving():
    stranger = subprocess.Popen(["sleep", "922"], start_new_session=True)
time.sleep(1.5)  # the watcher has looked below the command since
print(stranger.pid, flush=True)
time.sleep(600)
"""


def left_after_killing(command: subprocess.Popen, needle: str) -> list[tuple[int, str]]:
    """SIGKILL ``command``; the processes matching ``needle`` still there 5 s later (none once
    the watcher has done its work)."""
    command.send_signal(signal.SIGKILL)
    command.wait()
    deadline = time.monotonic() + 5
    while processes_matching(needle) and time.monotonic() < deadline:
        time.sleep(0.05)
    return processes_matching(needle)


def test_a_command_killed_with_sigkill_takes_what_it_started_with_it_and_nothing_else():
    command = subprocess.Popen([sys.executable, "-c", _COMMAND], stdout=subprocess.PIPE, text=True)
    stranger = int(command.stdout.readline())
    assert processes_matching("sleep 921") and processes_matching("sleep 922")
    assert left_after_killing(command, "sleep 921") == []
    assert [pid for pid, _ in processes_matching("sleep 922")] == [
        stranger
    ]  # meant to outlive it: left alone
    os.kill(stranger, signal.SIGKILL)


#: a process that writes over its environment, token included, as one that renames itself may
#: (Ray's agents, by setproctitle); it says when it has, then waits
_WIPER = """
import ctypes, sys, time
with open("/proc/self/stat", "rb") as stat:
    fields = stat.read().rsplit(b")", 1)[1].split()
start, end = int(fields[47]), int(fields[48])
ctypes.memset(start, 0, end - start)
print("wiped", flush=True)
time.sleep(600)
"""

#: the wiper's name is made at run time: no other command line holds it
_COMMAND_WITH_WIPER = f"""
import subprocess, sys, time
from lettuce_build.core.lifeline import children_die_with_this_process
children_die_with_this_process()
subprocess.Popen([sys.executable, "-c", {_WIPER!r}, "wiper-" + str(925)], start_new_session=True)
time.sleep(600)
"""


def test_a_process_that_wrote_over_its_environment_dies_with_the_command_too():
    command = subprocess.Popen([sys.executable, "-c", _COMMAND_WITH_WIPER], stdout=subprocess.PIPE, text=True)
    assert command.stdout.readline() == "wiped\n"
    [(wiper, _)] = processes_matching("wiper-925")
    with open(f"/proc/{wiper}/environ", "rb") as environ:
        assert TOKEN.encode() not in environ.read()
    time.sleep(1.5)  # the watcher has looked below the command since
    assert left_after_killing(command, "wiper-925") == []
