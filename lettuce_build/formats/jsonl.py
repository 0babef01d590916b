"""Our own schema, one row per line: every column of `FEATURES`, the category by name and the
metadata as JSON text, as the Hub's parquet holds them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lettuce_build.core.schema import COLUMNS, HallucinationSample, sample_to_row
from lettuce_build.formats import base


class JsonlFormat(base.JsonLinesFormat):
    name = "jsonl"
    summary = "our own schema, one row per line"

    def records_of(self, number: int, sample: HallucinationSample) -> list[dict[str, Any]]:
        return [{**sample_to_row(sample), "category": sample.category}]

    def read(self, path: Path) -> Iterator[base.Foreign]:
        for where, record in base.records(path):
            yield (
                base.Foreign(where, row=record)
                if isinstance(record, dict)
                else base.Foreign(where, problem=record)
            )

    def recognises(self, record: dict[str, Any]) -> bool:
        return all(column in record for column in COLUMNS) and isinstance(record.get("metadata"), str)
