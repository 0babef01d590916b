"""The sandbox, with real processes: every step has a network namespace of its own; a step that
needs the package index reaches it through pasta and still reaches nothing of the host (its
loopback, its own addresses, link-local); nothing inside keeps a capability; the limits are set
on the command line, so they hold with worker threads; a detached process cannot hold a step."""

import os
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lettuce_build.squeez import usernet
from lettuce_build.squeez.sandbox import Sandbox, detect_isolation, sandbox_uid

from ..support.testhost import Listener, can_make_test_hosts, host_ipv4, reached, serving_host

ISOLATION = detect_isolation()
needs_bwrap = pytest.mark.skipif(ISOLATION.mode != "bwrap", reason="the sandbox needs bubblewrap")
needs_pasta = pytest.mark.skipif(ISOLATION.network != "pasta", reason=ISOLATION.note)
needs_test_host = pytest.mark.skipif(not can_make_test_hosts(), reason="test hosts need root and iproute2")

CONNECT = """
import socket, sys
for target in sys.argv[1:]:
    host, port = target.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
        print("REACHED", target)
    except OSError as err:
        print("UNREACHABLE", target, type(err).__name__)
"""


@pytest.fixture
def run(tmp_path):
    """Runs a command in the sandbox as worker ``worker``, on a throwaway tree of its own."""
    sandbox = Sandbox(ISOLATION, tmp_path / "state")

    def run(argv: list[str], *, network: bool = False, timeout: float = 30, worker: int = 0):
        tree = tmp_path / f"tree-{worker}-{time.monotonic_ns()}"
        tree.mkdir()
        if (uid := sandbox_uid(worker)) is not None:
            os.chown(tree, uid, uid)
        return sandbox.run(argv, tree=tree, network=network, timeout=timeout, uid=sandbox_uid(worker))

    return run


@pytest.fixture
def listeners():
    """A listener on the host's loopback and one on every address (as a service bound to 0.0.0.0)."""
    loopback, everywhere = Listener("127.0.0.1"), Listener("0.0.0.0")
    yield loopback, everywhere
    loopback.close()
    everywhere.close()


def connect(*targets: str) -> list[str]:
    return ["python3", "-c", CONNECT, *targets]


@needs_bwrap
@pytest.mark.parametrize("network", [False, pytest.param(True, marks=needs_pasta)], ids=["none", "pasta"])
def test_no_step_reaches_the_hosts_services(run, listeners, network):
    loopback, everywhere = listeners
    targets = [f"127.0.0.1:{loopback.port}", f"{host_ipv4()}:{everywhere.port}", "169.254.169.254:80"]
    started = time.monotonic()
    captured = run(connect(*targets), network=network)
    assert captured.exit_code == 0, captured.text
    assert captured.text.count("UNREACHABLE") == 3 and not reached(captured.text)
    assert loopback.accepted == everywhere.accepted == 0
    assert time.monotonic() - started < 10  # link-local is refused at once, not timed out


@needs_pasta
@needs_test_host
def test_the_user_mode_network_reaches_other_hosts_but_not_the_hosts_side_of_them(run, tmp_path):
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "hello.txt").write_text("hello from the index\n")
    fetch = "import urllib.request as u, sys; print(u.urlopen(sys.argv[1], timeout=5).read().decode())"
    with serving_host(tmp_path / "www") as url:
        online = run(["python3", "-c", fetch, f"{url}/hello.txt"], network=True)
        offline = run(["python3", "-c", fetch, f"{url}/hello.txt"], network=False)
        here = url.replace(".2:8080", ".1:8080")  # this host's end of the veth pair
        host_side = run(connect(here.removeprefix("http://")), network=True)
    assert "hello from the index" in online.text, online.text
    assert offline.exit_code != 0 and "hello" not in offline.text.replace("hello.txt", "")
    assert "UNREACHABLE" in host_side.text


