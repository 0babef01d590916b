"""Datasets as the engine reads them: a column as Arrow, a `map` batch as rows, no rows at all,
keys that are not unique."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
from datasets import Dataset, Features, concatenate_datasets
from datasets.table import InMemoryTable

from lettuce_build.core.memory import pages_released


def arrow_column(dataset: Dataset, name: str) -> pa.ChunkedArray:
    """One column in Arrow, in the dataset's order: no Python object per row. A selection's
    rows are taken by Arrow in one call: `datasets` would gather them one by one, a Python int
    and a one-row slice per row (measured: 49 MB and 0.5 s for the key column of 75,000 rows)."""
    column = dataset.data.column(name)
    if dataset._indices is None:
        return column
    return column.take(dataset._indices.column(0))


def batch_rows(batch: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """A batch of `Dataset.map` or `Dataset.iter` (a list per column) as one dict per row."""
    return [dict(zip(batch, values, strict=True)) for values in zip(*batch.values(), strict=True)]


def dataset_rows(dataset: Dataset, batch_size: int = 1000) -> Iterator[dict[str, Any]]:
    """A dataset's rows as dicts, in order, read ``batch_size`` at a time."""
    for batch in dataset.iter(batch_size=batch_size):
        yield from batch_rows(batch)


def selected(dataset: Dataset, rows: np.ndarray, fingerprint: str) -> Dataset:
    """``dataset``'s ``rows``, in that order, as `Dataset.select` makes them: a contiguous run is a
    slice, anything else an index mapping. `select` turns the array into a Python list first (and
    looks for a run one row at a time): a million rows held about 40 MB of Python ints for a
    moment. Here Arrow makes the mapping from the array."""
    rows = np.asarray(rows, dtype=np.int64)
    if not len(rows) or (rows[-1] - rows[0] == len(rows) - 1 and bool(np.all(np.diff(rows) == 1))):
        start = int(rows[0]) if len(rows) else 0
        return dataset.select(range(start, start + len(rows)), new_fingerprint=fingerprint)
    if dataset.format["type"] is not None:  # a formatted dataset keeps its format through `select`
        return dataset.select(rows, new_fingerprint=fingerprint)
    mapping = pa.array(rows, type=pa.uint64())
    if dataset._indices is not None:  # a selection of a selection: composed, as `select` does
        mapping = dataset._indices.column(0).take(mapping)
    return Dataset(
        dataset.data,
        info=dataset.info.copy(),
        split=dataset.split,
        indices_table=InMemoryTable(pa.table({"indices": mapping})),
        fingerprint=fingerprint,
    )


def in_row_order(
    parts: list[Dataset], rows: list[np.ndarray], fingerprint: str
) -> tuple[Dataset, np.ndarray]:
    """``parts`` (each pass's finished items, at ``rows`` of the stage's input) joined in input
    order, and those rows sorted; named ``fingerprint`` and the rows' hash. One pass, or retries
    that finished nothing, are in order already: joined as they are (at a million items, sorting
    and selecting them took 45 MB for a moment, a build's peak)."""
    finished = rows[0] if len(rows) == 1 else np.concatenate(rows)
    joined = parts[0] if len(parts) == 1 else concatenate_datasets(parts)
    if len(finished) < 2 or bool(np.all(finished[1:] > finished[:-1])):
        order, in_order = None, finished
    else:
        order = np.argsort(finished, kind="stable")
        in_order = finished[order]
    del finished
    held = hashlib.sha256(in_order.data).hexdigest()[:16]  # the array hashed as it lies: no copy
    name = f"{fingerprint}-{held}"
    if order is None:
        return joined.select(range(len(joined)), new_fingerprint=name), in_order
    return selected(joined, order, name), in_order


def empty_dataset(features: Features) -> Dataset:
    """No rows, with ``features``' columns (which `map` over zero rows would not add)."""
    return Dataset.from_dict({name: [] for name in features}, features=features)


def duplicate_keys(dataset: Dataset) -> list[str]:
    """Keys that more than one item has. Each key is hashed a batch at a time and only the
    hashes are compared (8 bytes a key: a hash table of a million keys held 70 MB); the keys
    of a hash seen twice are then compared themselves, so a collision is never a duplicate.
    Which keys repeat does not depend on their order: they are read as they lie in their files."""
    keys, _ = _keys_in_file_order(dataset)
    hashes = _values(keys, hash, np.int64)
    ordered = np.sort(hashes)  # one copy; np.unique would make three
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    del ordered
    if not len(repeated):
        return []
    twice = np.flatnonzero(np.isin(hashes, repeated))
    found = Counter(keys.select(twice)["key"])
    return [key for key, count in found.items() if count > 1]


def per_key(dataset: Dataset, value: Callable[[str], Any], dtype: type) -> np.ndarray:
    """``value`` of each item's key, in order, read 10,000 keys at a time (never all of them as
    Python strings), the pages read handed back as it goes (a million keys' pages and those
    read around them: about 100 MB). A selection's keys are read in the order they lie in their
    files and put back in its order: read in its own order, 10,000 rows spread over a million
    map the pages around each, the whole key column at once (39 MB more, a build's peak)."""
    keys, order = _keys_in_file_order(dataset)
    found = _values(keys, value, dtype)
    if order is None:
        return found
    values = np.empty_like(found)
    values[order] = found
    return values


def _keys_in_file_order(dataset: Dataset) -> tuple[Dataset, np.ndarray | None]:
    """The key column, its rows in the order they lie in their files, and where each of them is
    in ``dataset`` (None: in the same place)."""
    keys = dataset.select_columns(["key"])
    if dataset._indices is None:
        return keys, None
    order = np.argsort(dataset._indices.column(0).to_numpy(), kind="stable")
    named = hashlib.sha256(f"{dataset._fingerprint}-in-file-order".encode()).hexdigest()[:32]
    return selected(keys, order, named), order  # (a fingerprint may be 64 characters at most)


def _values(keys: Dataset, value: Callable[[str], Any], dtype: type) -> np.ndarray:
    """``value`` of each key of ``keys`` (a dataset of one column, ``key``), in its order."""
    values: np.ndarray = np.empty(len(keys), dtype=dtype)
    start = 0
    with pages_released(keys):
        for batch in keys.iter(batch_size=10_000):
            values[start : start + len(batch["key"])] = [value(key) for key in batch["key"]]
            start += len(batch["key"])
    return values
