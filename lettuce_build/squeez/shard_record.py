"""What phase 1 of a sharded squeez run records about its slice (``phase1_shard.json``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from lettuce_build.builds.settings.shards import Shard
from lettuce_build.core.errors import ShardError
from lettuce_build.core.tables import write_atomic

SHARD_FILE = "phase1_shard.json"


class SqueezShard(BaseModel):
    """What phase 1 of a sharded run records, for the merge to check and order by."""

    shard: Shard
    #: instances of the whole run, and each held instance's place among them
    total: int
    positions: dict[str, int]
    #: settings every shard of one run shares (the merge runs phases 7 and 8 with them)
    settings: dict[str, Any]


def write_shard(out: Path, record: SqueezShard) -> None:
    write_atomic(out / SHARD_FILE, record.model_dump_json(indent=2))


def is_squeez_shard(folder: Path) -> bool:
    return (folder / SHARD_FILE).exists()


def read_shard(folder: Path) -> SqueezShard:
    try:
        return SqueezShard.model_validate_json((folder / SHARD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ShardError(f"{folder / SHARD_FILE}: not a squeez shard record ({err})") from err
