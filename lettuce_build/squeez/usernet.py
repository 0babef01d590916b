"""User-mode networking for sandboxed steps that need the package index, never the host.

Every sandboxed step has a network namespace of its own (bubblewrap's ``--unshare-net``).
Most steps get nothing but its loopback. A step that needs the outside (an environment build
without ``--offline``, ``curl`` under ``--allow-network``) gets ``pasta`` (Debian's ``passt``)
attached to that namespace: pasta relays the namespace's TCP and UDP through ordinary sockets
of the host, so the step reaches the index as the host would, yet none of the host's own
services:

- its loopback is the namespace's own (``127.0.0.0/8`` inside is not the host's);
- ``--no-map-gw``: the gateway address is not mapped to the host's loopback;
- ``-t none -u none -T none -U none``: no port of either side is forwarded to the other;
- ``-4``: IPv4 only, so nothing link-local of IPv6 (``fe80::/10``) is carried at all;
- before the step starts, the namespace gets ``unreachable`` routes for ``169.254.0.0/16``
  (link-local: cloud metadata endpoints hand out credentials there) and for every IPv4
  address the host holds (a service bound to ``0.0.0.0`` answers on each of them);
- DNS goes to a fixed address that pasta forwards to the host's first resolver
  (``--dns-forward``), so a resolver on the host's loopback keeps working and nothing else
  of the host is reachable through it; abstract Unix sockets belong to network namespaces,
  so the host's are out of reach too.

Why pasta rather than building in two halves (the host downloading wheels, then an offline
build in a namespace with no network): the dependencies of a repository are only known by
running its setup.py, and sdists among them are built by running their code too, so the
host would have to run repository-chosen code to download for it, or the build would need
several rounds. With pasta the build stays one ``uv pip install``, and what it can reach is
decided by the kernel's routes in a namespace only the host configures. slirp4netns would do
the same, but pasta needs no tap set-up of our own and copies the host's addresses (so the
host's own address is local inside). The cost is measured in ``benchmarks/squeez_execution.py``.

Without pasta (or ``nsenter``/``ip``), steps that need the network are skipped with a reason
that says what to install; they never run on the host's network.
"""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from lettuce_build.core.errors import UserNetError

#: the address the sandbox's resolv.conf names; pasta forwards DNS sent there to the host's resolver
DNS_FORWARD = "198.51.100.53"
LINK_LOCAL = "169.254.0.0/16"
PASTA_OPTIONS: tuple[str, ...] = ("--config-net", "--quiet", "-4", "--no-map-gw", "-t", "none", "-u", "none")
PASTA_OPTIONS += ("-T", "none", "-U", "none", "--dns-forward", DNS_FORWARD)
INSTALL_HINT = "install Debian's passt package (pasta) for user-mode networking"


def missing_tools() -> list[str]:
    """The commands user-mode networking needs that this machine lacks."""
    return [tool for tool in ("pasta", "nsenter", "ip", "setpriv") if shutil.which(tool) is None]


def host_addresses() -> list[str]:
    """Every IPv4 address of this host's interfaces, loopback ones aside (inside the sandbox,
    127.0.0.0/8 is the namespace's own)."""
    listed = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True)
    found = []
    for line in listed.stdout.splitlines():
        fields = line.split()
        if "inet" in fields:
            address = ipaddress.ip_interface(fields[fields.index("inet") + 1]).ip
            if not address.is_loopback:
                found.append(str(address))
    return found


def blocked_routes() -> list[str]:
    """`ip -batch` lines that make link-local and the host's own addresses unreachable."""
    return [f"route add unreachable {LINK_LOCAL}"] + [
        f"route add unreachable {address}/32" for address in host_addresses()
    ]


def resolv_conf() -> str:
    return f"nameserver {DNS_FORWARD}\n"


