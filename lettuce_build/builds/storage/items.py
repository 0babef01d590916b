"""A build's work items on disk, in its ``work/`` folder, so the driver never holds them all.

Items are written as they are read, a part file of `PART_ITEMS` at a time, and the stages map
over the memory-mapped parts; each finished pass is kept beside them (`WorkPasses`, the
engine's `PassStore`), and `prune` drops what no run used. A build's
load is kept under a name made of everything that decides it (the source, the input's files by
path, size and modification time, the load options and the package's code) and reused by the
next run of the same build: a re-run neither reads its input again nor rebuilds its items.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pyarrow as pa
from datasets import Dataset, Features, concatenate_datasets
from datasets.arrow_writer import ArrowWriter
from pydantic import BaseModel, ConfigDict

from lettuce_build.core.files import walk_files
from lettuce_build.core.seeding import reservoir
from lettuce_build.core.version import code_fingerprint
from lettuce_build.engine.passes import PassFiles
from lettuce_build.engine.runner import MAP_BATCH
from lettuce_build.sources.base import LoadOptions, Source, Tally

WORK_DIR = "work"
#: items per part file: the most the driver holds while writing them (a whole number of the
#: runner's record batches, which line up with its passes' then)
PART_ITEMS = MAP_BATCH
#: the name items are written under until their content names them (`stored_list`)
SCRATCH_ITEMS = "items-scratch"


class StoredItems(BaseModel):
    """Work items in a folder of part files, and what the load saw."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    items: Dataset
    documents: int = 0
    skipped: dict[str, int] = {}
    #: the items the load made, where ``items`` holds only a sample of them (a dry run's)
    counted: int | None = None

    @property
    def made(self) -> int:
        """How many work items the load made, stored or not."""
        return len(self.items) if self.counted is None else self.counted


def input_signature(input_path: str | None) -> str:
    """What identifies an input: a local file or folder by each file's path, size and
    modification time; anything else (a Hub dataset, the source's default) by its name."""
    path = Path(input_path) if input_path else None
    digest = hashlib.sha256(str(input_path).encode())
    if path is None or not path.exists():
        return digest.hexdigest()
    # a sum of each file's digest, which is the same in any order: a folder of 100,000 files
    # is streamed, never listed and sorted
    total = 0
    for name, info in [(str(path), path.stat())] if path.is_file() else _file_stats(path):
        line = f"{name}\0{info.st_size}\0{info.st_mtime_ns}".encode("utf-8", "surrogateescape")
        total += int.from_bytes(hashlib.sha256(line).digest())
    digest.update(f"{total % 2**256:064x}".encode())
    return digest.hexdigest()


def _file_stats(folder: Path) -> Iterator[tuple[str, os.stat_result]]:
    for entry in walk_files(folder):
        yield entry.path, entry.stat()


def load_items(source: Source, input_path: str | None, options: LoadOptions, work: Path) -> StoredItems:
    """The source's work items in ``work``: the kept ones when the same load was made before."""
    identity = [source.name, input_signature(input_path), options.model_dump(mode="json"), code_fingerprint()]
    name = f"items-{_digest(identity)}"
    tally_file = work / f"{name}.json"
    if tally_file.exists():
        os.utime(tally_file)  # in use, with its parts (see `prune`)
        tally = Tally.model_validate_json(tally_file.read_text())
        return StoredItems(items=_read(work, name), documents=tally.documents, skipped=dict(tally.skipped))
    tally = Tally()
    stored = _store(source.checked_items(input_path, options, tally), work, name)
    tally_file.write_text(tally.model_dump_json())  # written last: a load cut short is made again
    return StoredItems(items=stored, documents=tally.documents, skipped=dict(tally.skipped))


def sampled_items(
    source: Source, input_path: str | None, options: LoadOptions, work: Path, *, size: int, seed: int
) -> StoredItems:
    """A seeded uniform sample of ``size`` of the source's work items in ``work``, and how many
    it made: every item is read, checked and counted as a build's load would, and only the
    sample is kept (a reservoir, in input order), so a dry run of a million rows writes none of
    the others. An input of at most ``size`` items is kept whole."""
    tally = Tally()
    count, rows = reservoir(source.checked_items(input_path, options, tally), size, seed)
    return StoredItems(
        items=stored_list(rows, work), documents=tally.documents, skipped=dict(tally.skipped), counted=count
    )


