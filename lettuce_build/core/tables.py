"""Reading input tables (JSONL, parquet, a Hub dataset) with errors that name the file, the line
and the column. The one JSONL reader of the project: `iter_jsonl` reports each bad line and goes
on (for audits), `read_jsonl` stops at the first one (for inputs); and its one JSONL writer,
`write_jsonl`, which replaces a file whole or not at all."""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from lettuce_build.core.errors import TableError

PARQUET_BATCH_ROWS = 1024


@dataclass(frozen=True, slots=True)
class JsonlLine:
    """One non-empty line: its row, or why it is not one (``reason`` a stable code)."""

    number: int
    row: dict[str, Any] | None = None
    reason: str | None = None
    message: str | None = None


def iter_jsonl(path: Path) -> Iterator[JsonlLine]:
    """Every non-empty line of a JSONL file, bad ones included (with a reason), lazily."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as err:
                yield JsonlLine(
                    number, reason="not_utf8", message=f"not valid UTF-8 ({err.reason} at byte {err.start})"
                )
                continue
            except json.JSONDecodeError as err:
                message = f"not one JSON object per line (truncated?): {err.msg} at column {err.colno}"
                yield JsonlLine(number, reason="malformed_json", message=message)
                continue
            if not isinstance(row, dict):
                yield JsonlLine(
                    number,
                    reason="not_an_object",
                    message=f"expected a JSON object, got {type(row).__name__}",
                )
                continue
            yield JsonlLine(number, row=row)


def iter_records(path: Path) -> Iterator[JsonlLine]:
    """Every record of a JSONL file (`iter_jsonl`) or of a JSON file holding an array of objects
    (or one object, or objects one per line), bad ones included with a reason; ``number`` counts
    records from 1."""
    if path.suffix != ".json":
        yield from iter_jsonl(path)
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        if err.msg == "Extra data":  # JSON lines in a .json file
            yield from iter_jsonl(path)
        else:
            yield JsonlLine(1, reason="not_json", message=f"not a JSON file: {err}")
        return
    except UnicodeDecodeError as err:
        yield JsonlLine(1, reason="not_json", message=f"not a JSON file: {err}")
        return
    for number, record in enumerate(data if isinstance(data, list) else [data], start=1):
        if isinstance(record, dict):
            yield JsonlLine(number, row=record)
        else:
            message = f"expected a JSON object, got {type(record).__name__}"
            yield JsonlLine(number, reason="not_an_object", message=message)


def _check_columns(where: str, row: dict[str, Any], required: Sequence[str]) -> None:
    missing = [c for c in required if c not in row]
    if missing:
        raise TableError(
            f"{where}: missing column(s) {missing}; it has {sorted(row)}; required: {list(required)}"
        )


#: told of each row skipped: (reason, where, what was wrong and what was expected)
Skip = Callable[[str, str, str], None]


def read_jsonl(
    path: Path, required: Sequence[str] = (), skip: Skip | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, row) per non-empty line (of a JSON array: per record). A malformed line or
    a missing column stops with its place; given ``skip``, it is skipped and told instead, unless
    it is the first row (a file whose first row lacks the columns is of another format, not one
    bad row)."""
    first = True
    for line in iter_records(path):
        where = f"{path}:{line.number}"
        if line.row is None:
            if skip is None:
                raise TableError(f"{where}: {line.message}")
            skip(str(line.reason), where, str(line.message))
            continue
        if skip is not None and not first and (missing := [c for c in required if c not in line.row]):
            skip("missing_column", where, f"lacks {missing}; required: {list(required)}")
            continue
        _check_columns(where, line.row, required)
        first = False
        yield line.number, line.row