class UserNetwork:
    """pasta attached to the network namespace of a sandbox's first process (``pid``), and that
    namespace's routes closed to the host; `close` stops pasta. Its pid file and errors are kept
    under ``state``."""

    def __init__(self, pid: int, state: Path) -> None:
        self.pid = pid
        # in the sandbox's state folder, not /tmp: a SIGKILL of the command leaves it no time to clean up
        self._folder = Path(tempfile.mkdtemp(prefix="pasta-", dir=state))
        self._pasta: subprocess.Popen[bytes] | None = None

    def attach(self) -> UserNetwork:
        # The namespaces are opened here and handed down as descriptors: bubblewrap makes its
        # process non-dumpable, so pasta (which keeps few capabilities) could not open them by
        # their /proc path. As root, bubblewrap makes no user namespace, and pasta, which would
        # change to nobody first, stays root (it isolates itself once the namespace is set up);
        # otherwise both must join the user namespace bubblewrap made.
        net = os.open(f"/proc/{self.pid}/ns/net", os.O_RDONLY)
        user = None if os.geteuid() == 0 else os.open(f"/proc/{self.pid}/ns/user", os.O_RDONLY)
        fds = (net,) if user is None else (net, user)
        try:
            self._await_loopback(net, user, fds)
            self._start_pasta(net, user, fds)
            self._close_routes(net, user, fds)
        except (UserNetError, subprocess.TimeoutExpired) as err:
            self.close()
            raise UserNetError(str(err)) from err
        finally:
            for fd in fds:
                os.close(fd)
        return self

    def _start_pasta(self, net: int, user: int | None, fds: tuple[int, ...]) -> None:
        pidfile, said = self._folder / "pasta.pid", self._folder / "pasta.err"
        pasta = [
            "pasta",
            *PASTA_OPTIONS,
            "--foreground",
            "-P",
            str(pidfile),
            "--netns",
            f"/proc/self/fd/{net}",
        ]
        pasta += ["--runas", "0"] if user is None else ["--userns", f"/proc/self/fd/{user}"]
        # In the foreground and under setpriv's parent-death signal: pasta dies with lettuce-build,
        # however lettuce-build ends (a SIGKILL leaves it no time to stop pasta). A pasta of its
        # own (the default) would outlive it, serving a namespace nobody uses.
        with said.open("w") as errors:
            self._pasta = pasta_process = subprocess.Popen(
                ["setpriv", "--pdeathsig", "KILL", *pasta],
                stdout=subprocess.DEVNULL,
                stderr=errors,
                pass_fds=fds,
            )
        deadline = time.monotonic() + 30
        # pasta writes its pid file once the namespace is configured
        while not (pidfile.exists() and pidfile.read_text().strip()):
            if pasta_process.poll() is not None or time.monotonic() > deadline:
                lines = [line for line in said.read_text().splitlines() if "syslog" not in line]
                raise UserNetError(f"pasta failed: {' '.join(lines)[:200] or 'not ready in 30 s'}")
            time.sleep(0.005)

    def _await_loopback(self, net: int, user: int | None, fds: tuple[int, ...]) -> None:
        """Wait until bubblewrap has set up the namespace's loopback (it adds 127.0.0.1, then
        brings ``lo`` up). bubblewrap reports its first process before that set-up, and pasta
        brings ``lo`` up too, which adds 127.0.0.1 by itself: bubblewrap's own request for the
        address then fails, and the sandbox dies with "loopback: Failed RTM_NEWADDR"."""
        deadline = time.monotonic() + 30
        while True:
            shown = subprocess.run(
                [*_entering(net, user), "--", "ip", "-o", "link", "show", "dev", "lo"],
                capture_output=True,
                text=True,
                timeout=30,
                pass_fds=fds,
            )
            if re.search(r"<[^>]*\bUP\b", shown.stdout):
                return
            if not Path(f"/proc/{self.pid}").exists() or time.monotonic() > deadline:
                raise UserNetError(f"the sandbox's loopback never came up: {shown.stderr.strip()[:200]}")
            time.sleep(0.002)

    def _close_routes(self, net: int, user: int | None, fds: tuple[int, ...]) -> None:
        routes = subprocess.run(
            [*_entering(net, user), "--", "ip", "-batch", "-"],
            input="\n".join(blocked_routes()) + "\n",
            capture_output=True,
            text=True,
            timeout=30,
            pass_fds=fds,
        )
        if routes.returncode != 0:
            raise UserNetError(f"could not close the host to the sandbox: {routes.stderr.strip()[:200]}")

    def close(self) -> None:
        if self._pasta is not None:
            self._pasta.kill()
            self._pasta.wait()
            self._pasta = None
        shutil.rmtree(self._folder, ignore_errors=True)


def _entering(net: int, user: int | None) -> list[str]:
    """nsenter into the namespaces whose descriptors are ``net`` and ``user``."""
    enter = ["nsenter", f"--net=/proc/self/fd/{net}"]
    if user is not None:
        enter += [f"--user=/proc/self/fd/{user}", "--preserve-credentials"]
    return enter
