"""Datasets as the engine reads them: a column as Arrow, a `map` batch as rows, no rows at all."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from datasets import Dataset, Features


def arrow_column(dataset: Dataset, name: str) -> pa.ChunkedArray:
    """One column in Arrow: no Python object per row (a column's slice converts every value)."""
    return dataset.select_columns([name]).with_format("arrow")[:][name]


def batch_rows(batch: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """A batch of `Dataset.map` or `Dataset.iter` (a list per column) as one dict per row."""
    return [dict(zip(batch, values, strict=True)) for values in zip(*batch.values(), strict=True)]


def empty_dataset(features: Features) -> Dataset:
    """No rows, with ``features``' columns (which `map` over zero rows would not add)."""
    return Dataset.from_dict({name: [] for name in features}, features=features)
