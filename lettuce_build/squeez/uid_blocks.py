"""The unprivileged uids a process's sandboxed commands run as, leased so that two runs on one host
never share one.

The process limit of a sandbox (``prlimit --nproc``) counts every process of its uid, host-wide,
and a process may signal any other of its uid. A fixed uid per worker number would let two squeez
runs on one host (two shells, two Slurm tasks, two test workers) count against each other's limit
and reach each other's processes. So each process leases a block of uids the first time it needs
one: an exclusive ``flock`` on the block's lock file, held until the process exits, which the
kernel releases even when the process is killed.
"""

from __future__ import annotations

import fcntl
import os
import stat
import threading
from pathlib import Path

from lettuce_build.core.errors import SandboxError

#: the first uid handed out; blocks stay below 65534 (nobody), inside the 16-bit range a
#: container's user namespace maps
SANDBOX_UID_BASE = 61000
#: uids in one process's block: worker ``w`` runs as the block's ``w % UIDS_PER_BLOCK``-th
UIDS_PER_BLOCK = 64
BLOCKS = 70
#: root-owned, where no other user can place a link
LEASE_FOLDER = Path("/run/lettuce-build-uids")

_lock = threading.Lock()
_leased: int | None = None


def leased_uid(worker: int) -> int:
    """The uid ``worker``'s commands run as in this process (leasing the process's block the first
    time). Only root hands out uids: it alone can drop to them."""
    return SANDBOX_UID_BASE + _block() * UIDS_PER_BLOCK + worker % UIDS_PER_BLOCK


def _block() -> int:
    global _leased
    with _lock:
        if _leased is None:
            try:
                _leased = _lease(_lease_folder())
            except OSError as err:  # a read-only /run, say: one line, not a traceback
                raise SandboxError(f"{LEASE_FOLDER}: cannot lease sandbox uids ({err.strerror})") from None
        return _leased


def _lease_folder() -> Path:
    LEASE_FOLDER.mkdir(mode=0o700, exist_ok=True)
    seen = os.lstat(LEASE_FOLDER)
    if not stat.S_ISDIR(seen.st_mode) or seen.st_uid != os.geteuid():
        raise SandboxError(f"{LEASE_FOLDER}: expected a folder of this user's, found something else")
    return LEASE_FOLDER


def _lease(folder: Path) -> int:
    for block in range(BLOCKS):
        # never closed: the lease lasts as long as the process
        handle = os.open(folder / f"{block}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(handle)
            continue
        return block
    raise SandboxError(f"every one of the {BLOCKS} sandbox uid blocks is held by a running process")
