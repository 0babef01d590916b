"""Running third-party repository code so that it can harm nothing but a throwaway copy.

Everything that runs repository code (squeez's python, test and build calls, environment
builds) goes through `Sandbox.argv` and `run_bounded`:

- bubblewrap with new PID, IPC, UTS, cgroup and (unless asked) network namespaces, its own
  /proc, a minimal /dev, a private /tmp, and only the paths a tool needs: /usr, the Python
  interpreters in use, a few files of /etc (never the host's /etc wholesale: no shadow, no
  machine secrets) and the tree it works on, mounted at ``/repo``;
- as root, the command drops to an unprivileged uid (`setpriv`), so the process limit holds
  and the pristine files it sees through hard links cannot be changed in place;
- a scrubbed environment: no tokens, no keys, nothing of the host's variables;
- rlimits on CPU, memory, processes and file size; a timeout kills the sandbox, and because
  its PID namespace dies with its first process, so does everything it started (``setsid``
  daemons included); ``--die-with-parent`` does the same if lettuce-build itself dies.

The tree a command sees is a fresh copy of an export of the repository (no ``.git``): host
git never runs on anything sandboxed code could have written.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

SANDBOX_TREE = "/repo"
SANDBOX_HOME = "/tmp/home"
CPU_SECONDS_MARGIN = 5
ADDRESS_SPACE_BYTES = 4 * 1024**3
MAX_FILE_BYTES = 64 * 1024**2
MAX_PROCESSES = 256
MAX_READ_BYTES = 4_000_000
#: each worker runs its commands as its own unprivileged uid, so one worker's processes never
#: count against another's limit
SANDBOX_UID_BASE = 61000
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
ETC_NETWORK_FILES = ("resolv.conf", "hosts", "ssl", "ca-certificates", "ca-certificates.conf", "gai.conf")

IsolationMode = Literal["bwrap", "none"]


class Isolation(BaseModel):
    mode: IsolationMode
    note: str


def detect_isolation() -> Isolation:
    """bubblewrap with a PID namespace when it works here (checked by running it), else none."""
    probe = ["bwrap", "--unshare-pid", "--unshare-net", *_system_mounts(), "--proc", "/proc", "true"]
    if shutil.which("bwrap") and subprocess.run(probe, capture_output=True).returncode == 0:
        who = "an unprivileged uid" if _drops_privileges() else "the current user"
        return Isolation(
            mode="bwrap",
            note=f"bubblewrap: own PID/network namespaces, minimal filesystem, throwaway tree, as {who}",
        )
    return Isolation(
        mode="none",
        note="no sandbox: bubblewrap is missing or cannot create namespaces here; calls that run "
        "repository code are skipped (install bubblewrap to run them)",
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
    """The uid a worker's commands run as, or None when they run as the current user."""
    return SANDBOX_UID_BASE + worker if _drops_privileges() else None


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
    """Builds the bubblewrap command line for one call. ``state`` holds the synthetic /etc files."""

    def __init__(self, isolation: Isolation, state: Path) -> None:
        self.isolation = isolation
        self.state = state

    def _passwd(self, uid: int | None) -> Path:
        folder = self.state / f"etc-{uid or 'self'}"
        if not (folder / "passwd").exists():
            folder.mkdir(parents=True, exist_ok=True)
            user = uid if uid is not None else os.getuid()
            (folder / "passwd").write_text(
                f"root:x:0:0::/root:/usr/sbin/nologin\nsandbox:x:{user}:{user}::{SANDBOX_HOME}:/usr/sbin/nologin\n"
                "nobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\n"
            )
            (folder / "group").write_text(f"root:x:0:\nsandbox:x:{user}:\nnogroup:x:65534:\n")
        return folder

    def argv(
        self,
        argv: Sequence[str],
        *,
        tree: Path,
        read_only: Sequence[Path] = (),
        writable: Sequence[Path] = (),
        network: bool = False,
        uid: int | None = None,
        env_path: Sequence[str] = (),
        extra_env: dict[str, str] | None = None,
    ) -> list[str]:
        """``argv`` run inside the sandbox with ``tree`` at /repo (writable) and the given mounts."""
        if self.isolation.mode != "bwrap":
            raise RuntimeError("no sandbox on this machine: " + self.isolation.note)
        wrap = ["bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if not network:
            wrap.append("--unshare-net")
        wrap += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
        wrap += [*_system_mounts(), "--proc", "/proc", "--dev", "/dev"]
        wrap += ["--perms", "1777", "--tmpfs", "/tmp", "--perms", "0777", "--dir", SANDBOX_HOME]
        wrap += ["--perms", "0755", "--dir", "/etc"]
        etc = self._passwd(uid)
        wrap += [
            "--ro-bind",
            str(etc / "passwd"),
            "/etc/passwd",
            "--ro-bind",
            str(etc / "group"),
            "/etc/group",
        ]
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
            wrap += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
        return wrap + list(argv)


def _limits(cpu_seconds: int, address_space: int) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_FILE_BYTES, MAX_FILE_BYTES))
    # Enforced for the sandbox's unprivileged uid (or a non-root user); root ignores it, which
    # is why root's commands drop to a uid of their own.
    resource.setrlimit(resource.RLIMIT_NPROC, (MAX_PROCESSES, MAX_PROCESSES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class Captured(BaseModel):
    text: str
    exit_code: int | None
    timed_out: bool
    binary: bool


def run_bounded(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    limits: bool = True,
    address_space: int = ADDRESS_SPACE_BYTES,
) -> Captured:
    """Run argv with limits; read at most MAX_READ_BYTES; kill the whole group on timeout."""
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=(lambda: _limits(int(timeout) + CPU_SECONDS_MARGIN, address_space)) if limits else None,
    )
    chunks: list[bytes] = []
    kept = 0

    def drain() -> None:  # keep the first bytes, discard the rest so the child never blocks
        nonlocal kept
        assert process.stdout is not None
        while block := process.stdout.read(65536):
            if kept < MAX_READ_BYTES:
                chunks.append(block[: MAX_READ_BYTES - kept])
                kept += len(chunks[-1])

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        # bubblewrap leads this group; with it dies the sandbox's PID namespace, and every
        # process inside it, whatever session or group it moved itself to.
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    reader.join(timeout=5)
    raw = b"".join(chunks)
    return Captured(
        text=raw.decode("utf-8", errors="replace"),
        exit_code=None if timed_out else process.returncode,
        timed_out=timed_out,
        binary=b"\x00" in raw,
    )


def copy_tree(source: Path, target: Path, uid: int | None, *, link: bool = True) -> Path:
    """A throwaway copy of a pristine tree for one sandboxed command.

    With an unprivileged ``uid`` the files are hard links (cheap): the folders belong to the
    uid, so it may add, remove and replace files, while the linked files stay root's and
    cannot be changed in place. Otherwise (or with ``link=False``, for builds that rewrite
    files in place) the files are copied, and given to the uid.
    """
    if uid is None or not link:
        shutil.copytree(source, target, symlinks=True)
        if uid is not None:
            for folder, dirs, names in os.walk(target):
                for name in [*dirs, *names, "."]:
                    os.lchown(Path(folder) / name, uid, uid)
        return target
    for folder, dirs, names in os.walk(source):
        relative = Path(folder).relative_to(source)
        destination = target / relative
        destination.mkdir(parents=True, exist_ok=relative == Path("."))
        os.chown(destination, uid, uid)
        for name in names + [d for d in dirs if (Path(folder) / d).is_symlink()]:
            src = Path(folder) / name
            if src.is_symlink():
                os.symlink(os.readlink(src), destination / name)
            else:
                os.link(src, destination / name)
        dirs[:] = [d for d in dirs if not (Path(folder) / d).is_symlink()]
    return target


def unlink_copies(tree: Path, paths: Sequence[str]) -> None:
    """Replace hard-linked files by private copies before the host itself edits them."""
    for path in paths:
        file = tree / path
        if file.is_file() and not file.is_symlink() and file.stat().st_nlink > 1:
            data = file.read_bytes()
            mode = file.stat().st_mode
            file.unlink()
            file.write_bytes(data)
            file.chmod(mode)
