"""`lettuce-build push` stops when asked: a Ctrl-C (or a scheduler's SIGTERM) while the Hub has
not answered ends it at once, with one line and the shell's status, and no traceback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def silent_hub() -> Iterator[tuple[str, threading.Event]]:
    """A loopback address that takes connections and never answers (a Hub that hangs), and an
    event set once the push has connected."""
    server = socket.create_server(("127.0.0.1", 0))
    connected = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:  # closed: the test is over
                return
            held.append(connection)
            connected.set()

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}", connected
    server.close()
    for connection in held:
        connection.close()


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_push_waiting_on_the_hub_stops_at_once_with_one_line(
    scripted_build: Path, silent_hub: tuple[str, threading.Event], signum: int, status: int
) -> None:
    endpoint, connected = silent_hub
    env = {**os.environ, "HF_ENDPOINT": endpoint, "HF_TOKEN": "hf_test_token_never_sent_anywhere"}
    env.pop("HF_HUB_OFFLINE", None)
    command = [sys.executable, "-m", "lettuce_build", "push", "--source", "readme"]
    command += ["--build", str(scripted_build), "--repo-id", "org/readme"]
    push = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )
    try:
        assert connected.wait(60), "the push never reached the Hub"
        asked = time.monotonic()
        os.killpg(push.pid, signum)  # as Ctrl-C does: to the terminal's process group
        _, err = push.communicate(timeout=30)
    finally:
        if push.poll() is None:
            os.killpg(push.pid, signal.SIGKILL)
    assert push.returncode == status and time.monotonic() - asked < 5, err[-2000:]
    assert err.strip().splitlines()[-1].startswith("interrupted: ") and "Traceback" not in err
