"""Shards: a deterministic slice of a build's work items, so n processes split a build with no
coordination (n GPUs, n nodes, a Slurm array).

Every shard reads the whole input (cheap next to the model) and keeps the items whose document
hashes to it, so the items of one document stay together and a shard never depends on which
other shards exist or ran. ``--limit`` applies before the split: shards of a trial run share
out the trial's items.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from lettuce_build.core.errors import ShardError
from lettuce_build.core.seeding import number


class Shard(BaseModel):
    """Shard ``index`` of ``count`` (0-based: ``0/2`` and ``1/2`` make a whole build)."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    count: int = Field(ge=1)

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        """Recipes and manifests write a shard as the command line does: ``"i/n"``."""
        if isinstance(value, str):
            index, slash, count = value.partition("/")
            if not slash or not index.strip().isdigit() or not count.strip().isdigit():
                raise ValueError(f"{value!r}: expected I/N, e.g. 0/4 (shards are numbered from 0)")
            return {"index": int(index), "count": int(count)}
        return value

    @model_serializer
    def _as_text(self) -> str:
        return str(self)

    @model_validator(mode="after")
    def _in_range(self) -> Shard:
        if self.index >= self.count:
            raise ValueError(f"shard {self.index}/{self.count}: the index runs from 0 to {self.count - 1}")
        return self

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, document: str) -> bool:
        """Whether the document's items belong to this shard (a hash, the same on every machine)."""
        return number(document) % self.count == self.index


class ShardRecord(BaseModel):
    """What a shard's manifest says about its slice, for `merge` to check it against the others."""

    shard: Shard
    #: work items of the whole build (every shard loads them all) and how many this shard holds
    total_items: int
    items: int
    #: what loading the whole input found (the same in every shard), for the merged summary
    documents: int
    skipped: dict[str, int]


def slice_items(
    items: Iterable[dict[str, Any]], shard: Shard, document_of: Callable[[dict[str, Any]], str]
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The shard's items in the build's order, each with its position in the whole build, as
    the items stream by."""
    for position, item in enumerate(items):
        if shard.holds(document_of(item)):
            yield position, item


def check_complete(shards: dict[str, Shard]) -> int:
    """That the shards (by folder) are every shard of one split, each once; returns N."""
    counts = {shard.count for shard in shards.values()}
    if len(counts) > 1:
        given = ", ".join(f"{folder} ({shard})" for folder, shard in shards.items())
        raise ShardError(f"merge: shards of different splits: {given}")
    [n] = counts
    seen: dict[int, str] = {}
    for folder, shard in shards.items():
        if shard.index in seen:
            raise ShardError(f"merge: shard {shard} given twice ({seen[shard.index]} and {folder})")
        seen[shard.index] = folder
    missing = sorted(set(range(n)) - set(seen))
    if missing:
        raise ShardError(f"merge: shard(s) {', '.join(f'{i}/{n}' for i in missing)} missing; give all {n}")
    return n


def check_same_settings(settings: dict[str, dict[str, Any]]) -> None:
    """That every shard (by folder) ran with the same settings; names the first that differs."""
    (first, mine), *others = settings.items()
    for folder, theirs in others:
        for name in sorted(mine.keys() | theirs.keys()):
            if mine.get(name) != theirs.get(name):
                raise ShardError(
                    f"{folder}: {name} is {theirs.get(name)!r}, {first} has {mine.get(name)!r}; "
                    "shards of one build share every setting but --shard and --out"
                )
