"""The `lettuce-build` command: a Ctrl-C while it is still loading (a second or so of imports)
ends it as quietly as one during the command does: one line, status 130, no traceback."""

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from .support.documents import write_readmes


@pytest.mark.parametrize("after", [0.3, 0.6, 1.0, 1.5])
def test_a_ctrl_c_at_any_moment_of_start_up_ends_the_command_with_one_line_and_status_130(tmp_path, after):
    silent = socket.create_server(("127.0.0.1", 0))  # takes connections, never answers
    url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
    docs, out = write_readmes(tmp_path / "docs"), tmp_path / "out"
    command = [sys.executable, "-m", "lettuce_build", "build", "--source", "readme", "--input", str(docs)]
    command += ["--out", str(out), "--backend", "openai", "--base-url", url, "--model", "m"]
    with silent:
        process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, start_new_session=True)
        time.sleep(after)
        os.killpg(process.pid, signal.SIGINT)
        _, printed = process.communicate(timeout=30)
    assert process.returncode == 130, printed[-2000:]
    assert "Traceback" not in printed and "KeyboardInterrupt" not in printed
    assert "interrupted" in printed.strip().splitlines()[-1]