def read_table(
    path: Path, required: Sequence[str] = (), skip: Skip | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a .jsonl/.json, .parquet or .csv file (a CSV row numbered by its line), checked
    for the required columns, read lazily; ``skip``: see `read_jsonl`."""
    if path.suffix == ".parquet":
        file = pq.ParquetFile(path)
        names = file.schema_arrow.names
        missing = [c for c in required if c not in names]
        if missing:
            raise TableError(f"{path}: missing column(s) {missing}; it has {names}")
        index = 0
        for batch in file.iter_batches(batch_size=PARQUET_BATCH_ROWS):
            for row in batch.to_pylist():
                yield index, row
                index += 1
    elif path.suffix in {".jsonl", ".json"}:
        yield from read_jsonl(path, required, skip)
    elif path.suffix == ".csv":
        yield from _read_csv(path, required)
    else:
        raise TableError(f"{path}: expected a .jsonl, .json, .parquet or .csv file")


def _read_csv(path: Path, required: Sequence[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """A CSV file's rows by their header (every value text; an empty cell is an empty string)."""
    try:
        with path.open(newline="", encoding="utf-8") as file:
            reader = csv.DictReader(file)
            names = reader.fieldnames or []
            missing = [c for c in required if c not in names]
            if missing:
                raise TableError(f"{path}: missing column(s) {missing}; it has {names}")
            for row in reader:
                yield reader.line_num, {name: value for name, value in row.items() if name is not None}
    except (UnicodeDecodeError, csv.Error) as err:
        raise TableError(f"{path}: not a readable UTF-8 CSV file ({err})") from err


#: suffixes that make a name a file's, never a Hub dataset's ("data/rows.jsonl")
_FILE_SUFFIXES = frozenset({".jsonl", ".json", ".parquet", ".csv", ".tsv", ".md", ".txt", ".arrow"})


def is_hub_id(source: str) -> bool:
    """``org/name`` that is not a local path: not a file name (by its suffix) and not under a
    folder that exists here (``data/rows`` with a ``data/`` beside it means that folder)."""
    path = Path(source)
    return (
        source.count("/") == 1
        and not source.startswith((".", "/", "~"))
        and path.suffix.lower() not in _FILE_SUFFIXES
        and not path.exists()
        and not path.parent.is_dir()
    )


def read_input(
    source: str | None,
    required: Sequence[str] = (),
    *,
    hub_id: str | None = None,
    hub_config: str | None = None,
    hub_splits: Sequence[str] | None = None,
    skip: Skip | None = None,
) -> Iterator[dict[str, Any]]:
    """Rows of a local .jsonl/.parquet file, else of a Hugging Face dataset (streamed, each row
    with its ``split``): ``source`` when it is a Hub id, else the source's own ``hub_id``."""
    if source is not None and Path(source).exists():
        for _, row in read_table(Path(source), required, skip):
            yield row
        return
    dataset_id = source or hub_id
    if dataset_id is None or not is_hub_id(dataset_id):
        raise TableError(f"{source}: no such file or folder (nor a Hugging Face dataset id, org/name)")
    from datasets import load_dataset

    try:
        loaded = load_dataset(dataset_id, hub_config, streaming=True)
        for split, rows in loaded.items():
            if hub_splits is not None and split not in hub_splits:
                continue
            for index, row in enumerate(rows):
                _check_columns(f"{dataset_id} ({split}) row {index}", row, required)
                yield dict(row, split=split)
    except (OSError, ConnectionError, ValueError) as err:  # offline, no such dataset, no access
        if isinstance(err, TableError):
            raise
        first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
        raise TableError(
            f"{dataset_id}: cannot read this Hugging Face dataset ({type(err).__name__}: {first}); "
            "offline, download it elsewhere and pass the local .jsonl or .parquet file as --input"
        ) from err


def values_at(column: pa.ChunkedArray | pa.Array, rows: np.ndarray) -> list[Any]:
    """``column``'s values at ``rows`` (in that order) as Python values, taken chunk by chunk:
    a chunked column's own `take` joins all its chunks into one array first (measured: 1.0 s and
    400 MB to take 10,000 rows of a million rows' failure column, for every batch read)."""
    if isinstance(column, pa.Array):
        return column.take(pa.array(rows, type=pa.int64())).to_pylist()
    starts = np.cumsum([0, *(len(chunk) for chunk in column.chunks)])
    which = np.searchsorted(starts, rows, side="right") - 1
    values: list[Any] = [None] * len(rows)
    for index in np.unique(which):
        mine = np.flatnonzero(which == index)
        local = pa.array(rows[mine] - starts[index], type=pa.int64())
        for position, value in zip(mine, column.chunk(int(index)).take(local).to_pylist(), strict=True):
            values[position] = value
    return values


@contextmanager
def _atomic(path: Path) -> Iterator[IO[str]]:
    """A text file written through a temporary one and renamed once the block is done, so a crash
    never leaves half a file (a block that fails leaves none)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", dir=path.parent, delete=False, encoding="utf-8", suffix=".tmp"
    ) as tmp:
        try:
            yield tmp
            tmp.flush()
            os.fsync(tmp.fileno())
        except BaseException:
            os.unlink(tmp.name)
            raise
    os.replace(tmp.name, path)


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file and rename, so a crash never leaves half a file."""
    with _atomic(path) as file:
        file.write(text)


def write_jsonl(path: Path, rows: Iterable[BaseModel | dict[str, Any]]) -> int:
    """One row per line (models as their JSON, dicts as JSON with text unescaped), written
    atomically, a row at a time (a million failure rows were a gigabyte of text at once);
    returns how many."""
    count = 0
    with _atomic(path) as file:
        for row in rows:
            file.write(
                row.model_dump_json() if isinstance(row, BaseModel) else json.dumps(row, ensure_ascii=False)
            )
            file.write("\n")
            count += 1
    return count
