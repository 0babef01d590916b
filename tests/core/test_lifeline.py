"""What a command starts dies with it, a SIGKILL of the command included; nothing else does."""

import os
import signal
import subprocess
import sys
import time

from lettuce_build.core.lifeline import TOKEN

from ..support.processes import processes_matching

#: a command that starts two detached processes (a session of their own: no signal to its group
#: reaches them), one of them with an environment of its own making, without the token
_COMMAND = f"""
import os, subprocess, sys, time
from lettuce_build.core.lifeline import children_die_with_this_process
children_die_with_this_process()
subprocess.Popen(["sleep", "921"], start_new_session=True)
foreign = {{k: v for k, v in os.environ.items() if k != "{TOKEN}"}}
stranger = subprocess.Popen(["sleep", "922"], start_new_session=True, env=foreign)
print(stranger.pid, flush=True)
time.sleep(600)
"""


def test_a_command_killed_with_sigkill_takes_what_it_started_with_it_and_nothing_else():
    command = subprocess.Popen([sys.executable, "-c", _COMMAND], stdout=subprocess.PIPE, text=True)
    stranger = int(command.stdout.readline())
    assert processes_matching("sleep 921") and processes_matching("sleep 922")
    command.send_signal(signal.SIGKILL)
    command.wait()
    deadline = time.monotonic() + 5
    while processes_matching("sleep 921") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_matching("sleep 921") == []
    assert [pid for pid, _ in processes_matching("sleep 922")] == [
        stranger
    ]  # not marked as the command's: left alone
    os.kill(stranger, signal.SIGKILL)