def stored_list(rows: Iterable[dict[str, Any]], work: Path, features: Features | None = None) -> Dataset:
    """Items (a shard's slice, a merge's joined items, a translation's, as they come) in
    ``work``, under a name made of their content: written once, so a re-run finds its passes
    beside them again. They are written as they come under a scratch name, then named by what
    they held; ``features``: their declared types."""
    digest = hashlib.sha256(code_fingerprint().encode())

    def digested() -> Iterator[dict[str, Any]]:
        for row in rows:
            digest.update(json.dumps(row, sort_keys=True, default=str).encode())
            yield row

    _store(digested(), work, SCRATCH_ITEMS, features)
    name = f"items-{digest.hexdigest()[:32]}"
    marker = work / f"{name}.json"
    if marker.exists():  # made before: its files (and the passes named after them) stay
        for part in _parts(work, SCRATCH_ITEMS):
            part.unlink()
        os.utime(marker)
        return _read(work, name)
    for part in _parts(work, name):
        part.unlink()
    for part in _parts(work, SCRATCH_ITEMS):
        part.rename(work / part.name.replace(SCRATCH_ITEMS, name, 1))
    marker.write_text(Tally().model_dump_json())
    return _read(work, name)


class WorkPasses:
    """The engine's `PassStore` in a build's work folder: ``pass-<name>.arrow`` and its record
    ``pass-<name>.json``; a selection's rows in ``pass-<name>-part-items.arrow`` ("-part-": pruned
    with the record, see `prune`)."""

    def __init__(self, work: Path) -> None:
        self.work = work

    def files(self, name: str) -> PassFiles:
        self.work.mkdir(parents=True, exist_ok=True)
        return PassFiles(
            data=self.work / f"pass-{name}.arrow",
            record=self.work / f"pass-{name}.json",
            selection=self.work / f"pass-{name}-part-items.arrow",
        )

    def used(self, files: PassFiles) -> None:
        os.utime(files.data)  # still in use: `prune` keeps what a run since it started touched
        os.utime(files.record)


def prune(work: Path, since: float) -> None:
    """Remove the files no run since ``since`` used: items and passes of builds made with other
    options or code, which would otherwise pile up in the build folder. Item parts are never
    touched (`datasets` fingerprints a file by its modification time): their ``.json`` is."""
    for file in list(work.iterdir()) if work.exists() else []:
        name, part, _ = file.name.partition("-part-")
        owner = work / f"{name}.json" if part else file
        if not owner.exists() or owner.stat().st_mtime < since:
            file.unlink()


def _store(
    rows: Iterable[dict[str, Any]], work: Path, name: str, features: Features | None = None
) -> Dataset:
    """``rows`` written to ``work`` as part files named ``name``, read back memory-mapped;
    ``features``: their declared types (else each part's are read from its rows)."""
    work.mkdir(parents=True, exist_ok=True)
    for stale in _parts(work, name):
        stale.unlink()
    stream = iter(rows)
    number = 0
    while part := list(islice(stream, PART_ITEMS)):
        path = str(work / f"{name}-part-{number:05d}.arrow")
        with ArrowWriter(path=path, features=features) as writer:
            table = (
                pa.Table.from_pylist(
                    [features.encode_example(row) for row in part], schema=features.arrow_schema
                )
                if features is not None
                else pa.Table.from_pylist(part)
            )
            writer.write_table(table, writer_batch_size=MAP_BATCH)
            writer.finalize()
        number += 1
    return _read(work, name)


def _parts(work: Path, name: str) -> list[Path]:
    return sorted(work.glob(f"{name}-part-*.arrow"))


def _read(work: Path, name: str) -> Dataset:
    parts = [Dataset.from_file(str(p)) for p in _parts(work, name)]
    if not parts:
        return Dataset.from_dict({})
    # a column that is empty in one part and not in another is aligned by `datasets`
    return concatenate_datasets(parts) if len(parts) > 1 else parts[0]


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:32]
