"""Running third-party repository code so that it can harm nothing but a throwaway copy.

Everything that runs repository code (squeez's python, test and build calls, environment
builds) goes through `Sandbox.argv` and `run_bounded`:

- bubblewrap with new PID, IPC, UTS, cgroup and network namespaces (always: a step that needs
  the package index gets user-mode networking that reaches the outside but never the host,
  see `lettuce_build.squeez.usernet`), its own /proc, a minimal /dev, a private /tmp, and only
  the paths a tool needs: /usr, the Python interpreters in use, a few files of /etc (never the
  host's /etc wholesale: no shadow, no machine secrets) and the tree it works on, mounted at
  ``/repo``;
- as root, the command drops to an unprivileged uid (`setpriv`), so the process limit holds
  and the pristine files it sees through hard links cannot be changed in place, and it keeps
  no capability (bubblewrap keeps only the three setpriv needs, setpriv clears the bounding,
  inheritable and ambient sets, and ``no_new_privs`` stops setuid binaries from regaining
  any). A user namespace would be the usual way to drop root, but its root maps to the host's
  root, so files the host owns would be writable through the hard links; as another user,
  bubblewrap's own user namespace (``--unshare-user``) is used and every capability dropped;
- a scrubbed environment: no tokens, no keys, nothing of the host's variables;
- limits on CPU time, address space, processes, file size and core files, set by ``prlimit``
  on the command line itself (a Python callback between fork and exec is unsafe in a process
  that runs worker threads); a timeout kills the sandbox, and because its PID namespace dies
  with its first process, so does everything it started; ``--die-with-parent`` does the same
  if lettuce-build itself dies;
- a process that detaches itself (a double fork or ``setsid`` daemon, whose parent has exited)
  is killed as soon as it is seen: otherwise one that keeps its output open holds the step
  (``uv`` waits for a setup.py's output to close) until the step's whole timeout runs out.

The tree a command sees is a fresh copy of an export of the repository (no ``.git``): host
git never runs on anything sandboxed code could have written.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from lettuce_build.core.errors import SandboxError, UserNetError
from lettuce_build.squeez.supervision import Captured, collect, first_process
from lettuce_build.squeez.uid_blocks import leased_uid
from lettuce_build.squeez.usernet import INSTALL_HINT, UserNetwork, missing_tools, resolv_conf

SANDBOX_TREE = "/repo"
SANDBOX_HOME = "/tmp/home"
CPU_SECONDS_MARGIN = 5
ADDRESS_SPACE_BYTES = 4 * 1024**3
MAX_FILE_BYTES = 64 * 1024**2
MAX_PROCESSES = 256
#: the files of /etc a tool may need; everything else of the host's /etc stays out
ETC_FILES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "nsswitch.conf",
    "host.conf",
    "mime.types",
    "alternatives",
)
ETC_NETWORK_FILES = ("hosts", "ssl", "ca-certificates", "ca-certificates.conf", "gai.conf")

IsolationMode = Literal["bwrap", "none"]
NetworkMode = Literal["pasta", "none"]


class Limits(BaseModel):
    """Per-process limits of a sandboxed step (the process count is per uid)."""

    cpu_seconds: int
    address_space: int = ADDRESS_SPACE_BYTES
    file_bytes: int = MAX_FILE_BYTES
    processes: int = MAX_PROCESSES

    def prlimit(self) -> list[str]:
        """The command prefix that sets them: the exec'd command inherits them, no callback runs
        between fork and exec. The process count is enforced for the sandbox's unprivileged
        uid (root ignores it, which is why root's commands drop to a uid of their own)."""
        return [
            "prlimit",
            f"--cpu={self.cpu_seconds}",
            f"--as={self.address_space}",
            f"--fsize={self.file_bytes}",
            f"--nproc={self.processes}",
            "--core=0",
            "--",
        ]

    def describe(self) -> str:
        """The limits every step shares (its CPU time follows its own timeout)."""
        return (
            f"limits per process: CPU time the step's timeout + {CPU_SECONDS_MARGIN} s, address "
            f"space {self.address_space // 1024**3} GiB, files {self.file_bytes // 1024**2} MiB, "
            f"{self.processes} processes, no core files"
        )


class Isolation(BaseModel):
    mode: IsolationMode
    #: how steps that need the package index reach it: pasta, or not at all (they are skipped)
    network: NetworkMode = "none"
    note: str


def detect_isolation() -> Isolation:
    """bubblewrap with its namespaces when it works here, and pasta for the steps that need the
    network when that works too: both checked by running them."""
    probe = ["bwrap", "--unshare-pid", "--unshare-net", *_system_mounts(), "--proc", "/proc", "true"]
    if not shutil.which("bwrap") or subprocess.run(probe, capture_output=True).returncode != 0:
        return Isolation(
            mode="none",
            note="no sandbox: bubblewrap is missing or cannot create namespaces here; calls that run "
            "repository code are skipped (install bubblewrap to run them)",
        )
    who = "an unprivileged uid with no capability" if _drops_privileges() else "the current user"
    note = (
        "bubblewrap: own PID/IPC/UTS/cgroup/network namespaces, minimal filesystem, throwaway tree, "
        f"as {who}; detached processes killed; {Limits(cpu_seconds=0).describe()}"
    )
    bwrap_only = Isolation(mode="bwrap", note=note)
    if missing := missing_tools():
        return bwrap_only.model_copy(
            update={"note": f"{note}; network: none ({', '.join(missing)} missing: {INSTALL_HINT})"}
        )
    with tempfile.TemporaryDirectory(prefix="lb-probe-") as folder:
        trial = Isolation(mode="bwrap", network="pasta", note=note)
        captured = Sandbox(trial, Path(folder)).run(["true"], tree=Path(folder), network=True, timeout=30)
    if captured.exit_code != 0:
        why = captured.text.strip().splitlines()[-1:] or ["no output"]
        return bwrap_only.model_copy(update={"note": f"{note}; network: none (pasta failed here: {why[0]})"})
    return trial.model_copy(
        update={
            "note": f"{note}; network: own namespace for every step, and for the steps that need the "
            "index pasta (IPv4, no host loopback, link-local or host address)"
        }
    )


def _system_mounts() -> list[str]:
    """/usr read-only, and /bin, /lib... as the symlinks (merged /usr) or folders they are here."""
    mounts = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64", "lib32", "sbin"):
        if Path(f"/{name}").is_symlink():
            mounts += ["--symlink", os.readlink(f"/{name}"), f"/{name}"]
        elif Path(f"/{name}").is_dir():
            mounts += ["--ro-bind", f"/{name}", f"/{name}"]
    return mounts


def _drops_privileges() -> bool:
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


def sandbox_uid(worker: int) -> int | None:
    """The uid a worker's commands run as, or None when they run as the current user. Each worker
    has its own, so one worker's processes never count against another's limit, and no other
    process on the host has it (see `lettuce_build.squeez.uid_blocks`)."""
    return leased_uid(worker) if _drops_privileges() else None


def scrubbed_env(home: str, path: Sequence[str] = ()) -> dict[str, str]:
    """Only what a tool needs: never a token, a key or any other host variable."""
    return {
        "PATH": os.pathsep.join([*path, "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": home,
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "NO_COLOR": "1",
    }


def interpreter_paths(python: Path | None = None) -> list[Path]:
    """What a Python interpreter needs mounted: its environment and the installation it came from."""
    if python is None:
        return sorted(
            {Path(sys.prefix), Path(sys.base_prefix), Path(os.path.realpath(sys.executable)).parent}
        )
    env = python.parent.parent
    paths = {env, Path(os.path.realpath(python)).parent.parent}
    config = env / "pyvenv.cfg"
    if config.exists():
        for line in config.read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                paths.add(Path(value.strip()).parent)
    return sorted(paths)


class Sandbox:
    """Runs one call in bubblewrap. ``state`` holds the synthetic /etc files."""

    def __init__(self, isolation: Isolation, state: Path) -> None:
        self.isolation = isolation
        self.state = state

    def _etc(self, uid: int | None) -> Path:
        folder = self.state / f"etc-{uid or 'self'}"
        if not (folder / "passwd").exists():
            folder.mkdir(parents=True, exist_ok=True)
            user = uid if uid is not None else os.getuid()
            (folder / "passwd").write_text(
                f"root:x:0:0::/root:/usr/sbin/nologin\nsandbox:x:{user}:{user}::{SANDBOX_HOME}:/usr/sbin/nologin\n"
                "nobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\n"
            )
            (folder / "group").write_text(f"root:x:0:\nsandbox:x:{user}:\nnogroup:x:65534:\n")
            (folder / "resolv.conf").write_text(resolv_conf())
        return folder

    def run(
        self,
        argv: Sequence[str],
        *,
        tree: Path,
        timeout: float,
        read_only: Sequence[Path] = (),
        writable: Sequence[Path] = (),
        network: bool = False,
        uid: int | None = None,
        env_path: Sequence[str] = (),
        extra_env: dict[str, str] | None = None,
        address_space: int = ADDRESS_SPACE_BYTES,
    ) -> Captured:
        """``argv`` run inside the sandbox with ``tree`` at /repo (writable) and the given mounts;
        with ``network``, reaching the outside through pasta, never the host."""
        if self.isolation.mode != "bwrap":
            raise SandboxError("no sandbox on this machine: " + self.isolation.note)
        if network and self.isolation.network != "pasta":
            raise SandboxError(f"no user-mode network on this machine: {INSTALL_HINT}")
        info_read, info_write = os.pipe()
        block_read, block_write = os.pipe()
        wrapped = self._argv(
            argv,
            tree,
            mounts=(read_only, writable),
            network=network,
            uid=uid,
            env=(env_path, extra_env),
            fds=(info_write, block_read),
        )
        limits = Limits(cpu_seconds=int(timeout) + CPU_SECONDS_MARGIN, address_space=address_space)
        try:
            process = _start([*limits.prlimit(), *wrapped], tree, (info_write, block_read))
        finally:
            os.close(info_write)
            os.close(block_read)
        attached: UserNetwork | None = None
        try:
            init = first_process(info_read, process)
            if network and init is not None:
                try:
                    attached = UserNetwork(init, self.state).attach()
                except UserNetError as err:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
                    return Captured(text=f"[sandbox: {err}]", exit_code=-1, timed_out=False, binary=False)
            try:
                os.write(block_write, b"go")  # the namespaces are ready: let the command start
            except BrokenPipeError:
                pass  # bubblewrap already ended; its output says why
            return collect(process, timeout, init)
        finally:
            os.close(info_read)
            os.close(block_write)
            if attached is not None:
                attached.close()

    def _argv(
        self,
        argv: Sequence[str],
        tree: Path,
        *,
        mounts: tuple[Sequence[Path], Sequence[Path]],
        network: bool,
        uid: int | None,
        env: tuple[Sequence[str], dict[str, str] | None],
        fds: tuple[int, int],
    ) -> list[str]:
        """bwrap's command line: ``mounts`` (read-only, writable), ``env`` (PATH's entries, extra
        variables), ``fds`` (bwrap's info and block pipes)."""
        (read_only, writable), (env_path, extra_env), (info_fd, block_fd) = mounts, env, fds
        wrap = ["bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        wrap += ["--unshare-net", "--info-fd", str(info_fd), "--block-fd", str(block_fd)]
        if uid is None:
            wrap += ["--unshare-user", "--cap-drop", "ALL"]
        else:  # setpriv needs these three to drop to the uid, and then drops them too
            wrap += ["--cap-drop", "ALL"]
            for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"):
                wrap += ["--cap-add", cap]
        wrap += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
        wrap += [*_system_mounts(), "--proc", "/proc", "--dev", "/dev"]
        wrap += ["--perms", "1777", "--tmpfs", "/tmp", "--perms", "0777", "--dir", SANDBOX_HOME]
        wrap += ["--perms", "0755", "--dir", "/etc"]
        etc = self._etc(uid)
        for name in ("passwd", "group") + (("resolv.conf",) if network else ()):
            wrap += ["--ro-bind", str(etc / name), f"/etc/{name}"]
        for name in ETC_FILES + (ETC_NETWORK_FILES if network else ()):
            if Path("/etc", name).exists():
                wrap += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
        made: set[str] = {"/", "/usr", "/tmp", SANDBOX_HOME, "/etc", "/proc", "/dev"}
        for path, mode in [*((p, "--ro-bind") for p in read_only), *((p, "--bind") for p in writable)]:
            for parent in reversed(Path(path).parents):  # bwrap would make them 0700: unusable for the uid
                if str(parent) not in made:
                    made.add(str(parent))
                    wrap += ["--perms", "0755", "--dir", str(parent)]
            wrap += [mode, str(path), str(path)]
            made.add(str(path))
        wrap += ["--bind", str(tree), SANDBOX_TREE, "--chdir", SANDBOX_TREE, "--clearenv"]
        for key, value in {**scrubbed_env(SANDBOX_HOME, env_path), **(extra_env or {})}.items():
            wrap += ["--setenv", key, value]
        wrap.append("--")
        if uid is not None:
            wrap += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
            wrap += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
        return wrap + list(argv)


def run_bounded(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> Captured:
    """A host command (git on a bare repository) with the sandbox's limits; read at most
    MAX_READ_BYTES; kill the whole group on timeout."""
    limits = Limits(cpu_seconds=int(timeout) + CPU_SECONDS_MARGIN)
    return collect(_start([*limits.prlimit(), *argv], cwd, (), env), timeout, None)


def _start(
    argv: list[str], cwd: Path, pass_fds: Sequence[int], env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=env if env is not None else scrubbed_env(SANDBOX_HOME),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )
