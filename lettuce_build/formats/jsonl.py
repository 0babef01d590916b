"""Our own schema, one row per line: every column of `FEATURES`, the category by name and the
metadata as JSON text, as the Hub's parquet holds them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from lettuce_build.core.schema import COLUMNS, HallucinationSample, sample_to_row
from lettuce_build.formats import base


class JsonlFormat(base.ExportFormat):
    name = "jsonl"
    summary = "our own schema, one row per line"

    def write(self, samples: Iterable[HallucinationSample], out: Path) -> base.ExportCounts:
        counts = base.ExportCounts()
        with out.open("w", encoding="utf-8") as file:
            for sample in samples:
                file.write(base.json_line({**sample_to_row(sample), "category": sample.category}))
                counts.add(sample)
        return counts

    def read(self, path: Path) -> Iterator[base.Foreign]:
        for where, record in base.records(path):
            yield (
                base.Foreign(where, row=record)
                if isinstance(record, dict)
                else base.Foreign(where, problem=record)
            )

    def recognises(self, record: dict[str, Any]) -> bool:
        return all(column in record for column in COLUMNS) and isinstance(record.get("metadata"), str)
