"""A build's work items, on disk in its work folder before any stage runs: a merge's replay of
items already loaded, a shard's slice of the screened load, or the whole load streamed and
screened. A build and its dry run load them the same way."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from lettuce_build.builds.settings.options import BuildOptions
from lettuce_build.builds.settings.shards import Shard, ShardRecord, slice_items
from lettuce_build.builds.storage.folder import BuildDir, Manifest
from lettuce_build.builds.storage.items import WORK_DIR, StoredItems, load_items, sampled_items, stored_list
from lettuce_build.builds.storage.screening import screened_items
from lettuce_build.core.errors import SourceError
from lettuce_build.core.memory import pages_released
from lettuce_build.engine.columns import dataset_rows
from lettuce_build.sources.base import Source


class Replay(BaseModel):
    """A build made again from work items and responses already at hand: `merge` joins shards
    this way. Nothing is loaded; the backend is asked only for what the cache lacks, and a
    stage that retries failures on a re-run does not (see `ExecutionPlan.replay`)."""

    #: the work items, in the build's order, each time it is called (read as they are stored)
    items: Callable[[], Iterator[dict[str, Any]]]
    documents: int
    skipped: dict[str, int]
    #: the folders the items and responses came from (recorded in the manifest)
    sources: list[str]


def work_items(
    options: BuildOptions,
    source: Source,
    *,
    build: BuildDir,
    manifest: Manifest,
    context_tokens: int | None,
    replay: Replay | None,
    sample: int | None = None,
) -> StoredItems:
    """The build's work items, on disk in the build's work folder: a replay's own, a shard's
    slice (saved with positions for `merge`), or the whole load, streamed; for a dry run's
    ``sample``, a seeded sample of that many, every item counted (screened loads are stored
    whole: screening compares items with each other)."""
    work = build.path / WORK_DIR
    if replay is not None:
        return StoredItems(
            items=stored_list(replay.items(), work), documents=replay.documents, skipped=dict(replay.skipped)
        )
    load_options = options.load_options(context_tokens)
    if sample is not None and options.shard is None and not load_options.screens:
        stored = sampled_items(source, options.input, load_options, work, size=sample, seed=options.seed)
        if stored.made == 0:
            raise _no_items(options, stored.skipped)
        return stored
    stored = screened_items(
        load_items(source, options.input, load_options, work), load_options, source.modality
    )
    if len(stored.items) == 0:
        raise _no_items(options, stored.skipped)
    if options.shard is None:
        return stored
    return _shard_slice(stored, options.shard, source.document_of, build, manifest)


def _shard_slice(
    stored: StoredItems,
    shard: Shard,
    document_of: Callable[[dict[str, Any]], str],
    build: BuildDir,
    manifest: Manifest,
) -> StoredItems:
    """A shard's part of the whole build's stored items, streamed: written with their positions
    (the folder's items.jsonl, for `merge`), then stored from that file as the shard's items."""
    documents: set[str] = set()

    def held() -> Iterator[tuple[int, dict[str, Any]]]:
        for position, item in slice_items(dataset_rows(stored.items), shard, document_of):
            documents.add(document_of(item))
            yield position, item

    with pages_released(stored.items):  # every page of the whole load is read once
        count = build.write_items(held())
    manifest.shard = ShardRecord(
        shard=shard,
        total_items=len(stored.items),
        items=count,
        documents=stored.documents,
        skipped=dict(stored.skipped),
    )
    return StoredItems(
        items=stored_list((item for _, item in build.iter_items()), build.path / WORK_DIR),
        documents=len(documents),
        skipped=dict(stored.skipped),
    )


def _no_items(options: BuildOptions, skipped: Mapping[str, int]) -> SourceError:
    return SourceError(
        f"{options.source}: no work items from {options.input} (skipped: {dict(skipped) or 'nothing'})"
    )
