"""The last step of a build: finished rows made into checked samples, batch by batch.

Each row becomes a `HallucinationSample` (the source says how: `Source.sample`) and is checked
(`check_sample`); one that fails its check is a failure row of the ``assemble`` stage, never a
sample. Each split is a file beside the work items, reused by a re-run of the same build (named
for the finished rows and the package's code).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from datasets import Dataset, DatasetDict, Features, Value
from datasets.arrow_writer import ArrowWriter
from pydantic import BaseModel, ConfigDict

from lettuce_build.builds.storage.output import ROW_GROUP_BYTES
from lettuce_build.core.memory import pages_released
from lettuce_build.core.schema import (
    CATEGORY_FEATURE,
    FEATURES,
    SPLITS,
    HallucinationSample,
    check_sample,
    row_to_sample,
    sample_to_row,
)
from lettuce_build.core.version import code_fingerprint
from lettuce_build.engine.columns import arrow_column, batch_rows
from lettuce_build.engine.records import FailureRow
from lettuce_build.sources.base import Source

ASSEMBLE_STAGE = "assemble"
#: rows made into samples at a time: each is a pydantic model, checked, then a row (about 8 KB
#: of Python objects a row: at 4,096 rows a step this was a build's peak of memory at 10,000 items)
SAMPLE_BATCH = 1024
_FAILURE = "_failure"  # a FailureRow as JSON for a row that is no sample, else null


class Assembled(BaseModel):
    """The samples of a build, by split, and what the summary says of them."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    splits: DatasetDict
    invalid: list[FailureRow]
    by_category: dict[str, int]
    hallucinated: int
    example: HallucinationSample | None

    @property
    def samples(self) -> int:
        return sum(len(split) for split in self.splits.values())


def assemble(source: Source, finished: Dataset, work: Path) -> Assembled:
    """``finished`` (the rows after the last stage) as samples by split, each split a file in
    ``work`` (kept for a re-run of the same build)."""
    if len(finished) == 0:  # no rows: no split files
        return Assembled(splits=DatasetDict(), invalid=[], by_category={}, hallucinated=0, example=None)
    name = hashlib.sha256(
        json.dumps([finished._fingerprint, source.name, code_fingerprint()]).encode()
    ).hexdigest()[:32]
    paths = {split: work / f"assembled-{name}-{split}.arrow" for split in SPLITS}
    if all(path.exists() for path in paths.values()):
        for path in paths.values():
            os.utime(path)  # still in use (see builds/items.prune)
    else:
        _write_splits(source, finished, paths)
    files = {split: Dataset.from_file(str(path)) for split, path in paths.items()}
    with pages_released(*files.values()):  # the columns read here touch pages all over the files
        return _assembled({split: made for split, made in files.items() if len(made)})


def _assembled(files: dict[str, Dataset]) -> Assembled:
    """The splits' files as samples, the failure rows among them and their figures."""
    splits = DatasetDict()
    invalid: list[FailureRow] = []
    for split, made in files.items():
        failed = made.data.column(_FAILURE)
        if failed.null_count < len(failed):  # else the split is its file as it is, not a selection of it
            invalid += [FailureRow.model_validate_json(raw) for raw in failed.drop_null().to_pylist()]
            made = made.select(np.flatnonzero(pc.is_null(failed).to_numpy(zero_copy_only=False)))
        splits[split] = made.remove_columns(_FAILURE)
    # counted by Arrow: a million samples are never a Python list of their categories
    categories: Counter[int | None] = Counter()
    for split in splits.values():
        counts = pc.value_counts(arrow_column(split, "category"))
        categories.update(
            dict(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist(), strict=True))
        )
    return Assembled(
        splits=splits,
        invalid=invalid,
        by_category={
            "(clean)" if c is None else CATEGORY_FEATURE.int2str(c): n for c, n in categories.items()
        },
        hallucinated=sum(n for c, n in categories.items() if c is not None),
        example=_example(splits),
    )


def _example(splits: DatasetDict) -> HallucinationSample | None:
    """The summary's example: the first hallucinated sample, or the first sample."""
    for split in splits.values():
        labelled = pc.index(pc.is_valid(arrow_column(split, "category")), True).as_py()
        if labelled >= 0:
            return row_to_sample(split[labelled])
    first = next((split for split in splits.values() if len(split)), None)
    return None if first is None else row_to_sample(first[0])


def _write_splits(source: Source, finished: Dataset, paths: dict[str, Path]) -> None:
    """One pass over ``finished`` in its order, each batch's samples written to their split's
    file. In file order because a small split's rows are spread over all of ``finished``: read
    as a selection of their own, every batch of them would touch pages across every work file."""
    features = Features({**FEATURES, _FAILURE: Value("string")})
    staged = {split: path.with_suffix(".tmp") for split, path in paths.items()}
    with ExitStack() as open_writers, pages_released(finished):
        writers = {
            split: _Gathered(open_writers.enter_context(ArrowWriter(path=str(path), features=features)))
            for split, path in staged.items()
        }
        for batch in finished.iter(batch_size=SAMPLE_BATCH):
            made = pa.Table.from_pydict(_samples(source, batch), schema=features.arrow_schema)
            where = pa.array(batch["split"], pa.string())
            for split, writer in writers.items():
                writer.add(made.filter(pc.equal(where, split)))
            if sum(writer.bytes for writer in writers.values()) >= ROW_GROUP_BYTES:
                max(writers.values(), key=lambda writer: writer.bytes).write()
        for writer in writers.values():
            writer.finalize()
    for split, path in staged.items():
        path.replace(paths[split])  # a run stopped before the last of these writes them all again


class _Gathered:
    """A split's writer that writes its rows in record batches gathered over many steps. Written
    a step at a time, a small split was hundreds of batches of a few dozen rows, and reading a
    file's size (`datasets` does before it saves or shards one) touches every batch: the pages
    around each, a million items' worth of them at once (measured: 92 MB of a 300,000-item
    build's files read in for that alone). The splits hold `ROW_GROUP_BYTES` between them, the
    one holding most written when they reach it (each holding that much, three splits of a
    million items held 24 MB)."""

    def __init__(self, writer: ArrowWriter) -> None:
        self.writer = writer
        self.held: list[pa.Table] = []
        self.bytes = 0

    def add(self, table: pa.Table) -> None:
        self.held.append(table)
        self.bytes += table.nbytes  # of a table in memory: nothing is read

    def write(self) -> None:
        if self.held:
            table = pa.concat_tables(self.held).combine_chunks()
            self.writer.write_table(table, writer_batch_size=table.num_rows)  # (its default: 1,000)
        self.held, self.bytes = [], 0

    def finalize(self) -> None:
        self.write()
        self.writer.finalize()


def _samples(source: Source, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
    rows = batch_rows(batch)
    out: dict[str, list[Any]] = {name: [] for name in [*FEATURES, _FAILURE]}
    for row in rows:
        sample = source.sample(row)
        # the work item's key names the sample wherever it goes (a review's verdict, an export)
        sample.metadata["key"] = row["key"]
        violations = check_sample(sample)
        made = sample_to_row(sample) if not violations else dict.fromkeys(FEATURES)
        made[_FAILURE] = None
        if violations:
            made[_FAILURE] = FailureRow(
                key=row["key"],
                stage=ASSEMBLE_STAGE,
                reason=violations[0].reason,
                detail="; ".join(str(v) for v in violations),
                attempt=0,
                raw_excerpt=json.dumps(sample_to_row(sample))[:300],
            ).model_dump_json()
        for column, value in made.items():
            out[column].append(value)
    return out
