"""`lettuce-build squeez` stops when asked: Ctrl-C in the middle of phase 4 (a tool call of
repository code still running in its sandbox) ends the command within seconds with one line and
status 130, and leaves no process of the call behind."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lettuce_build.squeez.sandbox import detect_isolation

from ..support.gitrepos import make_fix_repo
from ..support.processes import processes_matching

ISOLATION = detect_isolation()
#: a test that takes two minutes: phase 4 runs it (a test_output call) while the signal comes
SLOW_CALL = "tests/test_slow.py::test_waits_for_ctrl_c"
SLOW_TEST = "import time\n\n\ndef test_waits_for_ctrl_c():\n    time.sleep(119)\n    assert False\n"


@pytest.mark.skipif(
    ISOLATION.mode != "bwrap", reason=f"repository code runs only in bubblewrap; {ISOLATION.note}"
)
def test_ctrl_c_in_phase_4_ends_squeez_in_seconds_with_one_line_and_leaves_no_process(
    tmp_path, offline_wheels
):
    files = {"slow/__init__.py": "def compute(v):\n    return v\n", "tests/test_slow.py": SLOW_TEST}
    fixed = {"slow/__init__.py": "def compute(v):\n    return v + 1\n"}
    info = make_fix_repo(tmp_path / "src" / "acme" / "slow", files, fixed)
    instance = {
        "instance_id": "acme__slow-1",
        "repo": "acme/slow",
        **info,
        "problem_statement": "`compute` is off by one in slow/__init__.py.",
        "FAIL_TO_PASS": json.dumps([SLOW_CALL]),
    }
    (tmp_path / "instances.jsonl").write_text(json.dumps(instance) + "\n")
    command = [str(Path(sys.executable).parent / "lettuce-build"), "squeez", "--phase", "1", "2", "3", "4"]
    command += ["--output-dir", "out", "--instances", "instances.jsonl", "--seed", "0"]
    command += [
        "--repo-url",
        f"file://{tmp_path}/src/{{repo}}",
        "--offline",
        "--find-links",
        str(offline_wheels),
    ]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    squeez = subprocess.Popen(command, cwd=tmp_path, start_new_session=True, **pipes)
    deadline = time.monotonic() + 120
    while not processes_matching(SLOW_CALL) and time.monotonic() < deadline:
        if squeez.poll() is not None:
            pytest.fail(f"squeez ended before its slow call: {squeez.stderr.read()[-2000:]}")
        time.sleep(0.1)
    time.sleep(1.0)  # the slow test is running in its sandbox
    asked = time.monotonic()
    os.killpg(squeez.pid, signal.SIGINT)  # as Ctrl-C does: to the terminal's process group
    _, err = squeez.communicate(timeout=60)
    took = time.monotonic() - asked
    assert squeez.returncode == 130, err[-2000:]
    assert took < 10, f"it took {took:.1f} s to stop"
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1] == "interrupted: all that was finished is kept; run the same command to continue"
    assert "Traceback" not in err
    time.sleep(0.5)
    assert processes_matching(SLOW_CALL) == [] and processes_matching(str(tmp_path)) == []  # its sandbox too
