"""`lettuce-build sift` stops when asked: Ctrl-C part-way through the patches ends it at once with
one line and status 130, and writes no half of its outputs."""

import json
import os
import signal
import subprocess
import sys
import time

from .patches import diff, patch

#: enough patches that sifting them takes longer than the test waits
ROWS = 10_000


def test_ctrl_c_while_sifting_ends_it_at_once_with_one_line_and_no_half_written_output(tmp_path):
    added = [
        f"+x{j} = subprocess.run(cmd{j})" if j % 7 == 0 else f"+value_{j} = compute({j})" for j in range(40)
    ]
    with (tmp_path / "tasks.jsonl").open("w") as tasks:
        for i in range(ROWS):
            row = {
                "instance_id": f"django-{i}",
                "repo": "django/django",
                "patch": patch(diff(f"m{i}.py", *added)),
            }
            tasks.write(
                json.dumps({**row, "problem_statement": "It breaks.", "base_commit": "0" * 40}) + "\n"
            )
    command = [sys.executable, "-c", "from lettuce_build.cli import main; main()", "sift"]
    command += ["--instances", str(tmp_path / "tasks.jsonl"), "--no-verified", "--out", str(tmp_path / "out")]
    sift = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    reading(sift.pid, tmp_path / "tasks.jsonl")  # imported, and reading the patches
    assert sift.poll() is None, "it finished before it was asked to stop: give it more rows"
    asked = time.monotonic()
    os.killpg(sift.pid, signal.SIGINT)  # as Ctrl-C does: to the terminal's process group
    _, err = sift.communicate(timeout=30)
    assert sift.returncode == 130 and time.monotonic() - asked < 5, err[-2000:]
    assert err.strip().splitlines()[-1].startswith("interrupted: ") and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def reading(pid: int, path, within: float = 120.0) -> None:
    """Wait until the process has the file open: the command has started on its input (on a
    loaded machine its imports alone may take seconds)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if any(
                os.path.realpath(f"/proc/{pid}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{pid}/fd")
            ):
                return
        except OSError:  # a descriptor closed while it was looked at
            pass
        time.sleep(0.05)
    raise AssertionError(f"{path} was never opened")