@needs_bwrap
def test_nothing_inside_keeps_a_capability_or_can_gain_one(run):
    captured = run(["grep", "-E", "^(Cap|NoNewPrivs)", "/proc/self/status"])
    fields = dict(line.split(":\t") for line in captured.text.strip().splitlines())
    assert {name: int(value, 16) for name, value in fields.items() if name.startswith("Cap")} == {
        "CapInh": 0,
        "CapPrm": 0,
        "CapEff": 0,
        "CapBnd": 0,
        "CapAmb": 0,
    }
    assert fields["NoNewPrivs"] == "1"


@needs_bwrap
def test_a_detached_process_keeping_the_output_open_does_not_hold_the_step(run):
    """As a setup.py that starts a daemon holds `uv pip install`: the installer waits for the
    build's output to close, which the daemon keeps open."""
    installer = (
        "import subprocess as s; s.run(['sh', '-c', 'sleep 923 &'], capture_output=True); print('installed')"
    )
    started = time.monotonic()
    captured = run(["python3", "-c", installer], timeout=120)
    assert captured.exit_code == 0 and "installed" in captured.text, captured.text
    assert time.monotonic() - started < 15
    assert not [p for p in Path("/proc").glob("[0-9]*") if _cmdline(p) == "sleep 923"]


def _cmdline(process: Path) -> str:
    try:
        return (process / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


LIMITS = """
import os, subprocess
print(open("/proc/self/limits").read())
try:
    with open("big", "wb") as handle:
        handle.write(b"x" * (65 * 1024 * 1024))
    print("WROTE 65 MiB")
except OSError as err:
    print("FILE REFUSED", err.errno)
started = 0
try:
    for _ in range(300):
        subprocess.Popen(["sleep", "30"])
        started += 1
except OSError:
    print("FORKS REFUSED after", started)
"""


@needs_bwrap
def test_limits_hold_in_each_of_two_worker_threads(run):
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda w: run(["python3", "-c", LIMITS], timeout=20, worker=w), [0, 1]))
    for captured in results:
        limits = {line[:26].strip(): line[26:].split() for line in captured.text.splitlines()[1:17]}
        assert limits["Max cpu time"][:2] == ["25", "25"]
        assert limits["Max file size"][:2] == [str(64 * 1024**2)] * 2
        assert limits["Max core file size"][:2] == ["0", "0"]
        assert limits["Max address space"][:2] == [str(4 * 1024**3)] * 2
        assert "FILE REFUSED 27" in captured.text  # EFBIG
        if sandbox_uid(0) is not None:  # the process count binds a uid other than root
            refused = int(captured.text.split("FORKS REFUSED after")[1].split()[0])
            assert refused < 256


@needs_pasta
@needs_test_host
def test_pasta_attaches_only_once_the_namespace_has_set_up_its_own_loopback(tmp_path):
    """bubblewrap reports its first process before it sets up the loopback. pasta brings ``lo``
    up too, which adds 127.0.0.1, and bubblewrap's own request for it then fails ("loopback:
    Failed RTM_NEWADDR"): one network step in a few hundred died that way, and a failed probe
    turned the whole run's network off. Here the loopback comes up half a second late."""
    holder = subprocess.Popen(["unshare", "--net", "sleep", "60"])
    try:
        own = os.readlink("/proc/self/ns/net")
        while os.readlink(f"/proc/{holder.pid}/ns/net") == own:
            time.sleep(0.01)
        bring_up = ["nsenter", f"--net=/proc/{holder.pid}/ns/net", "ip", "link", "set", "lo", "up"]
        threading.Timer(0.5, subprocess.run, [bring_up]).start()
        started = time.monotonic()
        attached = usernet.UserNetwork(holder.pid, tmp_path).attach()
        waited = time.monotonic() - started
        attached.close()
    finally:
        holder.kill()
        holder.wait()
    assert waited >= 0.5


def test_without_pasta_the_network_is_none_and_the_reason_says_what_to_install(monkeypatch):
    monkeypatch.setattr(usernet.shutil, "which", lambda tool: None if tool == "pasta" else "/usr/bin/" + tool)
    isolation = detect_isolation()
    if isolation.mode != "bwrap":
        pytest.skip("the sandbox needs bubblewrap")
    assert isolation.network == "none" and "passt" in isolation.note
