"""The last step of a build: finished rows made into checked samples, batch by batch.

Each row becomes a `HallucinationSample` (the source says how: `Source.sample`) and is checked
(`check_sample`); one that fails its check is a failure row of the ``assemble`` stage, never a
sample. Like the stages, this is a `Dataset.map`: on disk beside the work items, and reused by a
re-run of the same build (it is named for the finished rows and the package's code).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from typing import Any

import numpy as np
import pyarrow.compute as pc
from datasets import Dataset, DatasetDict, Features, Value
from pydantic import BaseModel, ConfigDict

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
from lettuce_build.engine.runner import work_folder
from lettuce_build.sources.base import Source

ASSEMBLE_STAGE = "assemble"
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


def assemble(source: Source, finished: Dataset) -> Assembled:
    """``finished`` (the rows after the last stage) as samples by split."""
    if len(finished) == 0:  # `map` adds no column over zero rows
        return Assembled(splits=DatasetDict(), invalid=[], by_category={}, hallucinated=0, example=None)
    name = hashlib.sha256(
        json.dumps([finished._fingerprint, source.name, code_fingerprint()]).encode()
    ).hexdigest()[:32]
    work = work_folder(finished)
    where = arrow_column(finished, "split")
    splits = DatasetDict()
    invalid: list[FailureRow] = []
    for split in SPLITS:
        held = np.flatnonzero(pc.equal(where, split).to_numpy(zero_copy_only=False))
        if not len(held):
            continue
        # each split is made into a file of its own, so writing it streams from disk
        rows = finished.select(held, new_fingerprint=f"{name}-{split}")
        kept = work / f"assembled-{name}-{split}.arrow" if work else None
        if kept is not None and kept.exists():
            os.utime(kept)  # still in use (see builds/items.prune)
        made = rows.map(
            lambda batch: _samples(source, batch),
            batched=True,
            remove_columns=rows.column_names,
            features=Features({**FEATURES, _FAILURE: Value("string")}),
            new_fingerprint=f"assembled-{name}-{split}",
            cache_file_name=str(kept) if kept else None,
            load_from_cache_file=kept is not None,
        )
        failures: list[str | None] = made[_FAILURE][:]
        rejected = [FailureRow.model_validate_json(raw) for raw in failures if raw is not None]
        if rejected:  # else the split is its file as it is, not a selection of it
            made = made.select([i for i, raw in enumerate(failures) if raw is None])
        invalid += rejected
        splits[split] = made.remove_columns(_FAILURE)
    by_split: dict[str, list[int | None]] = {name: split["category"][:] for name, split in splits.items()}
    categories = [c for held in by_split.values() for c in held]
    labelled = next(
        ((splits[name], i) for name, held in by_split.items() for i, c in enumerate(held) if c is not None),
        None,
    )
    first = labelled or next(((split, 0) for split in splits.values() if len(split)), None)
    return Assembled(
        splits=splits,
        invalid=invalid,
        by_category=dict(
            Counter("(clean)" if c is None else CATEGORY_FEATURE.int2str(c) for c in categories)
        ),
        hallucinated=sum(c is not None for c in categories),
        example=None if first is None else row_to_sample(first[0][first[1]]),
    )


def _samples(source: Source, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
    rows = batch_rows(batch)
    out: dict[str, list[Any]] = {name: [] for name in [*FEATURES, _FAILURE]}
    for row in rows:
        sample = source.sample(row)
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
