"""Network peers for the sandbox tests: a TCP listener on this host that counts what reaches it,
and a test host of the tests' own (a network namespace on a veth pair, the machine's only
other host) serving a package index over HTTP, as PyPI or a mirror would."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lettuce_build.squeez.usernet import host_addresses

_NUMBERS = itertools.count(1)


class Listener:
    """Accepts TCP connections on ``host`` (a free port) in a thread and counts them."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.socket = socket.create_server((host, 0))
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.socket.close()


def reached(output: str) -> bool:
    """Whether a connection attempt printed by the tests' probes got through."""
    return any(line.startswith("REACHED") for line in output.splitlines())


def host_ipv4() -> str:
    """This host's first non-loopback IPv4 address."""
    return host_addresses()[0]


def simple_index(wheels: Path, root: Path) -> Path:
    """A PEP 503 index of the wheels in ``wheels``: ``root/simple/<name>/`` and ``root/files/``."""
    shutil.copytree(wheels, root / "files", dirs_exist_ok=True)
    names: dict[str, list[str]] = {}
    for wheel in sorted(p.name for p in (root / "files").glob("*.whl")):
        names.setdefault(re.sub(r"[-_.]+", "-", wheel.split("-")[0]).lower(), []).append(wheel)
    for name, files in names.items():
        page = root / "simple" / name / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        links = "".join(f'<a href="/files/{f}">{f}</a>\n' for f in files)
        page.write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
    return root


def can_make_test_hosts() -> bool:
    return os.geteuid() == 0 and shutil.which("ip") is not None


@contextmanager
def serving_host(serve: Path) -> Iterator[str]:
    """A host of the tests' own: a network namespace joined to this one by a veth pair
    (198.18.N.1 here, 198.18.N.2 there), serving ``serve`` over HTTP on port 8080; yields its
    base URL. Removed afterwards."""
    number = next(_NUMBERS) + os.getpid() % 200
    name, outer, inner = f"lbth{os.getpid()}x{number}", f"lbo{number}", f"lbi{number}"
    here, there = f"198.18.{number}.1", f"198.18.{number}.2"
    steps = [
        ["ip", "netns", "add", name],
        ["ip", "link", "add", outer, "type", "veth", "peer", "name", inner],
        ["ip", "link", "set", inner, "netns", name],
        ["ip", "addr", "add", f"{here}/30", "dev", outer],
        ["ip", "link", "set", outer, "up"],
        ["ip", "netns", "exec", name, "ip", "addr", "add", f"{there}/30", "dev", inner],
        ["ip", "netns", "exec", name, "ip", "link", "set", inner, "up"],
        ["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"],
    ]
    server = None
    try:
        for step in steps:
            subprocess.run(step, check=True, capture_output=True)
        server = subprocess.Popen(
            ["ip", "netns", "exec", name, sys.executable, "-m", "http.server", "8080"]
            + ["--bind", there, "--directory", str(serve)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection((there, 8080), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield f"http://{there}:8080"
    finally:
        if server is not None:
            server.kill()
            server.wait()
        subprocess.run(["ip", "link", "del", outer], capture_output=True)
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
