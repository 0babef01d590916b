"""`lettuce-build merge`: shard folders joined into the build one process would have made.

Each shard ran every stage on its slice, the injecting stage for its part of the first wave
only (see balance.py), so the shards' caches hold every response the whole build asks for but
those of later waves, which only a view of every item can tell are needed. The merge checks
that the folders are all the shards of one build (same recipe, every shard once, every work
item once), joins their caches, and runs the build again over all the items in their original
order with the recipe's backend: balancing sees every item, the model is asked only for what no
shard's cache holds (its engine starts only then), and the merged dataset, failures, manifest
and summary are those of the unsharded build.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lettuce_build.builds.running.run import BuildSummary, run_build
from lettuce_build.builds.settings.recipe import RECIPE_FILE, Recipe
from lettuce_build.builds.settings.shards import check_complete, check_same_settings
from lettuce_build.builds.storage.folder import BuildDir, Manifest
from lettuce_build.builds.storage.work import Replay
from lettuce_build.core.errors import ShardError
from lettuce_build.core.paths import check_writable
from lettuce_build.core.seen_keys import SeenKeys
from lettuce_build.llm.cache import RequestCache
from lettuce_build.llm.protocol import Backend

#: recipe settings that may differ between shards of one build: they change where and how
#: fast a shard runs, never what it writes
PER_SHARD = {
    "out",
    "shard",
    "batch_size",
    "concurrency",
    "request_timeout",
    "max_retries",
    "max_provider_failures",
    "rpm",
    "tpm",
    "batch",
    "batch_window",
    "batch_max_requests",
    "batch_max_bytes",
    "batch_poll_seconds",
    "price_per_mtok",
    "batch_discount",
    "max_cost",
    "executor",
    "ray_address",
    "ray_actors",
}


@dataclass
class ShardFolder:
    build: BuildDir
    manifest: Manifest
    recipe: Recipe

    @property
    def name(self) -> str:
        return str(self.build.path)


def merge_builds(folders: Sequence[Path], out: Path, backend: Backend | None = None) -> BuildSummary:
    """Join the shard folders into ``out``; raises `ShardError` naming what does not fit.
    ``backend``: instead of the one the shards' recipe names."""
    if not folders:
        raise ShardError("merge: give the shard folders to join")
    out = Path(out).resolve()
    check_writable(out, "--out")
    shards = [read_shard(Path(folder).resolve()) for folder in folders]
    if any(shard.build.path == out for shard in shards):
        raise ShardError(f"merge: --out {out} is one of the shards; choose a new folder")
    recipe = check_same_build(shards)
    check_items(shards)
    record = shards[0].manifest.shard
    assert record is not None  # read_shard checked
    cache = RequestCache.in_build(out)
    try:
        for shard in shards:
            if shard.build.cache_path.exists():  # a shard that held no item asked nothing
                cache.absorb(shard.build.cache_path)
    finally:
        cache.close()
    recipe = recipe.model_copy(update={"out": out, "shard": None})
    replay = Replay(
        items=lambda: (item for _, _, item in _in_order(shards)),
        documents=record.documents,
        skipped=dict(record.skipped),
        sources=[shard.name for shard in shards],
    )
    # the recipe's backend and judges, as the shards' were (an engine starts only on a cache miss)
    summary = run_build(recipe, backend, replay=replay)
    return summary


def read_shard(folder: Path) -> ShardFolder:
    build = BuildDir(folder)
    manifest = build.read_manifest()
    if manifest.shard is None:
        raise ShardError(f"{folder}: not a shard (built without --shard); merge joins shard folders")
    if manifest.status != "finished":
        raise ShardError(
            f"{folder}: shard {manifest.shard.shard} has not finished (status {manifest.status}); "
            "re-run its command: it resumes from its cache"
        )
    recipe_file = folder / RECIPE_FILE
    if not recipe_file.exists():
        raise ShardError(f"{folder}: no {RECIPE_FILE}; shards are built with `lettuce-build build --shard`")
    return ShardFolder(build, manifest, Recipe.read(recipe_file))


def check_same_build(shards: list[ShardFolder]) -> Recipe:
    """The recipe the shards share, once every shard of it is given exactly once."""
    check_same_settings({shard.name: _settings(shard.recipe) for shard in shards})
    records = {shard.name: shard.manifest.shard for shard in shards if shard.manifest.shard}
    check_complete({name: record.shard for name, record in records.items()})
    totals = {name: record.total_items for name, record in records.items()}
    if len(set(totals.values())) > 1:
        raise ShardError(
            f"merge: the shards read different inputs (work items: {totals}); rebuild them from one input"
        )
    return shards[0].recipe


def check_items(shards: list[ShardFolder]) -> None:
    """That the shards hold every work item of the build exactly once, by position and by key:
    read once, in the unsharded build's order, keeping only the keys' digests (the merge reads
    them again as it builds)."""
    record = shards[0].manifest.shard
    assert record is not None
    total, keys = record.total_items, SeenKeys()
    repeated: list[Any] = []
    for shard in shards:  # each file in the build's order first: merged, a swap looks like a gap
        for _ in _positioned(shard):
            pass
    expected, holder = 0, ""
    for position, name, item in _in_order(shards):
        if position < expected:
            raise ShardError(f"merge: work item {item.get('key')!r} is in {holder} and in {name}")
        if position > expected or position >= total:
            missing = list(range(expected, min(position, total)))
            raise ShardError(
                f"merge: {max(len(missing), 1)} of {total} work items are in no shard "
                f"(positions {missing[:5]}); was a shard's items.jsonl changed?"
            )
        if not keys.add(str(item["key"])) and len(repeated) < 3:
            repeated.append(item["key"])
        expected, holder = position + 1, name
    if expected < total:
        missing = list(range(expected, total))
        raise ShardError(
            f"merge: {len(missing)} of {total} work items are in no shard "
            f"(positions {missing[:5]}); was a shard's items.jsonl changed?"
        )
    if repeated:
        raise ShardError(f"merge: work item key(s) {repeated} appear more than once")


def _in_order(shards: list[ShardFolder]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(position, shard, item) of every shard's work items in the unsharded build's order: each
    shard's file is in that order, so they are merged as they are read."""
    return heapq.merge(*(_positioned(shard) for shard in shards), key=lambda placed: placed[0])


def _positioned(shard: ShardFolder) -> Iterator[tuple[int, str, dict[str, Any]]]:
    last = -1
    for position, item in shard.build.iter_items():
        if position <= last:
            raise ShardError(
                f"merge: {shard.name}'s work items are out of order at position {position}; "
                "was its items.jsonl changed?"
            )
        last = position
        yield position, shard.name, item


def _settings(recipe: Recipe) -> dict[str, Any]:
    return recipe.model_dump(mode="json", exclude=PER_SHARD)
