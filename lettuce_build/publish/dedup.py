"""`lettuce-build dedup`: any data in our schema with one row of each near-duplicate cluster kept
(core/near_duplicates.py: context and answer both near-duplicates), written as a dataset with
the report of what went; and the contexts a collection's builds hold in two splits, which `push`
refuses."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pyarrow as pa
from datasets import Dataset, DatasetDict
from datasets.arrow_writer import ArrowWriter
from pydantic import BaseModel, Field

from lettuce_build.builds.storage.output import write_output
from lettuce_build.core.errors import OutputError
from lettuce_build.core.near_duplicates import THRESHOLD, DuplicateReport, NearDuplicates, Pair, Signed, sign
from lettuce_build.core.pool import ordered_map
from lettuce_build.core.schema import FEATURES, HallucinationSample, Violation, read_sample, sample_to_row
from lettuce_build.core.tables import PARQUET_BATCH_ROWS, write_atomic
from lettuce_build.view.validate import read_rows

#: the report written beside the deduplicated dataset
REPORT_FILE = "dedup.json"


class DedupResult(BaseModel):
    """What `dedup` read, kept and removed, and the rows it could not read (named, not copied)."""

    read: int
    kept: int
    duplicates: DuplicateReport
    removed: list[str] = Field(default_factory=list)
    unreadable: list[str] = Field(default_factory=list)

    def lines(self, out: Path) -> list[str]:
        found = [f"{self.read} rows read, {self.kept} kept -> {out}"]
        found += self.duplicates.lines()
        if self.unreadable:
            found.append(f"{len(self.unreadable)} rows could not be read and were left out, e.g.:")
            found += [f"  {where}" for where in self.unreadable[:5]]
        return found


def _source(path: Path) -> Path:
    """A build folder's published dataset (its hub/ copy holds the same rows), else the path."""
    return path / "dataset" if (path / "dataset").is_dir() else path


def _samples(source: Path, unreadable: list[str] | None = None) -> Iterator[tuple[str, HallucinationSample]]:
    """(where, sample) of each row of ``source`` in our schema; each row that is not one is
    told to ``unreadable`` (where and why)."""
    for raw in read_rows(source):
        sample = read_sample(raw.data) if raw.data is not None else raw.error
        if sample is None or isinstance(sample, Violation):
            if unreadable is not None:
                unreadable.append(f"{raw.where}: {sample.message if sample else 'unreadable'}")
            continue
        yield raw.where, sample


def dedup(path: Path, out: Path, threshold: float = THRESHOLD) -> DedupResult:
    """Keep one row of each near-duplicate cluster of ``path`` (the test copy where a cluster
    crosses splits, else the first key); write the rest to ``out`` (``dataset/`` and ``hub/``)
    with ``dedup.json``. The rows are read twice, not held: once to find the duplicates, once to
    write the rows kept."""
    if out.resolve() == path.resolve():
        raise OutputError(f"{out}: dedup writes a new dataset; give an --out other than its input")
    near = NearDuplicates(threshold)
    unreadable: list[str] = []
    batches = _batches(_samples(_source(path), unreadable))
    for batch, signed in ordered_map(_sign, batches, alone=ALONE_ROWS):
        near.add_signed([(str(s.metadata.get("key") or where), where, s.split) for where, s in batch], signed)
    removed = near.removed()
    staging = out / ".dedup-staging"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with _SplitFiles(staging) as files:
        for key, (_, sample) in zip(near.keys, _samples(_source(path)), strict=True):
            if key not in removed:
                files.add(sample.split, sample_to_row(sample))
    splits = DatasetDict({split: Dataset.from_file(str(file)) for split, file in sorted(files.paths.items())})
    write_output(splits, out, config_name="default")
    shutil.rmtree(staging, ignore_errors=True)
    result = DedupResult(
        read=len(near.keys),
        kept=len(near.keys) - len(removed),
        duplicates=near.report(),
        removed=sorted(removed),
        unreadable=unreadable,
    )
    write_atomic(out / REPORT_FILE, result.model_dump_json(indent=2))
    return result


#: rows signed in this process before a pool of processes takes over (see core/pool.py)
ALONE_ROWS = 5_000
BATCH_ROWS = 1_000

Rows = list[tuple[str, HallucinationSample]]


def _batches(samples: Iterator[tuple[str, HallucinationSample]]) -> Iterator[Rows]:
    while batch := list(islice(samples, BATCH_ROWS)):
        yield batch


def _sign(batch: Rows) -> Signed:
    return sign([(sample.context, sample.answer) for _, sample in batch])


class _SplitFiles:
    """An Arrow file per split, rows written a batch at a time."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.paths: dict[str, Path] = {}
        self._writers: dict[str, ArrowWriter] = {}
        self._held: dict[str, list[dict[str, Any]]] = {}

    def __enter__(self) -> _SplitFiles:
        return self

    def add(self, split: str, row: dict[str, Any]) -> None:
        if split not in self._writers:
            self.paths[split] = self.folder / f"{len(self.paths)}.arrow"
            self._writers[split] = ArrowWriter(path=str(self.paths[split]), features=FEATURES)
            self._held[split] = []
        held = self._held[split]
        held.append(row)
        if len(held) >= PARQUET_BATCH_ROWS:
            self._write(split)

    def _write(self, split: str) -> None:
        if self._held[split]:
            table = pa.Table.from_pylist(self._held[split], schema=FEATURES.arrow_schema)
            self._writers[split].write_table(table)
        self._held[split] = []

    def __exit__(self, *_: object) -> None:
        for split, writer in self._writers.items():
            self._write(split)
            writer.finalize()


def split_leaks(builds: list[tuple[str, Path]]) -> list[Pair]:
    """Contexts found in two splits (the same or a near-duplicate one) among the rows of
    ``builds`` (a name, and a build folder's published rows or any data in our schema), across
    builds too; keys are ``NAME:KEY``."""
    near = NearDuplicates()
    for source, path in builds:
        if (path / "manifest.json").is_file() and not (path / "dataset").is_dir():
            continue  # a build with no published rows: the push itself says what is wrong
        for where, sample in _samples(_source(path)):  # `validate` and the push name unreadable rows
            key = f"{source}:{sample.metadata.get('key') or where}"
            near.add(key if not near.has(key) else f"{source}:{where}", sample.split, sample.context, "")
    return near.split_leaks
