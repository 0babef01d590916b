"""Sandbox uids are leased per process: two runs on one host never share a uid, so neither counts
against the other's process limit nor reaches the other's processes; a killed run's block is
free again."""

import os
import subprocess
import sys

import pytest

from lettuce_build.squeez.uid_blocks import UIDS_PER_BLOCK, leased_uid

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="only root hands out sandbox uids")

HOLDER = """
import sys
from lettuce_build.squeez.uid_blocks import leased_uid
print(leased_uid(0), flush=True)
sys.stdin.read()
"""


def _holder(script: str = HOLDER, *argv: str) -> tuple[subprocess.Popen[str], int]:
    """Another process that leases its block and holds it until its stdin closes; what it printed."""
    holder = subprocess.Popen(
        [sys.executable, "-c", script, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None
    return holder, int(holder.stdout.readline())


def test_each_worker_of_a_process_has_its_own_uid_in_the_process_block():
    uids = [leased_uid(worker) for worker in range(4)]
    assert uids == list(range(uids[0], uids[0] + 4))
    assert leased_uid(UIDS_PER_BLOCK) == uids[0]  # more workers than a block share its uids in turn


def test_two_processes_never_share_a_uid():
    holder, theirs = _holder()
    try:
        ours = range(leased_uid(0), leased_uid(0) + UIDS_PER_BLOCK)
        assert theirs not in ours
    finally:
        holder.kill()
        holder.wait()


def test_a_killed_process_frees_its_block(tmp_path):
    # leases in a folder of the test's own: no other process of the host takes the freed block
    lease = "import sys; from pathlib import Path; from lettuce_build.squeez.uid_blocks import _lease\n"
    lease += "print(_lease(Path(sys.argv[1])), flush=True); sys.stdin.read()"
    holders = [_holder(lease, str(tmp_path)) for _ in range(3)]
    assert [block for _, block in holders] == [0, 1, 2]
    holders[1][0].kill()
    holders[1][0].wait()
    again, block = _holder(lease, str(tmp_path))
    assert block == 1
    for holder, _ in [*holders, (again, block)]:
        holder.kill()
        holder.wait()


def test_a_lease_folder_that_cannot_be_written_is_one_sandbox_error(tmp_path, monkeypatch):
    from lettuce_build.core.errors import SandboxError
    from lettuce_build.squeez import uid_blocks

    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setattr(uid_blocks, "_leased", None)
    monkeypatch.setattr(uid_blocks, "LEASE_FOLDER", blocked / "uids")  # under a file: ENOTDIR
    with pytest.raises(SandboxError, match="cannot lease sandbox uids"):
        uid_blocks.leased_uid(0)
