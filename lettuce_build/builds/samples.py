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
from pathlib import Path
from typing import Any

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
    kept = work / f"assembled-{name}.arrow" if work else None
    if kept is not None and kept.exists():
        os.utime(kept)  # still in use (see builds/items.prune)
    made = finished.map(
        lambda batch: _samples(source, batch),
        batched=True,
        remove_columns=finished.column_names,
        features=Features({**FEATURES, _FAILURE: Value("string")}),
        new_fingerprint=f"assembled-{name}",
        cache_file_name=str(kept) if kept else None,
        load_from_cache_file=kept is not None,
    )
    failures: list[str | None] = made[_FAILURE][:]
    invalid = [FailureRow.model_validate_json(raw) for raw in failures if raw is not None]
    samples = made.select([i for i, raw in enumerate(failures) if raw is None], new_fingerprint=f"{name}-ok")
    samples = samples.remove_columns(_FAILURE, new_fingerprint=f"{name}-samples")
    splits: list[str] = samples["split"][:]
    categories: list[int | None] = samples["category"][:]
    by_split = DatasetDict(
        {
            split: _flat(
                samples.select([i for i, s in enumerate(splits) if s == split]), work, f"{name}-{split}"
            )
            for split in SPLITS
            if split in splits
        }
    )
    first = next((i for i, c in enumerate(categories) if c is not None), 0 if categories else None)
    return Assembled(
        splits=by_split,
        invalid=invalid,
        by_category=dict(
            Counter("(clean)" if c is None else CATEGORY_FEATURE.int2str(c) for c in categories)
        ),
        hallucinated=sum(c is not None for c in categories),
        example=None if first is None else row_to_sample(samples[first]),
    )


def _flat(split: Dataset, work: Path | None, name: str) -> Dataset:
    """A split as a file of its own in ``work`` (kept for a re-run), so writing it streams from
    disk instead of gathering the selected rows in memory."""
    if work is None:
        return split
    path = work / f"split-{name}.arrow"
    if path.exists():
        os.utime(path)
        return Dataset.from_file(str(path))
    return split.flatten_indices(cache_file_name=str(path), new_fingerprint=name)


def _samples(source: Source, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
    rows = [dict(zip(batch, values, strict=True)) for values in zip(*batch.values(), strict=True)]
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
